'use strict';
// Processes of a session after end(), and after its provider is SIGKILLed
// mid-command (bwrap --die-with-parent is the documented guarantee).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { manager } = require('./session-common');
function uidProcs(uid) {
  const out = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const st = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      if (Number(/^Uid:\s+(\d+)/m.exec(st)[1]) === uid) out.push(`${p}:${/^State:\s+(\S)/m.exec(st)[1]}:ppid ${/^PPid:\s+(\d+)/m.exec(st)[1]}:${fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 60)}`);
    } catch {}
  }
  return out;
}
async function main() {
  if (process.argv[2] === 'child') {
    const m = manager();
    const s = await m.sessions.acquire({ tenant: 't', conversation: 'crash' }, { id: 'a' });
    await s.start({ shell: 'bash', script: 'setsid sleep 1000 & (trap "" TERM HUP; exec sleep 999) & sleep 1000' });
    console.log(JSON.stringify({ uid: s.ownerUid, ws: s.workspace, dir: m.dir }));
    s.exec({ shell: 'bash', script: 'sleep 1000' }).catch(() => {});
    return;
  }
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'end' }, { id: 'a' });
  await s.start({ shell: 'bash', script: 'setsid bash -c "trap \\"\\" TERM HUP; while :; do sleep 1; done" & disown; sleep 1000' });
  await s.exec({ shell: 'bash', script: 'nohup sleep 999 >/dev/null 2>&1 & setsid -f sleep 998' });
  await new Promise((r) => setTimeout(r, 500));
  console.log('before end:', uidProcs(s.ownerUid).length, 'processes of the session uid');
  const rec = await s.end();
  await new Promise((r) => setTimeout(r, 1000));
  console.log('receipt keys', Object.keys(rec.sandbox.receipt || {}).join(','));
  console.log('after end:', uidProcs(s.ownerUid), 'removed', rec.workspace.removed, 'contained', JSON.stringify(rec.sandbox.receipt?.containment ?? rec.sandbox.receipt?.containmentConfirmed));
  await new Promise((r) => setTimeout(r, 5000));
  console.log('6 s after end:', uidProcs(s.ownerUid));
  m.cleanup();
  // crash
  const child = spawn(process.execPath, [__filename, 'child'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((r) => child.stdout.once('data', (d) => r(d.toString())));
  const info = JSON.parse(line);
  await new Promise((r) => setTimeout(r, 1000));
  console.log('provider alive: session uid processes', uidProcs(info.uid).length);
  child.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 3000));
  const left = uidProcs(info.uid);
  console.log('3 s after SIGKILL of the provider:', left.length ? 'OPEN ' + JSON.stringify(left) : 'none left');
  const mounted = fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(info.ws);
  console.log('workspace still mounted (expected: resumable):', mounted);
  if (mounted) require('node:child_process').execFileSync('umount', [info.ws]);
  fs.rmSync(info.dir, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); process.exit(1); });
