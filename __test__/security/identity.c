/*
 * The identity attacker (issue 18 A1): run inside a real cordon sandbox by
 * identity.test.js. Same convention as probe.c:
 *     RESULT <attack> <blocked|open> <detail>
 *
 *   whoami                 prints the host-relevant ids of the sandbox
 *                          (Uid/Gid/Groups lines of /proc/self/status),
 *                          then lives one second (to be observed)
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
#include <sys/epoll.h>
#include <sys/eventfd.h>
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

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "whoami")) return whoami();
    if (argc == 3 && !strcmp(argv[1], "epoll-watches")) return epoll_watches(atoi(argv[2]));
    fprintf(stderr, "usage: identity whoami | epoll-watches SECONDS\n");
    return 2;
}
