'use strict';
// R17w: the claimed invariant over many raced runs: every byte whose write callback succeeded is in exactly one of
// receipt.bytes.protocolIn, protocolInDiscarded, execution.protocolDroppedBytes; a write whose callback errored is in
// none. Each run races writes (random sizes, serial or fire-and-forget, cork/uncork, from 'data'/'end', after wait())
// against the program's end (exit at a random moment reading or not, close fd 3 and live, stop(), deadline,
// destroy(), end()). Usage: node race-invariant.js [RUNS] [seed] ; RUNS=0 → control (a reader, end(), no race).
const { spawn, account, sleep, nthreads, nfds } = require('./common');
const RUNS = +(process.argv[2] ?? 200);
let seed = +(process.argv[3] ?? 17);
const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
const pick = (a) => a[Math.floor(rnd() * a.length)];
const progs = {
  exit_noread: (d) => `import time\ntime.sleep(${d})`,
  exit_read: (d) => `import os,time,select\nt=time.time()+${d}\nwhile time.time()<t:\n  r,_,_=select.select([3],[],[],max(0,t-time.time()))\n  if r and not os.read(3,65536): break`,
  close_live: (d) => `import os,time\ntime.sleep(${d})\nos.close(3)\ntime.sleep(0.3)`,
  shutrd_live: (d) => `import socket,time\ntime.sleep(${d})\ns=socket.socket(fileno=3)\ns.shutdown(socket.SHUT_RDWR)\ntime.sleep(0.3)`,
  sleep_long: () => 'import time\ntime.sleep(5)',
};
const sizes = [1, 2, 10, 1000, 65536, 200000, 300000, 1 << 20];
async function one(i, control) {
  const kind = control ? 'exit_read' : pick(Object.keys(progs));
  const d = (rnd() * 0.08).toFixed(3);
  const end = control ? 'end' : pick(['none', 'none', 'stop', 'stop_now', 'deadline', 'destroy', 'end']);
  const style = control ? 'serial' : pick(['serial', 'fire', 'cork', 'data', 'after']);
  const opts = end === 'deadline' ? { deadlineMs: 20 + Math.floor(rnd() * 60) } : {};
  const prog = control ? 'import os\nwhile os.read(3,1<<20): pass' : progs[kind](d);
  const { ex, p, st, w } = spawn(prog, opts);
  let settled = false;
  const waited = ex.wait().then((r) => { settled = true; return r; }, (e) => { settled = true; throw e; });
  p.on('data', (c) => { if (style === 'data' && !settled) w(c.length % 7 + 1); });
  p.on('end', () => { if (!control) { w(pick(sizes)); w(3); } });
  const writer = (async () => {
    let n = 0;
    while (!settled && n < (control ? 20 : 120)) {
      n++;
      const s = pick(sizes);
      if (style === 'serial' || control) await w(s);
      else if (style === 'cork') { p.cork(); w(s); w(pick(sizes)); process.nextTick(() => p.uncork()); await new Promise((r) => setImmediate(r)); }
      else { w(s > 65536 && rnd() < 0.7 ? 2 : s); await new Promise((r) => setImmediate(r)); }
      if (n === 3 && end === 'destroy') p.destroy();
      if (n === 3 && end === 'end') p.end();
      if (n === 3 && end === 'stop') ex.stop();
      if (n === 3 && end === 'stop_now') ex.stop({ graceMs: 0 }).catch(() => {});
    }
    if (control) p.end();
  })();
  if (!control) p.resume(); else p.resume();
  let r;
  try { r = await waited; } catch (e) { await writer.catch(() => {}); return { i, kind, end, style, failed: e.code }; }
  await writer.catch(() => {});
  if (style === 'after' || rnd() < 0.5) { w(5); w(70000); await sleep(1); w(1 << 20); }
  // every callback has come
  for (let k = 0; k < 200 && st.pending > 0; k++) await sleep(5);
  return { i, kind, d, end, style, ...account(ex, st, r) };
}
(async () => {
  const control = RUNS === 0;
  const runs = control ? 5 : RUNS;
  const t0 = nthreads(), f0 = nfds();
  let bad = 0, over = 0, under = 0;
  const deadline = Date.now() + (+process.env.MAX_MS || 240000);
  let done = 0;
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    const r = await one(i, control);
    done++;
    if (r.failed) { console.log('run failed', JSON.stringify(r)); bad++; continue; }
    if (r.missing !== 0 || r.pending !== 0) {
      bad++; if (r.missing > 0) under++; else if (r.missing < 0) over++;
      console.log('BAD', JSON.stringify(r));
    } else if (process.env.V) console.log('ok ', JSON.stringify(r));
  }
  await sleep(200);
  console.log(`runs ${done}, bad ${bad} (undercounted ${under}, overcounted ${over}); threads ${t0}->${nthreads()}, fds ${f0}->${nfds()}`);
  console.log(bad ? `FINDING: ${bad}/${done} runs broke the protocol-byte invariant` : 'held');
})();
