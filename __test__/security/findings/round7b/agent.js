'use strict';
// Agent attacks: stop it (SIGSTOP), then see whether exec/timeout/end() settle.
const L = require('./lib');
const dir = L.scratch();
const mode = process.argv[2] || 'stop';
const body = `
  const s = await m.acquire(scope('c1'), actor);
  const t0 = Date.now();
  const r = async (name, script, o) => { const x = await sh(s, script, o).catch((e) => ({ err: e.code + ' ' + e.message })); out({ name, ms: Date.now() - t0, ...x }); };
  await r('who', 'for p in /proc/[0-9]*; do echo "$(basename $p) $(cat $p/comm) $(tr "\\\\0" " " < $p/cmdline)"; done');
  if (${JSON.stringify(mode)} === 'stop') {
    await r('stop', 'for p in /proc/[0-9]*; do c=$(cat $p/comm); case $c in cordon-exec*) kill -STOP $(basename $p); echo stopped $(basename $p);; esac; done; sleep 1', { timeoutMs: 3000 });
    await r('after', 'echo hi', { timeoutMs: 3000 });
  } else if (${JSON.stringify(mode)} === 'kill') {
    await r('kill', 'for p in /proc/[0-9]*; do c=$(cat $p/comm); case $c in cordon-exec*) kill -KILL $(basename $p); echo killed $(basename $p);; esac; done; sleep 1', { timeoutMs: 3000 });
    await r('after', 'echo hi', { timeoutMs: 3000 });
  }
  const endP = s.end().then((rc) => ({ endReason: rc.endReason, failure: rc.failure, contained: rc.sandbox?.receipt?.containmentConfirmed }));
  const to = new Promise((res) => setTimeout(() => res('end() pending after 20s'), 20000));
  out({ end: await Promise.race([endP, to]), ms: Date.now() - t0 });
  out({ listDir: fs.readdirSync(dir + '/root') });
  process.exit(0);
`;
const res = L.run(dir, body, { workspaceBytes: 1 << 20 });
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 2000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 2000));
console.log('holder/agent processes left:', L.withTag(dir));
