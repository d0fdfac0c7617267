'use strict';
// R15 probe: K runs at once, each flooding its fd-4 stream with 1-byte messages of 250
// descriptors (flood.js 'pipes'/'unix'), while the provider starts a benign run every 500 ms.
// Peak provider descriptors and threads, failed or slow benign runs, loop delay.
// Control: the same K runs flooding bytes only.  usage: node flood-many.js [K] [secs] [kind]
// (with a lower provider limit: prlimit --nofile=4096:4096 node flood-many.js 4 8 same)
const fs = require('node:fs');
const h = require('./h');
const K = Number(process.argv[2] || 4), SECS = Number(process.argv[3] || 8), KIND = process.argv[4] || 'pipes';
const CODE = fs.readFileSync(require.resolve('./flood.js'), 'utf8').match(/const CODE = h.PY \+ String.raw`([\s\S]*?)`;/)[1];
function closers() { let n = 0; let ts; try { ts = fs.readdirSync('/proc/self/task'); } catch { return -1; } for (const t of ts) { try { if (/fd-close/.test(fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8'))) n++; } catch {} } return n; }
async function round(kind, srv) {
  const mon = h.delayMonitor();
  const runs = []; for (let i = 0; i < K; i++) runs.push(h.py(h.PY + CODE, [kind, srv.port, SECS], { policy: h.policyFor(srv.port) }));
  let done = 0; const all = Promise.all(runs.map((r) => r.wait().finally(() => { done++; })));
  let peak = { fds: 0, threads: 0, closers: 0 }; const benign = []; let lastBenign = 0; let emfile = 0;
  while (done < K) {
    const s = h.snap(); if (s.fds < 0) emfile++; peak = { fds: Math.max(peak.fds, s.fds), threads: Math.max(peak.threads, s.threads), closers: Math.max(peak.closers, closers()) };
    if (Date.now() - lastBenign > 500) { lastBenign = Date.now(); const t0 = Date.now(); const p = (async () => { try { const ex = h.py('print(1)'); const r = await ex.wait(); return r.returncode === 0 ? Date.now() - t0 : `rc ${r.returncode}`; } catch (e) { return `${e.code || ''} ${String(e.message).slice(0, 120)}`; } })(); benign.push(p); }
    await h.sleep(10);
  }
  await all; const b = await Promise.all(benign);
  const failed = b.filter((x) => typeof x !== 'number');
  const nums = b.filter((x) => typeof x === 'number').sort((a, c) => a - c);
  await h.sleep(1000);
  return { kind, K, peak, providerEmfileSamples: emfile, loop: mon.stop(), benign: { n: b.length, failed: failed.length, firstFailure: failed[0], medianMs: nums[nums.length >> 1], maxMs: nums[nums.length - 1] }, sent: runs.map((r) => (r.text.match(/SENT (\d+) messages (\d+) fds/) || [])[2]).join(','), after: h.snap() };
}
(async () => {
  const srv = await h.server('sink');
  const base = h.snap();
  const c = await round('control', srv); console.log(JSON.stringify(c));
  const a = await round(KIND, srv); console.log(JSON.stringify(a));
  // what the provider still holds some seconds later, by kind
  const kinds = () => { const k = {}; let list = []; try { list = fs.readdirSync('/proc/self/fd'); } catch { return { EMFILE: 1 }; } for (const f of list) { let l = '?'; try { l = fs.readlinkSync('/proc/self/fd/' + f).replace(/\[\d+\]/, '').replace(/^\/.*/, 'path'); } catch {} k[l] = (k[l] || 0) + 1; } return k; };
  await h.sleep(Number(process.env.R15_AFTER_MS || 5000)); a.after6s = { ...h.snap(), kinds: kinds() };
  const nb = []; for (let i = 0; i < 3; i++) { try { const ex = h.py('print(1)'); const r = await ex.wait(); nb.push(r.returncode); } catch (e) { nb.push(e.code || String(e.message).slice(0, 80)); } }
  a.benignAfter = nb;
  console.log(`after ${Number(process.env.R15_AFTER_MS || 5000) / 1000} s`, JSON.stringify(a.after6s), 'benign runs after:', JSON.stringify(nb));
  srv.shut();
  const bad = a.benign.failed > 0 || a.providerEmfileSamples > 0 || a.peak.fds > 4 * c.peak.fds + 1000 || a.loop.maxMs > 4 * c.loop.maxMs + 200 || a.after.fds > base.fds + 5 || a.after6s.fds > base.fds + 5;
  console.log(bad ? `FINDING: ${K} runs flooding their fd-4 streams with descriptors (${KIND}, ${SECS} s): provider peak fds ${a.peak.fds} (control ${c.peak.fds}), peak threads ${a.peak.threads} (closers ${a.peak.closers}; control ${c.peak.threads}), provider EMFILE in ${a.providerEmfileSamples} samples, benign runs ${a.benign.failed}/${a.benign.n} failed (${a.benign.firstFailure || '-'}), median ${a.benign.medianMs} ms max ${a.benign.maxMs} ms (control ${c.benign.medianMs}/${c.benign.maxMs}), loop max ${a.loop.maxMs} ms (control ${c.loop.maxMs}), 1 s after ${JSON.stringify(a.after)}, ${Number(process.env.R15_AFTER_MS || 5000) / 1000} s after ${JSON.stringify(a.after6s)}, benign runs after: ${JSON.stringify(a.benignAfter)}` : `held (peak fds ${a.peak.fds} vs ${c.peak.fds}, threads ${a.peak.threads} vs ${c.peak.threads}, benign ${a.benign.failed}/${a.benign.n} failed, loop ${a.loop.maxMs} vs ${c.loop.maxMs} ms)`);
  process.exit(0);
})();
