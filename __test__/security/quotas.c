/*
 * The per-user quota attacker (issue 18, docs/security.md "Which per-user
 * kernel quotas a non-root provider's sandboxes can touch"): run inside a
 * real cordon sandbox of a uid-65534 provider by quotas.test.js, and run by
 * that provider itself, outside any sandbox, to check what is left to it.
 *
 *   hold QUOTA SECONDS   takes as much of QUOTA as the sandbox can get,
 *                        prints "RESULT <quota> held=<n> stopped=<why>",
 *                        then "HOLDING", and keeps it for SECONDS
 *   try QUOTA            one use of QUOTA as an ordinary program makes it:
 *                        prints "TOUCH ok[ <detail>]" or "TOUCH <error>"
 *
 * QUOTA: nproc (processes of the real uid), sigpending (queued realtime
 * signals), memlock (locked memory), keys (kernel keys of the uid), pipes
 * (fs.pipe-user-pages-soft pages), userns (user namespaces of the uid),
 * inotify (instances), mqueue (POSIX message-queue bytes).
 *
 * Compiled at test time: cc -static -O1 -o quotas quotas.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ATTEMPTS 100000
#define PIPE_BYTES (1 << 20)
#define PAGE 4096

/* One use of the quota; >= 0 on success. `n` makes names unique. */
typedef long (*take_fn)(long n);

/* The last child a use forked (nproc, userns): `try` ends it, so the
 * provider's pipes close when `try` exits. */
static pid_t last_child;

static long take_nproc(long n) {
    (void)n;
    pid_t pid = fork();
    if (pid == 0) {
        for (;;) pause();
    }
    if (pid > 0) last_child = pid;
    return pid;
}

static long take_sigpending(long n) {
    union sigval value = {.sival_int = (int)n};
    return sigqueue(getpid(), SIGRTMIN, value);
}

static long take_memlock(long n) {
    (void)n;
    void *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return -1;
    return mlock(page, PAGE);
}

static long take_key(long n) {
    char name[64];
    snprintf(name, sizeof name, "cordon-quota-%d-%ld", (int)getpid(), n);
    return syscall(SYS_add_key, "user", name, "x", 1, -2 /* KEY_SPEC_PROCESS_KEYRING */);
}

/* A pipe grown to 1 MiB (256 pages of the uid's pipe-user-pages count). */
static long take_pipe(long n) {
    (void)n;
    int fds[2];
    if (pipe(fds) < 0) return -1;
    if (fcntl(fds[0], F_SETPIPE_SZ, PIPE_BYTES) < 0) {
        int saved = errno;
        close(fds[0]);
        close(fds[1]);
        errno = saved;
        return -1;
    }
    return 0;
}

/* A user namespace held by a child that waits in it. */
static long take_userns(long n) {
    (void)n;
    int ready[2];
    if (pipe(ready) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char status = unshare(CLONE_NEWUSER) == 0 ? 0 : (char)errno;
        if (write(ready[1], &status, 1) != 1) _exit(1);
        if (status) _exit(1);
        for (;;) pause();
    }
    if (pid > 0) last_child = pid;
    char status = EIO;
    if (pid < 0 || read(ready[0], &status, 1) != 1) status = pid < 0 ? (char)errno : EIO;
    close(ready[0]);
    close(ready[1]);
    if (status) {
        if (pid > 0) waitpid(pid, NULL, 0);
        errno = status;
        return -1;
    }
    return 0;
}

static long take_inotify(long n) {
    (void)n;
    return inotify_init1(0);
}

static long take_mqueue(long n) {
    char name[64];
    snprintf(name, sizeof name, "/cordon-quota-%d-%ld", (int)getpid(), n);
    struct mq_attr attr = {.mq_maxmsg = 10, .mq_msgsize = 8192};
    long q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    if (q >= 0) mq_unlink(name);
    return q;
}

static const struct {
    const char *name;
    take_fn take;
} QUOTAS[] = {
    {"nproc", take_nproc},   {"sigpending", take_sigpending}, {"memlock", take_memlock},
    {"keys", take_key},      {"pipes", take_pipe},            {"userns", take_userns},
    {"inotify", take_inotify}, {"mqueue", take_mqueue},
};

static take_fn lookup(const char *name) {
    for (size_t i = 0; i < sizeof QUOTAS / sizeof QUOTAS[0]; i++)
        if (!strcmp(QUOTAS[i].name, name)) return QUOTAS[i].take;
    return NULL;
}

/* Realtime signals stay queued only while blocked. */
static void block_sigrtmin(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &set, NULL);
}

static int hold(const char *name, take_fn take, int seconds) {
    block_sigrtmin();
    long held = 0;
    while (held < MAX_ATTEMPTS && take(held) >= 0) held++;
    printf("RESULT %s held=%ld stopped=%s\n", name, held, held == MAX_ATTEMPTS ? "attempts" : strerror(errno));
    printf("HOLDING\n");
    fflush(stdout);
    sleep(seconds);
    return 0;
}

/* The provider's queued-signal count (its uid's, as /proc shows it). */
static void sigq(char *out, size_t size) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    snprintf(out, size, "SigQ=?");
    while (status && fgets(line, sizeof line, status)) {
        if (!strncmp(line, "SigQ:", 5)) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, size, "SigQ=%s", line + 5 + strspn(line + 5, " \t"));
        }
    }
    if (status) fclose(status);
}

static int try(const char *name, take_fn take) {
    block_sigrtmin();
    char detail[128] = "";
    if (!strcmp(name, "sigpending")) sigq(detail, sizeof detail);
    long rc = take(0);
    /* A POSIX timer needs a queued-signal slot of its own, preallocated. */
    timer_t timer;
    struct sigevent event = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
    if (rc >= 0 && !strcmp(name, "sigpending")) rc = timer_create(CLOCK_MONOTONIC, &event, &timer);
    if (last_child > 0) {
        kill(last_child, SIGKILL);
        waitpid(last_child, NULL, 0);
    }
    printf("TOUCH %s%s%s\n", rc >= 0 ? "ok" : strerror(errno), detail[0] ? " " : "", detail);
    return 0;
}

int main(int argc, char **argv) {
    take_fn take = argc >= 3 ? lookup(argv[2]) : NULL;
    if (take && argc == 4 && !strcmp(argv[1], "hold")) return hold(argv[2], take, atoi(argv[3]));
    if (take && argc == 3 && !strcmp(argv[1], "try")) return try(argv[2], take);
    fprintf(stderr, "usage: quotas hold QUOTA SECONDS | quotas try QUOTA\n");
    return 2;
}
