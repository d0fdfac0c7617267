'use strict';
// A non-root provider's session holder (`cordon-exec-agent session-holder`, the provider's uid) is left running
// after end(), endAll() and the provider's exit, when a command made many inodes in the sandbox's /tmp
// (unbounded in count without a cgroup: docs/security.md › tmpfs inodes): the namespace's teardown then
// outlasts the stop ladder, the receipt says containmentConfirmed: false, and the holder is never killed.
// Each scenario runs one session in its own provider process (uid 65534 via setpriv, from the package copy
// R12_PKG=/tmp/r12pkg: cp the package without target/ but with target/release/{cordon,cordon-*}, chmod -R a+rX);
// the parent (root) lists session-holder processes 3 s after that provider exited, then SIGKILLs what it found.
// Control: 'plain' (exec true, end). Probe: 'tmp-inodes' (12 s of empty files in /tmp, end).
// Usage (root): node nonroot-holder-leak.js [scenario…]   (default: every scenario; R12_ROOT=1: root provider;
// R12_MEM=2147483648: the session policy's memoryBytes — with a root provider and 2 GiB the same probe leaves the
// workspace tmpfs mounted on the host and its owner claim, both removed by this script's cleanup)
const { spawnSync, execFileSync } = require('node:child_process');
const path = require('node:path');
const shmem = () => Number(require('node:fs').readFileSync('/proc/meminfo', 'utf8').match(/Shmem:\s+(\d+)/)[1]);
// only this package copy's holders (another job on the machine may run its own uid-65534 holders: never count or kill those)
const AGENT = path.join(process.env.R12_PKG || '/tmp/r12pkg', 'target/release/cordon-exec-agent');
const holders = () => { if (process.env.R12_ROOT) return []; try { return execFileSync('pgrep', ['-u', '65534', '-f', `^${AGENT} session-holder`]).toString().trim().split('\n').filter(Boolean); } catch { return []; } };
if (process.argv[2] === 'child') {
  const { withManager } = require('./h.js');
  const scen = process.argv[3];
  const { workspaceWrite } = require('../../../..');
  const w = workspaceWrite();
  const opts = process.env.R12_MEM ? { policy: { ...w, resources: { ...(w.resources || {}), memoryBytes: Number(process.env.R12_MEM) } } } : {};
  withManager(opts, async (sessions) => {
    const s = await sessions.acquire({ tenant: 't', conversation: scen }, { tenant: 't' });
    if (scen === 'fill-tmp') await s.exec({ shell: 'bash', script: 'dd if=/dev/zero of=/tmp/fill bs=1M 2>/dev/null; true' }, { timeoutMs: 60000 });
    if (scen === 'fill-ws') await s.exec({ shell: 'bash', script: 'dd if=/dev/zero of=/workspace/fill bs=1M 2>/dev/null; true' }, { timeoutMs: 60000 });
    if (scen === 'fill-shm') await s.exec({ shell: 'bash', script: 'dd if=/dev/zero of=/dev/shm/fill bs=1M 2>/dev/null; true' }, { timeoutMs: 60000 });
    if (scen === 'fill-three') await s.exec({ shell: 'bash', script: 'for d in /workspace /tmp /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M 2>/dev/null; done; true' }, { timeoutMs: 60000 });
    if (scen === 'ws-then-tmp-inodes') await s.exec({ shell: 'bash', script: 'dd if=/dev/zero of=/workspace/fill bs=1M count=100 2>/dev/null; true' }, { timeoutMs: 60000 });
    if (scen.startsWith('tmp-inodes') || scen === 'ws-then-tmp-inodes') {
      // as many empty files in /tmp as 12 s allow (short names), then end()
      const r = await s.exec(['timeout', '12', 'python3', '-c', "import os\nn=0\ntry:\n  while True:\n    os.close(os.open('/tmp/%d' % n, os.O_CREAT|os.O_WRONLY)); n+=1\nexcept BaseException as e: pass\nfinally: print(n)"], { timeoutMs: 30000 });
      console.log(`  ${scen}: 12 s of file creation in /tmp (exit ${r.exitCode}, signal ${r.signal})`);
    }
    if (scen === 'tmp-negative-dentries') {
      const r = await s.exec(['timeout', '12', 'python3', '-c', "import os\nn=0\nwhile True:\n  try: os.stat('/tmp/%d' % n)\n  except OSError: pass\n  n+=1"], { timeoutMs: 30000 });
      console.log(`  ${scen}: 12 s of stat() of missing names in /tmp (exit ${r.exitCode}, signal ${r.signal})`);
    }
    if (scen === 'tmp-hardlinks') {
      const r = await s.exec(['timeout', '12', 'python3', '-c', "import os\nos.close(os.open('/tmp/f', os.O_CREAT|os.O_WRONLY))\nn=0\nwhile True:\n  os.link('/tmp/f', '/tmp/%d' % n); n+=1"], { timeoutMs: 30000 });
      console.log(`  ${scen}: 12 s of hard links in /tmp (exit ${r.exitCode}, signal ${r.signal})`);
    }
    const m = /^tmp-files-(\d+)$/.exec(scen);
    if (m) {
      const r = await s.exec(['python3', '-c', `import os\nfor n in range(${m[1]}): os.close(os.open('/tmp/%d' % n, os.O_CREAT|os.O_WRONLY))\nprint(n + 1)`], { timeoutMs: 60000 });
      console.log(`  ${scen}: ${r.stdout.trim()} files in /tmp (exit ${r.exitCode}, signal ${r.signal}, ${Math.round(r.durationMs)} ms)`);
    }
    if (scen === 'write') await s.writeFile('a.txt', 'x');
    await s.exec(['true']);
    const t = Date.now();
    const r = await s.end();
    console.log(`  ${scen}: end() took ${Date.now() - t} ms; endReason ${r.endReason}, containmentConfirmed ${r.sandbox?.receipt?.stop?.containmentConfirmed}`);
  }).catch((e) => { console.error(e); process.exitCode = 1; });
} else {
  const pkg = process.env.R12_PKG || '/tmp/r12pkg';
  const me = path.join(pkg, '__test__/security/findings/round12', path.basename(__filename));
  const before = holders();
  const leaked = {};
  for (const scen of (process.argv[2] ? process.argv.slice(2) : ['plain', 'write', 'fill-three', 'tmp-inodes', 'ws-then-tmp-inodes'])) {
    const h0 = holders();
    const claims0 = (() => { try { return require('node:fs').readdirSync('/run/cordon-session-owners').length; } catch { return 0; } })();
    const r = process.env.R12_ROOT ? spawnSync(process.execPath, [__filename, 'child', scen], { stdio: ['ignore', 'pipe', 'inherit'], timeout: 120000, env: process.env }) : spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, me, 'child', scen], { cwd: '/tmp', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120000 });
    process.stdout.write(r.stdout);
    spawnSync('sleep', ['3']);
    const h1 = holders().filter((p) => !h0.includes(p));
    for (const p of h1) {
      let m = ''; try { m = require('node:fs').readFileSync(`/proc/${p}/mountinfo`, 'utf8').split('\n').filter((l) => / - tmpfs /.test(l) && /mode=700/.test(l)).join(' | '); } catch (e) { m = e.code; }
      console.log(`  holder ${p}: workspace tmpfs in its mount namespace: ${m || 'none found'}`);
    }
    console.log(`  Shmem now ${shmem()} kB; root claims in /run/cordon-session-owners ${claims0} → ${(() => { try { return require('node:fs').readdirSync('/run/cordon-session-owners').length; } catch { return 0; } })()}; tmpfs mounts named r12- left: ${require('node:fs').readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes('/r12-')).length}`);
    const mleft = require('node:fs').readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes('/r12-')).length;
    const cl = (() => { try { return require('node:fs').readdirSync('/run/cordon-session-owners').length; } catch { return 0; } })() - claims0;
    leaked[scen] = h1.length + mleft + Math.max(0, cl);
    console.log(`${scen}: session-holder processes left after the provider exited: ${h1.length} ${h1.join(' ')}`);
  }
  const all = holders().filter((p) => !before.includes(p));
  console.log(Object.values(leaked).some((n) => n) ? `FINDING: ${process.env.R12_ROOT ? 'a root provider leaves the workspace mounted and its claim' : 'a uid-65534 provider leaves its session holder running'} after end() (holders + mounts + claims per scenario): ${JSON.stringify(leaked)}` : 'held');
  for (const p of all) try { process.kill(Number(p), 'SIGKILL'); } catch {}
  // root provider (R12_ROOT=1): a workspace kept mounted and its owner claim, left by an unconfirmed containment
  const fs = require('node:fs');
  for (const l of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const mp = l.split(' ')[4];
    if (mp && /^\/tmp\/r12-[^/]+\/sessions\//.test(mp)) { spawnSync('umount', [mp]); console.log(`cleanup: unmounted ${mp}`); fs.rmSync(mp.split('/').slice(0, 3).join('/'), { recursive: true, force: true }); }
  }
  try {
    for (const n of fs.readdirSync('/run/cordon-session-owners')) {
      const f = path.join('/run/cordon-session-owners', n);
      try { if (/"\/tmp\/r12-/.test(fs.readFileSync(f, 'utf8'))) { fs.rmSync(f); console.log(`cleanup: removed claim ${n}`); } } catch {}
    }
  } catch {}
}
