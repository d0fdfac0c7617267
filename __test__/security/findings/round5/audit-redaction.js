'use strict';
// Round 5: the audit's redaction of a model-written command, on hostile
// 384 KiB inputs (docs: linear-time). Times exec() of `: <payload>` with an
// audit sink against the same length of plain text, and shows what the
// record keeps of a secret.
const { manager } = require('./session-common');
async function main() {
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'audit' }, { id: 'a' });
  const N = 384 * 1024;
  const fill = (unit) => unit.repeat(Math.ceil(N / unit.length)).slice(0, N);
  const payloads = {
    plain: fill('abcdefgh '),
    bearer: fill('Bearer '),
    keyEq: fill('a='),
    keyEqLong: fill('password=' ),
    skDash: fill('sk-'),
    ghp: fill('ghp_'),
    aws: fill('AKIA'),
    quotes: fill('"token":"'),
    urlCreds: fill('https://u:'),
    jwtish: fill('eyJ.'),
    pem: '-----BEGIN PRIVATE KEY-----' + fill('A'),
    hexRun: fill('0123456789abcdef'),
  };
  for (const [name, p] of Object.entries(payloads)) {
    const t0 = process.hrtime.bigint();
    await s.exec({ shell: 'bash', script: `: '${p.replace(/'/g, '')}'` }).catch((e) => e.code);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const rec = m.audits[m.audits.length - 1];
    console.log(name.padEnd(10), `${ms.toFixed(0)} ms`, 'record command', rec.command.length, 'chars, truncated', rec.commandTruncated);
  }
  await s.exec({ shell: 'bash', script: 'curl -H "Authorization: Bearer sk-live-abcdefghijklmnopqrstuvwxyz123456" https://x; export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY; mysql -ppassw0rd123; echo ghp_1234567890abcdefghijklmnopqrstuvwxyz' });
  console.log('secret command as audited:', m.audits[m.audits.length - 1].command);
  await s.end();
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
