'use strict';
// A command SIGSTOPs the exec agent (same uid, same pid namespace): does the
// host's exec() still settle at its timeout, and does end() settle?
const { manager, withTimeout } = require('./session-common');
async function main() {
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'stop' }, { id: 'a' });
  const who = await s.exec({ shell: 'bash', script: 'for p in /proc/[0-9]*; do echo ${p#/proc/} $(tr "\\0" " " < $p/cmdline); done' });
  console.log(who.stdout);
  const agent = who.stdout.split("\n").find((l) => /^\d+ \S*cordon-exec-agent$/.test(l.trim()));
  const pid = agent.split(' ')[0];
  console.log('agent pid inside', pid);
  const r = await withTimeout(s.exec({ shell: 'bash', script: `kill -STOP ${pid}; sleep 1; echo after` }, { timeoutMs: 3000 }), 20000, 'exec');
  console.log('exec with STOPped agent:', r.settled ? JSON.stringify(r.value ?? r.error?.code) : 'DID NOT SETTLE in 20 s (timeoutMs 3000)');
  const r2 = await withTimeout(s.exec(['/bin/true'], { timeoutMs: 2000 }), 15000, 'exec2');
  console.log('next exec:', r2.settled ? JSON.stringify(r2.value ?? (r2.error?.code + ' ' + r2.error?.message)) : 'DID NOT SETTLE in 15 s (timeoutMs 2000)');
  const t0 = Date.now();
  const e = await withTimeout(s.end(), 30000, 'end');
  console.log('end:', e.settled ? `settled in ${Date.now() - t0} ms ${e.value?.endReason} removed=${e.value?.workspace?.removed}` : 'DID NOT SETTLE in 30 s');
  m.cleanup();
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
