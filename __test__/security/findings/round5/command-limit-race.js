'use strict';
// Round 5: 20 concurrent exec()/start() on one session with maxCommands 8:
// how many commands run at once? And acquire() racing end() of the same scope.
const { manager, withTimeout } = require('./session-common');
async function main() {
  const m = manager({ maxCommands: 8 });
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'cmd' }, { id: 'a' });
  const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => s.exec({ shell: 'bash', script: `echo $$ >> /workspace/running; sleep 2; n=$(wc -l < /workspace/running); echo $n` }).then((r) => 'ran', (e) => e.code)));
  const count = {};
  for (const r of rs) count[r] = (count[r] || 0) + 1;
  const lines = (await s.readFile('running')).toString().trim().split('\n').length;
  console.log('exec x20:', JSON.stringify(count), 'commands that started:', lines, lines > 8 ? 'OPEN' : 'held');
  // acquire racing end
  const e = s.end();
  const again = await m.sessions.acquire({ tenant: 't', conversation: 'cmd' }, { id: 'a' }).then((x) => x, (err) => err.code);
  const rec = await e;
  if (typeof again === 'string') console.log('acquire during end:', again);
  else {
    const r = await withTimeout(again.exec(['/bin/true']), 15000);
    console.log('acquire during end: origin', again.origin, 'same handle', again === s, 'ended', again.ended, 'exec', r.settled ? (r.value ? 'ran' : r.error.code) : 'no settle', 'workspace removed by end', rec.workspace.removed, 'exists', require('node:fs').existsSync(again.workspace));
    await again.end();
  }
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
