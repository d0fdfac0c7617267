'use strict';
// Outlive the idle timeout: background setsid/ignore-signal processes and a stopped agent.
const L = require('./lib');
const fsn = require('node:fs');
const dir = L.scratch();
const tag = 'atk21b-idle-' + process.pid;
const variant = process.argv[2] || 'bg';
const body = `
  const s = await m.acquire(scope('c1'), actor);
  const r = async (name, script, o) => { const x = await sh(s, script, o).catch((e) => ({ err: e.code + ' ' + e.message })); out({ name, ...x }); };
  await r('spawn', \`(setsid bash -c 'trap "" TERM HUP INT; while :; do echo . >> keepalive; sleep 0.2; done; ' </dev/null >/dev/null 2>&1 &); (exec -a ${tag} sleep 300 &) </dev/null >/dev/null 2>&1; echo ok\`);
  if (${JSON.stringify(variant)} === 'stop') await r('stop-agent', 'for p in /proc/[0-9]*; do case $(cat $p/comm) in cordon-exec*) kill -STOP $(basename $p);; esac; done; echo stopped', { timeoutMs: 2000 });
  await new Promise((res) => setTimeout(res, 9000));
  out({ after9s: await sh(s, 'echo alive').then((x) => x.stdout, (e) => e.code) });
  out({ root: fs.readdirSync(dir + '/root'), store: Object.keys(load()).length });
  process.exit(0);
`;
const res = L.run(dir, body, { idleTimeoutMs: 3000, timeoutMs: 60_000 });
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 1000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 1500));
console.log('tagged left:', L.withTag(tag), 'holders:', L.withTag('session-holder').length, 'sub-uid procs:', L.procsOfUids(1342177280, 1342177280 + 131072).map((p) => p.pid + ' ' + p.cmd));
