// R8-4 (README.md): a process whose thread-group leader has exited (SYS_exit, not
// exit_group) while another thread keeps running. /proc/<tgid>/status then says
// "State: Z (zombie)", which uid_sweep.rs's is_live_process_of() takes for a dead process,
// so kill_uid() never signals it. The live thread appends a line to argv[1] every 100 ms.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *beat_file;

static void *beat(void *arg) {
  (void)arg;
  for (unsigned long n = 0;; n++) {
    FILE *f = fopen(beat_file, "a");
    if (f) {
      fprintf(f, "%lu\n", n);
      fclose(f);
    }
    usleep(100000);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  beat_file = argv[1];
  pthread_t t;
  if (pthread_create(&t, NULL, beat, NULL) != 0) return 3;
  usleep(200000);
  syscall(SYS_exit, 0); // the leader alone: the thread group lives on
  return 0;
}
