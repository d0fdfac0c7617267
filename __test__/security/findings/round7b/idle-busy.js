'use strict';
// A command with no timeoutMs that never ends (and one that closes its stdout and sleeps): does
// the idle timeout still end the session, or does one command keep it alive forever?
const L = require('./lib');
const dir = L.scratch();
const body = `
  const s = await m.acquire(scope('c1'), actor);
  const t0 = Date.now();
  const p = s.exec({ shell: 'bash', script: 'exec >&- 2>&-; sleep 30' }).then((x) => ({ exit: x.exitCode, ms: Date.now() - t0 }), (e) => ({ err: e.code, ms: Date.now() - t0 }));
  await new Promise((r) => setTimeout(r, 10000));
  out({ after10s: await s.list('.').then(() => 'session alive', (e) => e.code) });
  out({ exec: await p });
  await s.end();
`;
const r = L.run(dir, body, { idleTimeoutMs: 3000, timeoutMs: 90_000 });
for (const l of r.lines) console.log(JSON.stringify(l).slice(0, 400));
console.log('status', r.status, r.stderr.slice(0, 300));
require('node:fs').rmSync(dir, { recursive: true, force: true });
