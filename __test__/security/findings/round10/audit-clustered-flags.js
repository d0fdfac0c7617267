'use strict';
// R10-4 (low): the round-9 shell-credential redaction (R9-8, 1c1e556, redact-command.js)
// matches `curl -u user:X` / `-uuser:X` but not the same flag in a cluster of short
// options (`curl -su user:X`, `curl -fsSLu user:X`: the usual form in scripts and in
// model-written commands), nor other common CLI credential flags (`redis-cli -a X`,
// `docker login -p X`, `curl --oauth2-bearer X`). The audit record keeps them in clear.
// docs/code-mode.md: redaction is log hygiene, not a boundary.
//   node audit-clustered-flags.js    prints each command as audited; VULNERABLE when a secret stays
// Control in the same run: the forms R9-8 covers (`curl -u user:X`, `-uuser:X`) show [REDACTED].
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require(path.resolve(__dirname, '../../../..'));

const SECRET = 'Hunter2Hunter2';
const LEAKS = [
  `curl -su admin:${SECRET} http://api.internal/`,
  `curl -fsSLu admin:${SECRET} http://api.internal/`,
  `redis-cli -h cache -a ${SECRET} ping`,
  `docker login -u me -p ${SECRET} registry.internal`,
  `curl --oauth2-bearer ${SECRET} http://api.internal/`,
];
const CONTROLS = [`curl -u admin:${SECRET} http://api.internal/`, `curl -uadmin:${SECRET} http://api.internal/`];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r10-audit-'));
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
