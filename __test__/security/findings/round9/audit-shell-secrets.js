'use strict';
// R9 (low): the session audit's command redaction (Code Mode's source redaction) misses
// the usual ways a shell command carries a credential: an HTTP Authorization header
// inside a quoted argument, URL userinfo, `curl -u user:pass`, `mysql -pPASS`,
// `sshpass -p PASS`. The audit record's `command` keeps them in clear.
// docs/code-mode.md calls redaction "hygiene for logs, not a security boundary"; the
// sessions doc promises "the command (Code Mode's linear redaction…)" in every record.
//   node audit-shell-secrets.js    prints each command as audited; VULNERABLE when a secret stays
// Control: the forms the redaction does catch (PGPASSWORD=…, a long token) show [REDACTED].
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require(path.resolve(__dirname, '../../../..'));

const SECRET = 'Hunter2Hunter2';
const LEAKS = [
  `curl -s -H "Authorization: Bearer ${SECRET}" http://api.internal/`,
  `git clone https://deploy:${SECRET}@git.internal/repo.git`,
  `curl -u admin:${SECRET} http://api.internal/`,
  `mysql -u root -p${SECRET} -e 'select 1'`,
  `sshpass -p ${SECRET} ssh ops@db`,
];
const CONTROLS = [`PGPASSWORD=${SECRET} psql`, `export API_TOKEN=${SECRET}`];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-audit-'));
  fs.chmodSync(dir, 0o711);
  const records = [];
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true, audit: (r) => records.push(r) });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  try {
    let leaked = 0, controlOk = 0;
    for (const [list, isControl] of [[CONTROLS, true], [LEAKS, false]]) {
      for (const cmd of list) {
        await s.exec({ shell: 'bash', script: `${cmd} >/dev/null 2>&1; true` }, { timeoutMs: 10_000 });
        const audited = records.filter((r) => r.operation === 'exec').at(-1).command;
        const clear = audited.includes(SECRET);
        if (isControl && !clear) controlOk += 1;
        if (!isControl && clear) leaked += 1;
        console.log(`${isControl ? 'control' : 'attack '} ${clear ? 'CLEAR   ' : 'redacted'} ${audited}`);
      }
    }
    console.log(controlOk === CONTROLS.length ? 'control ok' : 'control FAILED');
    console.log(leaked ? `VULNERABLE: ${leaked} of ${LEAKS.length} credential forms kept in clear in the audit record` : 'held');
  } finally {
    await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
