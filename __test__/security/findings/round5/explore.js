'use strict';
const { manager, withTimeout } = require('./session-common');
const fs = require('node:fs');
async function main() {
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'c1' }, { id: 'a' });
  console.log('ws', s.workspace, 'owner', s.ownerUid);
  const r = await s.exec({ shell: 'bash', script: 'id; echo $$; ps -ef 2>/dev/null || ls /proc; cat /proc/1/cmdline | tr "\\0" " "; echo; for p in /proc/[0-9]*; do echo $p $(tr "\\0" " " < $p/cmdline); done; mount | head -30; ulimit -a' });
  console.log(r.stdout, r.stderr);
  // symlinks for list
  await s.exec({ shell: 'bash', script: 'ln -s /etc/shadow sh; ln -s /etc d; mkdir x; ln -s /etc x/e; mkfifo f; echo hi > a' });
  console.log('list', JSON.stringify(await s.list('.').catch((e) => e.code)));
  console.log('list x', JSON.stringify(await s.list('x').catch((e) => e.code)));
  console.log('list d', JSON.stringify(await s.list('d').catch((e) => e.code)));
  for (const p of ['', '.', 'sh', 'd/passwd', 'f', 'a', 'a/', './a', 'x//e', '/a', 'a\0b']) {
    const out = await s.readFile(p).then((b) => 'READ ' + b.length, (e) => e.code + ' ' + e.message);
    console.log('readFile', JSON.stringify(p), out);
  }
  console.log('remove x', JSON.stringify(await s.remove('x').catch((e) => e.code + e.message)));
  console.log('remove d', JSON.stringify(await s.remove('d').catch((e) => e.code + e.message)));
  console.log('exists /etc/passwd', fs.existsSync('/etc/passwd'));
  const rec = await s.end();
  console.log(JSON.stringify(rec.workspace), rec.endReason);
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
