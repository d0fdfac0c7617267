/*
 * The identity attacker (issue 18 A1): run inside a real cordon sandbox by
 * identity.test.js. Same convention as probe.c:
 *     RESULT <attack> <blocked|open> <detail>
 *
 *   whoami                 prints the host-relevant ids of the sandbox
 *                          (Uid/Gid/Groups lines of /proc/self/status),
 *                          then lives one second (to be observed)
 *   inotify-instances SECONDS  creates inotify instances until refused,
 *                          prints HOLDING, holds them for SECONDS. "open" =
 *                          refused by the per-user count (EMFILE before the
 *                          descriptor limit).
 *   mqueue-fill SECONDS    creates POSIX message queues until refused,
 *                          prints HOLDING, holds them. "open" = refused with
 *                          EMFILE (the uid's RLIMIT_MSGQUEUE bytes).
 *   mqueue-try             one queue, as the provider does it: prints
 *                          "MQ ok" or "MQ <error>" (run outside a sandbox)
 *   epoll-watches SECONDS  takes the whole fs.epoll.max_user_watches of
 *                          the sandbox's uid, prints HOLDING, holds it for
 *                          SECONDS. "open" = the uid's quota is exhausted.
 *
 * The epoll attack: one eventfd dup2'd to N numbers (each (file, fd) pair
 * is a watch of its own), each added to N epoll instances: N^2 watches from
 * 2N descriptors. The test raises openFiles so that one process reaches
 * the quota (sqrt(fs.epoll.max_user_watches) ~ 2400 here). The outside
 * round nested epoll instances to need fewer descriptors; nesting makes the
 * kernel check wakeup paths on every add, which costs more than the quota
 * here, so this probe does not.
 *
 * Compiled at test time: cc -static -O1 -o identity identity.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <unistd.h>

#define FIRST_DUP 64

static int whoami(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[512];
    if (!f) return 1;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Uid:", 4) || !strncmp(line, "Gid:", 4) || !strncmp(line, "Groups:", 7))
            printf("ID %s", line);
    }
    fclose(f);
    fflush(stdout);
    /* Alive long enough for the launcher to observe it from outside. */
    sleep(1);
    return 0;
}

static int epoll_watches(int seconds) {
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    /* Half the descriptors are numbers of one eventfd, half epoll instances. */
    int half = (int)(nofile.rlim_cur / 2) - 16;
    int ev = eventfd(0, 0);
    if (ev < 0 || half < 8) {
        printf("RESULT epoll-watches blocked setup: %s nofile=%ld\n", strerror(errno), (long)nofile.rlim_cur);
        return 0;
    }
    for (int i = 0; i < half; i++) dup2(ev, FIRST_DUP + i);
    long watches = 0;
    int exhausted = 0;
    const char *stop = "descriptor limit";
    for (int n = 0; n < half && !exhausted; n++) {
        int e = epoll_create1(0);
        if (e < 0) {
            stop = strerror(errno);
            break;
        }
        struct epoll_event event = {.events = EPOLLIN};
        for (int i = 0; i < half; i++) {
            if (epoll_ctl(e, EPOLL_CTL_ADD, FIRST_DUP + i, &event) < 0) {
                exhausted = errno == ENOSPC;
                stop = strerror(errno);
                break;
            }
            watches++;
        }
    }
    printf("RESULT epoll-watches %s watches=%ld stopped=%s\n", exhausted ? "open" : "blocked", watches, stop);
    printf("HOLDING\n");
    fflush(stdout);
    sleep(seconds);
    return 0;
}

static int inotify_instances(int seconds) {
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    long made = 0;
    const char *stop = "limit";
    for (;;) {
        int fd = inotify_init1(0);
        if (fd < 0) {
            stop = strerror(errno);
            break;
        }
        made++;
    }
    /* EMFILE with descriptors to spare: the per-user instance count. */
    int by_user = errno == EMFILE && made + 8 < (long)nofile.rlim_cur;
    printf("RESULT inotify-instances %s instances=%ld nofile=%ld stopped=%s\n", by_user ? "open" : "blocked", made,
           (long)nofile.rlim_cur, stop);
    printf("HOLDING\n");
    fflush(stdout);
    sleep(seconds);
    return 0;
}

static int mqueue_open(int n) {
    char name[64];
    snprintf(name, sizeof name, "/cordon-identity-%d-%d", (int)getpid(), n);
    struct mq_attr attr = {.mq_maxmsg = 10, .mq_msgsize = 8192};
    int q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    if (q >= 0) mq_unlink(name);
    return q;
}

static int mqueue_fill(int seconds) {
    long made = 0;
    while (mqueue_open((int)made) >= 0) made++;
    int by_quota = errno == EMFILE;
    printf("RESULT mqueue-fill %s queues=%ld stopped=%s\n", by_quota ? "open" : "blocked", made, strerror(errno));
    printf("HOLDING\n");
    fflush(stdout);
    sleep(seconds);
    return 0;
}

static int mqueue_try(void) {
    int q = mqueue_open(0);
    printf("MQ %s\n", q >= 0 ? "ok" : strerror(errno));
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "whoami")) return whoami();
    if (argc == 3 && !strcmp(argv[1], "epoll-watches")) return epoll_watches(atoi(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "mqueue-fill")) return mqueue_fill(atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "mqueue-try")) return mqueue_try();
    if (argc == 3 && !strcmp(argv[1], "inotify-instances")) return inotify_instances(atoi(argv[2]));
    fprintf(stderr, "usage: identity whoami | epoll-watches SECONDS | inotify-instances SECONDS | mqueue-fill SECONDS | mqueue-try\n");
    return 2;
}
