'use strict';
// R12-4 re-test: "a refused exec or start (a bad command, cwd, env or option …) is one record too". Options and
// command forms round 12 did not try: bad timeoutMs, stdin of a wrong type or over 1 MiB, an unknown option key,
// a non-function onStdout, an empty argv, a non-string argv element, an unknown shell name ('constructor'), a
// script over 512 KiB. Each refused call should add exactly one audit record with its code.
// Control: cwd '../x' (R12-4's case). Usage (root or uid 65534): node audit-refused-options.js
const { withManager } = require('./h.js');
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'aro' }, { tenant: 't' });
  const rows = [];
  const probe = async (name, fn) => {
    const n0 = audits.length; let code = 'resolved';
    try { await fn(); } catch (e) { code = e.code || String(e).slice(0, 60); }
    await new Promise((r) => setTimeout(r, 50));
    const recs = audits.slice(n0); rows.push({ name, code, records: recs.length, errs: recs.map((r) => r.error) });
  };
  await probe('control: cwd ../x', () => a.exec(['true'], { cwd: '../x' }));
  await probe('timeoutMs -1', () => a.exec(['true'], { timeoutMs: -1 }));
  await probe('start timeoutMs NaN', () => a.start(['true'], { timeoutMs: NaN }));
  await probe('stdin 42 (number)', () => a.exec(['cat'], { stdin: 42 }));
  await probe('stdin 1 MiB + 1', () => a.exec(['cat'], { stdin: 'x'.repeat(1048577) }));
  await probe('unknown option key', () => a.exec(['true'], { bogus: 1 }));
  await probe('onStdout not a function', () => a.exec(['true'], { onStdout: 5 }));
  await probe('empty argv', () => a.exec([]));
  await probe('argv element 5', () => a.exec(['echo', 5]));
  await probe("shell 'constructor'", () => a.exec({ shell: 'constructor', script: 'true' }));
  await probe('script 600 KiB', () => a.exec({ shell: 'bash', script: 'true #' + 'x'.repeat(600 * 1024) }));
  await probe('argv 600 KiB', () => a.exec(['true', 'x'.repeat(600 * 1024)]));
  for (const r of rows) console.log(r.name.padEnd(28), r.code.padEnd(36), `records ${r.records}`, JSON.stringify(r.errs));
  const ctl = rows[0];
  const missing = rows.slice(1).filter((r) => r.code !== 'resolved' && r.records !== 1);
  console.log(ctl.records !== 1 ? 'control failed' : missing.length ? `FINDING: refused calls with no (or more than one) audit record: ${missing.map((r) => r.name + ' (' + r.code + ', ' + r.records + ')').join('; ')}` : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
