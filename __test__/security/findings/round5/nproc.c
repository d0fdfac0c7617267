// Round 5: how many processes can one sandbox of a non-root provider hold?
// (docs: bounded by RLIMIT_NPROC = policy processes + 512 without a cgroup)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
  int n = 0;
  for (; n < 5000; n++) {
    pid_t p = fork();
    if (p == 0) { pause(); _exit(0); }
    if (p < 0) { fprintf(stderr, "fork %d failed: %s\n", n, strerror(errno)); break; }
  }
  fprintf(stderr, "HELD %d\n", n);
  pause();
  return 0;
}
