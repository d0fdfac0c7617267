'use strict';
// R12-2 re-test (non-root provider: no cgroup): which kind of object in the sandbox's /tmp makes the namespace's
// teardown slowest per object, and does any reach the fix's 30 s wait within a bounded fill?
// Kinds: links (hard links), files (empty), longnames (empty, 250-byte names), xattr (empty + a user xattr),
// symlong (symlinks with 200-byte targets), deep (a chain of nested directories).
// Each: P processes fill for T s (a C program compiled on the host, sent on fd 3); teardown = wait() - fill time.
// Usage (uid 65534 from a world-readable copy): node teardown-kinds.js [P=2] [T=5] [kinds...]
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path'); const { execFileSync } = require('node:child_process');
const { spawnIsolated, workspaceWrite } = require(process.env.R13_PKG || '../../../..');
const P = Number(process.argv[2] || 2), T = Number(process.argv[3] || 5);
const kinds = process.argv.slice(4).length ? process.argv.slice(4) : ['links', 'files', 'longnames', 'xattr', 'symlong', 'deep'];
const src = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
int main(int c,char**v){int P=atoi(v[1]),T=atoi(v[2]);const char*k=v[3];close(open("/tmp/f",O_CREAT|O_WRONLY,0644));
char pad[251];memset(pad,'n',250);pad[250]=0;char tgt[201];memset(tgt,'t',200);tgt[200]=0;
for(int i=0;i<P;i++)if(!fork()){char d[64],p[512];snprintf(d,64,"/tmp/d%d",i);mkdir(d,0755);if(chdir(d))_exit(2);long n=0;time_t e=time(0)+T;
for(;;){int r;
 if(!strcmp(k,"links")){snprintf(p,512,"%ld",n);r=link("/tmp/f",p);}
 else if(!strcmp(k,"files")){snprintf(p,512,"%ld",n);r=mknod(p,S_IFREG|0644,0);}
 else if(!strcmp(k,"longnames")){snprintf(p,512,"%ld%s",n,pad);p[250]=0;r=mknod(p,S_IFREG|0644,0);}
 else if(!strcmp(k,"xattr")){snprintf(p,512,"%ld",n);r=mknod(p,S_IFREG|0644,0);if(!r)r=setxattr(p,"user.a",pad,200,0);}
 else if(!strcmp(k,"symlong")){snprintf(p,512,"%ld",n);r=symlink(tgt,p);}
 else {r=mkdir("a",0755);if(!r)r=chdir("a");}
 if(r){perror(k);break;}n++;if(!(n&1023)&&time(0)>=e)break;}
printf("child %d: %ld objects\\n",i,n);fflush(stdout);_exit(0);}
while(wait(0)>0);return 0;}`;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-td-')); fs.writeFileSync(tmp + '/l.c', src);
execFileSync('gcc', ['-O2', '-o', tmp + '/l', tmp + '/l.c']); const bin = fs.readFileSync(tmp + '/l'); fs.rmSync(tmp, { recursive: true, force: true });
const run = async (argv, input) => {
  const t = Date.now(); const ex = spawnIsolated(argv, { policy: workspaceWrite() });
  ex.protocol.end(input); ex.protocol.resume(); let err = ''; ex.stderr.on('data', (d) => { err += d; });
  const r = await ex.wait().catch((e) => ({ err: e.code })); return { r, ms: Date.now() - t, err };
};
(async () => {
  const c = await run(['/bin/true'], Buffer.alloc(0));
  console.log(`control: containmentConfirmed ${c.r.receipt?.stop?.containmentConfirmed}, wait() ${c.ms} ms`);
  let worst = null;
  for (const k of kinds) {
    const x = await run(['/bin/sh', '-c', `head -c ${bin.length} <&3 > /tmp/l && chmod +x /tmp/l && exec /tmp/l ${P} ${T} ${k} >&2`], bin);
    const n = [...x.err.matchAll(/(\d+) objects/g)].reduce((a, m) => a + Number(m[1]), 0);
    const td = x.ms - T * 1000; const per = n ? (td * 1000 / n) : 0;
    console.log(`${k}: ${n} objects in ${T} s, wait() ${x.ms} ms → teardown ≈ ${td} ms (${per.toFixed(2)} µs/object; 30 s needs ≈ ${per ? Math.round(30e6 / per / 1e6 * 10) / 10 : '?'} M), containmentConfirmed ${x.r.receipt?.stop?.containmentConfirmed} ${x.err.split('\n').filter((l) => !/objects/.test(l)).join(' ').slice(0, 120)}`);
    if (x.r.receipt?.stop?.containmentConfirmed === false) worst = k;
  }
  console.log(c.r.receipt?.stop?.containmentConfirmed !== true ? 'control failed' : worst ? `FINDING: ${worst} made the containment unconfirmed past the 30 s wait` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
