'use strict';
// Code Mode pool: close() while runs are in flight, queued, and pooled sandboxes are waiting.
// Afterwards: every run settled? any bwrap / runner process left? Control: the same without close() racing.
const { execFileSync } = require('node:child_process');
const { createCodeMode } = require('../../../..');
const count = () => { try { return execFileSync('pgrep', ['-c', '-f', 'cordon-runner']).toString().trim() | 0; } catch { return 0; } };
const race = (p, ms) => Promise.race([p.then((r) => (r.ok ? 'ok' : r.error.kind + '/' + (r.error.code || '')), (e) => 'rejects ' + e.code), new Promise((res) => setTimeout(() => res('HUNG'), ms))]);
async function scenario(label, doClose) {
  const mode = createCodeMode({ tools: [], pool: { size: 4 }, limits: { timeoutMs: 4000 }, admission: { maxConcurrent: 4, maxQueued: 16, queueTimeoutMs: 30000 } });
  await new Promise((r) => setTimeout(r, 800));
  const runs = Array.from({ length: 10 }, (_, i) => race(mode.run(`await new Promise((r) => setTimeout(r, ${300 + i * 50})); return ${i};`), 20000));
  if (doClose) { await new Promise((r) => setTimeout(r, 150)); await mode.close(); }
  const res = await Promise.all(runs);
  if (!doClose) await mode.close();
  await new Promise((r) => setTimeout(r, 2500));
  const left = count();
  const tally = {}; for (const x of res) tally[x] = (tally[x] || 0) + 1;
  console.log(`${label}: outcomes ${JSON.stringify(tally)}; runner processes left ${left}`);
  return { hung: tally.HUNG || 0, left };
}
(async () => {
  const before = count();
  const c = await scenario('control (close after)', false);
  const p = await scenario('probe (close at 150 ms)', true);
  console.log(`runner processes before ${before}`);
  console.log(p.hung || p.left > before ? 'FINDING: close() racing runs leaves a run unsettled or a sandbox behind' : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
