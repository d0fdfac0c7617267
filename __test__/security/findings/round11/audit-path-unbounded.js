'use strict';
// R11-4: a session's audit record carries a file tool's `path` whole. A
// model-chosen path of 8 MiB (refused at once: PATH_REFUSED) becomes an 8 MiB
// audit record, while an exec's command is cut to 4 KiB (docs/sessions.md ›
// Audit). Control: an exec of a 100 KB script → a record of ~4 KiB.
// Usage: node audit-path-unbounded.js (root, or as uid 65534 via setpriv)
const { withManager } = require('./h.js');

withManager({}, async (sessions, audits) => {
  const s = await sessions.acquire({ tenant: 't', conversation: 'c' }, { tenant: 't' });
  const big = 'x'.repeat(8 << 20);
  // control: a command of 100 KB (under the 512 KiB argv bound) is cut to 4 KiB in its record
  await s.exec({ shell: 'bash', script: `true || ${'x'.repeat(100000)}` });
  const execRecord = JSON.stringify(audits[audits.length - 1]).length;
  for (const op of ['readFile', 'writeFile', 'list', 'remove']) {
    const n = audits.length;
    await (op === 'writeFile' ? s.writeFile(big, 'y') : s[op](big)).catch((e) => e);
    const rec = audits.slice(n).find((r) => r.operation === op || (r.path && r.path.length > 1000)) || audits[audits.length - 1];
    console.log(`${op}: audit record ${JSON.stringify(rec).length} bytes (error ${rec.error})`);
  }
  console.log(`control: exec of a 100 KB script: audit record ${execRecord} bytes`);
  const worst = Math.max(...audits.map((r) => JSON.stringify(r).length));
  console.log(worst > 1 << 20 && execRecord < 16384 ? 'FINDING: a file tool path reaches the audit sink whole (MiBs), a command is cut to 4 KiB' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
