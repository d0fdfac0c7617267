'use strict';
// Finding R7b-3 (README.md). SIGKILL a uid-65534 provider d ms after its session holder
// appears in /proc during acquire(), then let a fresh provider recover() and acquire()+end()
// the same session. Broken if a holder (its cmdline names our sessions root) or a directory
// under root/ is left afterwards. Usage: node kill-during-acquire.js [d1,d2,...] [holder|go]
// ("go": d ms after the provider calls acquire(); "bwrap": d ms after its bwrap appears). Exit 1 = reproduced; leaked holders are
// killed by pid after they are reported.
const L = require('./lib');
const fsn = require('node:fs');
const delays = (process.argv[2] || '30,32,34,36,38,40,42,44,46,48,30,32,34,36,38,40,42,44,46,48').split(',').map(Number);
const mode = process.argv[3] || 'holder';
// A uid-65534 provider without a home claims in its sessions root (owner-claims.js, sess5).
const claimsDirOf = (dir) => dir + '/root/.owner-claims';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  let broken = 0;
  for (const d of delays) {
    const dir = L.scratch();
    const child = L.start(dir, L.ACQUIRE_AND_HANG);
    // wait for the provider to reach acquire()
    while (!fsn.existsSync(dir + '/go')) { if (child.exitCode !== null) break; await sleep(5); }
    if (mode === 'holder') {
      // kill d ms after the holder process appears (busy poll of /proc)
      const until = Date.now() + 10000;
      while (L.withTag(dir + '/root').length === 0 && Date.now() < until) { /* spin */ }
      const t = Date.now(); while (Date.now() - t < d) { /* spin */ }
    } else if (mode === 'bwrap') {
      // kill d ms after the session's bwrap appears
      const until = Date.now() + 10000;
      const agent = L.prepare().agent;
      while (!L.withTag(agent).some((pid) => L.cmdline(pid).startsWith('/usr/bin/bwrap')) && Date.now() < until) { /* spin */ }
      const t = Date.now(); while (Date.now() - t < d) { /* spin */ }
    } else await sleep(d);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    await sleep(300);
    const holdersAfterKill = L.withTag(dir + '/root');
    const r = L.run(dir, L.RECOVER_AND_REACQUIRE);
    await sleep(500);
    const holders = L.withTag(dir + '/root');
    // Any process still naming this run's agent binary (holder, bwrap, agent) once both providers are gone is leaked.
    const leaked = L.withTag(L.prepare().agent).map((pid) => pid + ' ' + L.cmdline(pid));
    const leftDirs = fsn.readdirSync(dir + '/root').filter((n) => n !== '.owner-claims');
    const claimsDir = claimsDirOf(dir);
    let claims = [];
    try { claims = fsn.readdirSync(claimsDir).filter((f) => { try { return fsn.readFileSync(claimsDir + '/' + f, 'utf8').includes(dir); } catch { return false; } }); } catch { /* none */ }
    const bad = holders.length + leftDirs.length + leaked.length > 0; // a stale claim alone is documented ("Orphans")
    if (bad) broken++;
    for (const pid of [...holders, ...leaked.map((l) => l.split(' ')[0])]) { try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone */ } } // clean up what leaked
    setTimeout(() => fsn.rmSync(dir, { recursive: true, force: true }), 200);
    console.log(JSON.stringify({ delayMs: d, holdersAfterKill, second: r.lines, leaked, status: r.status, holders, leftDirs, claims, broken: bad }).slice(0, 700));
  }
  console.log(broken ? `REPRODUCED in ${broken} of ${delays.length}` : 'not reproduced');
  process.exitCode = broken ? 1 : 0;
})();
