'use strict';
// Audit record sizes for fields a model chooses: exec/start cwd (8 MiB), control: readFile path (cut since R11-4)
const { withManager } = require('./h.js');
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'aud' }, { tenant: 't' });
  const big = 'd/'.repeat(4 << 20);
  const out = {};
  for (const [k, fn] of Object.entries({
    control_readFile: () => a.readFile(big),
    exec_cwd: () => a.exec(['true'], { cwd: big }),
    start_cwd: () => a.start(['true'], { cwd: big }),
    exec_cwd_dotdot: () => a.exec(['true'], { cwd: '../'.repeat(3 << 20) }),
    list: () => a.list(big),
  })) {
    const n = audits.length;
    let code = 'ok';
    try { await fn(); } catch (e) { code = e.code; }
    const recs = audits.slice(n);
    out[k] = { code, records: recs.length, bytes: recs.map((r) => JSON.stringify(r).length) };
  }
  console.log(JSON.stringify(out));
  const bad = Object.entries(out).filter(([k, v]) => !k.startsWith('control') && v.bytes.some((b) => b > 16384));
  console.log(out.control_readFile.bytes.every((b) => b < 16384) && bad.length ? 'FINDING: ' + bad.map(([k]) => k).join(',') : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
