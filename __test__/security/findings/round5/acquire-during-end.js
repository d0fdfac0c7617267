'use strict';
// Round 5: acquire() of a scope while end() of its session is under way.
// Documented: teardown removes the workspace only after its last command is
// contained; the record is then deleted. Observed: a "restarted" session runs
// commands in a workspace the end has unmounted and removed.
const fs = require('node:fs');
const { manager, withTimeout } = require('./session-common');
async function main() {
  const store = require('../../../..').memorySessionStore();
  const m = manager({ store });
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'x' }, { id: 'a' });
  await s.writeFile('old.txt', 'from the first session\n');
  const ending = s.end();
  const again = await m.sessions.acquire({ tenant: 't', conversation: 'x' }, { id: 'a' });
  const rec = await ending;
  console.log('first end: removed', rec.workspace.removed, '| second: origin', again.origin, 'ended', again.ended, 'workspace', again.workspace === s.workspace ? 'same path' : 'other path');
  const ls = await withTimeout(again.exec({ shell: 'bash', script: 'echo new > new.txt; ls /workspace; df -h /workspace | tail -1' }), 15000);
  console.log('second exec:', ls.settled ? JSON.stringify(ls.value?.stdout ?? ls.error?.code) : 'no settle');
  console.log('host: workspace exists', fs.existsSync(again.workspace), '| mounted', fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(again.workspace));
  console.log('second readFile new.txt:', await again.readFile('new.txt').then((b) => JSON.stringify(b.toString()), (e) => e.code));
  console.log('store record for the live session:', JSON.stringify((await store.list()).map((r) => r.key === again.id)));
  const r2 = await again.end();
  console.log('second end: removed', r2.workspace.removed, r2.workspace.detail);
  const bad = ls.value && /new\.txt/.test(ls.value.stdout) && !fs.existsSync(again.workspace);
  console.log(bad ? 'OPEN: a live session runs in a workspace its predecessor\'s end() unmounted and removed; the host sees no workspace' : 'held');
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
