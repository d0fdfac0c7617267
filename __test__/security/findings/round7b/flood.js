'use strict';
// Output floods: provider RSS while commands spray stdout/stderr, background writers after exit, 8 at once.
const L = require('./lib');
const dir = L.scratch();
const body = `
  const s = await m.acquire(scope('c1'), actor);
  const rss = () => Math.round(process.memoryUsage().rss / 1048576);
  out({ rss0: rss() });
  const t0 = Date.now();
  const x = await sh(s, 'yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA | head -c 500000000; yes B >&2 | head -c 100000000', { timeoutMs: 60000 });
  out({ name: 'big', ms: Date.now() - t0, out: x.stdout.length, err: x.stderr.length, truncated: x.truncated, outputBytes: x.outputBytes, rss: rss() });
  let cb = 0;
  const y = await sh(s, 'yes C | head -c 200000000', { timeoutMs: 60000, onStdout: (c) => { cb += c.length; } });
  out({ name: 'onStdout', cb, out: y.stdout.length, rss: rss() });
  const z = await sh(s, '(sleep 0.05; yes D) & echo started', { timeoutMs: 5000 });
  out({ name: 'bg-after-exit', out: z.stdout.length, exit: z.exitCode, rss: rss() });
  await new Promise((r) => setTimeout(r, 3000));
  const w = await sh(s, 'echo next');
  out({ name: 'next', stdout: w.stdout, rss: rss() });
  const many = await Promise.all(Array.from({ length: 8 }, () => sh(s, 'yes E | head -c 100000000', { timeoutMs: 60000 }).then((r) => r.stdout.length, (e) => e.code)));
  out({ name: 'eight', many, rss: rss(), ms: Date.now() - t0 });
  await sh(s, 'pkill yes; true');
  out({ end: (await s.end()).endReason });
`;
const res = L.run(dir, body, { timeoutMs: 300_000 });
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 1000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 1500));
