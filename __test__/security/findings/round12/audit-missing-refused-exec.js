'use strict';
// docs/sessions.md › Audit: "one record per acquire, operation, denial and end".
// Which refused exec/start calls leave no audit record? Control: a refused file-tool path (audited since R11-4/7).
const { withManager } = require('./h.js');
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'aud' }, { tenant: 't' });
  const out = {};
  for (const [k, fn] of Object.entries({
    control_readFile_dotdot: () => a.readFile('../x'),
    control_exec_ok: () => a.exec(['true']),
    control_exec_missing_cwd: () => a.exec(['true'], { cwd: 'nope' }),
    exec_cwd_dotdot: () => a.exec(['cat', 'x'], { cwd: '../../..' }),
    exec_cwd_lone: () => a.exec(['true'], { cwd: '\ud800' }),
    start_cwd_abs: () => a.start(['true'], { cwd: '/etc' }),
    exec_argv_nul: () => a.exec(['rm', '-rf', '/\u0000']),
    exec_env_bad: () => a.exec(['true'], { env: { 'LD_PRELOAD=x': '1' } }),
    exec_argv_lone: () => a.exec(['rm', '-rf', '\ud800']),
  })) {
    const n = audits.length;
    let code = 'ok';
    try { const r = await fn(); if (r && r.wait) await r.wait(); } catch (e) { code = e.code; }
    out[k] = { code, audited: audits.slice(n).map((r) => `${r.operation}:${r.error ? (r.error.code || r.error) : 'ok'}`) };
  }
  for (const [k, v] of Object.entries(out)) console.log(k.padEnd(28), v.code.padEnd(38), JSON.stringify(v.audited));
  const ctl = out.control_readFile_dotdot.audited.length === 1 && out.control_exec_ok.audited.length === 1;
  const missing = Object.entries(out).filter(([k, v]) => !k.startsWith('control') && v.audited.length === 0).map(([k]) => k);
  console.log(!ctl ? 'control failed' : missing.length ? `FINDING: refused calls with no audit record: ${missing.join(', ')}` : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
