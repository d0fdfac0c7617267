'use strict';
// Round 13w, R12-2's wait (crates/launcher/src/run/stop_ladder.rs namespace_exiting / stat_says_exiting): a
// process is judged "exiting" by /proc/<pid>/stat's flags, which are the thread-group LEADER's. A process whose main
// thread exited (pthread_exit) while another thread lives shows PF_EXITING (state Z) there, so the walk counts it as
// exiting though a thread of it is alive. Docs/receipts.md and the code: "one process not exiting (a frozen one, which
// SIGKILL does not end) ends the wait at once". Probe: such a process, frozen (cgroup v1 freezer, as
// receipts-attest.test.js does), then stop(): how long does wait() take? Control: a plain frozen single-threaded
// process, same stop timings. (root; needs /sys/fs/cgroup/freezer; thaws and removes its freezer cgroup.)
const fs = require('node:fs');
const path = require('node:path');
const cordon = require('../../../..');
const FREEZER = '/sys/fs/cgroup/freezer';
const delay = (ms) => new Promise((r) => setTimeout(r, ms));
function descendants(pid) {
  const children = new Map();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push({ pid: Number(e), comm: stat.slice(stat.indexOf('(') + 1, close), state: stat.slice(close + 2).split(' ')[0] });
    } catch { /* gone */ }
  }
  const found = []; const q = [pid];
  while (q.length) for (const c of children.get(q.shift()) ?? []) { found.push(c); q.push(c.pid); }
  return found;
}
async function scenario(label, script) {
  const stop = { graceMs: 100, forceMs: 300 };
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', script], { policy: cordon.readOnly(), stop });
  const dir = path.join(FREEZER, `r13w-${process.pid}-${label}`);
  let frozen = false;
  try {
    let target;
    for (let i = 0; i < 300 && !target; i++) { await delay(20); target = descendants(ex.pid).find((p) => p.comm === 'python3' && fs.existsSync(`/proc/${p.pid}/task`) && fs.readdirSync(`/proc/${p.pid}/task`).length >= (label === 'probe' ? 1 : 1) && (label !== 'probe' || p.state === 'Z')); }
    if (!target) throw new Error(`${label}: program not found`);
    await delay(200);
    const tids = fs.readdirSync(`/proc/${target.pid}/task`);
    const states = tids.map((t) => { try { return `${t}:${fs.readFileSync(`/proc/${target.pid}/task/${t}/stat`, 'utf8').split(') ')[1].split(' ')[0]}`; } catch { return `${t}:gone`; } });
    fs.mkdirSync(dir);
    for (const t of tids) { try { fs.writeFileSync(path.join(dir, 'tasks'), t); } catch { /* the zombie leader */ } }
    fs.writeFileSync(path.join(dir, 'freezer.state'), 'FROZEN');
    for (let i = 0; i < 200 && fs.readFileSync(path.join(dir, 'freezer.state'), 'utf8').trim() !== 'FROZEN'; i++) await delay(10);
    frozen = true;
    const t0 = Date.now();
    ex.stop();
    const r = await Promise.race([ex.wait(), delay(60000).then(() => null)]);
    const ms = Date.now() - t0;
    console.log(`${label}: tasks ${states.join(' ')}; wait() ${ms} ms after stop() (ladder bound ${stop.graceMs + 3 * stop.forceMs} ms), containmentConfirmed ${r?.receipt?.stop?.containmentConfirmed}`);
    return ms;
  } finally {
    if (frozen || fs.existsSync(dir)) {
      try { fs.writeFileSync(path.join(dir, 'freezer.state'), 'THAWED'); } catch {}
      for (let i = 0; i < 300; i++) { try { if (fs.readFileSync(path.join(dir, 'tasks'), 'utf8').trim() === '') break; } catch { break; } await delay(20); }
      try { fs.rmdirSync(dir); } catch {}
    }
    await ex.wait().catch(() => {});
  }
}
async function main() {
  if (process.geteuid() !== 0 || !fs.existsSync(path.join(FREEZER, 'tasks'))) { console.log('skipped: needs root and a v1 freezer'); return; }
  const control = await scenario('control', 'import time; time.sleep(600)');
  const probe = await scenario('probe', 'import threading, time, ctypes\nthreading.Thread(target=time.sleep, args=(600,)).start()\nctypes.CDLL(None).pthread_exit(None)');
  if (control > 5000) console.log('control failed (a plain frozen process was waited for)');
  else console.log(probe > control + 10000 ? `FINDING: a frozen process whose main thread exited is taken for exiting: wait() ${probe} ms vs ${control} ms` : 'held');
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
