// Round 5: hold this uid's whole fs.pipe-user-pages-soft (16384 pages by
// default): 12 processes x 120 pipes x 16 pages, then sleep.
#include <stdio.h>
#include <unistd.h>
int main(void) {
  for (int p = 0; p < 12; p++) {
    if (fork() == 0) {
      int fds[2], n = 0;
      for (int i = 0; i < 120; i++) if (pipe(fds) == 0) n++;
      fprintf(stderr, "child %d: %d pipes\n", p, n);
      sleep(30);
      return 0;
    }
  }
  fprintf(stderr, "READY\n");
  sleep(30);
  return 0;
}
