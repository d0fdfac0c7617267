'use strict';
// A root provider SIGKILLed d ms after it calls acquire(), then a fresh root provider runs
// recover() and acquire()+end(). Broken if a tmpfs naming our root is still mounted, a directory
// is left under root/, or a process still names this checkout's exec agent once both are gone.
// Usage: node kill-root-during-acquire.js [d1,d2,...] [go|bwrap] (d ms after acquire() / after bwrap appears). Exit 1 = reproduced.
const L = require('./lib');
const fsn = require('node:fs');
const path = require('node:path');
const agent = path.join(require(path.join(L.ROOT, 'lib/platform-package')).cargoTargetDir(), 'release', 'cordon-exec-agent');
const delays = (process.argv[2] || '0,10,20,30,40,50,60,70,80,90,100,120,140,160').split(',').map(Number);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mounts = (dir) => fsn.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(dir));
(async () => {
  let broken = 0;
  for (const d of delays) {
    const dir = L.scratch(false);
    const child = L.start(dir, L.ACQUIRE_AND_HANG, { asNobody: false });
    while (!fsn.existsSync(dir + '/go')) { if (child.exitCode !== null) break; await sleep(2); }
    if (process.argv[3] === 'bwrap') {
      const until = Date.now() + 10000;
      while (!L.withTag(agent).some((pid) => L.cmdline(pid).startsWith('/usr/bin/bwrap')) && Date.now() < until) { /* spin */ }
    }
    const t = Date.now(); while (Date.now() - t < d) { /* spin */ }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    await sleep(300);
    const r = L.run(dir, L.RECOVER_AND_REACQUIRE, { asNobody: false });
    await sleep(500);
    const leaked = L.withTag(agent).map((pid) => pid + ' ' + L.cmdline(pid));
    const leftMounts = mounts(dir);
    const leftDirs = fsn.readdirSync(dir + '/root');
    const bad = leaked.length + leftMounts.length + leftDirs.length > 0;
    if (bad) broken++;
    console.log(JSON.stringify({ delayMs: d, second: r.lines, status: r.status, leaked, leftMounts, leftDirs, broken: bad }).slice(0, 700));
    for (const pid of leaked.map((l) => l.split(' ')[0])) { try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone */ } }
    if (leftMounts.length === 0) setTimeout(() => fsn.rmSync(dir, { recursive: true, force: true }), 200);
  }
  console.log(broken ? `REPRODUCED in ${broken} of ${delays.length}` : 'not reproduced');
  process.exitCode = broken ? 1 : 0;
})();
