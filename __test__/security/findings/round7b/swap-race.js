'use strict';
// Swap races against the host file tools: inside the sandbox, "a" is atomically exchanged
// (renameat2 RENAME_EXCHANGE) between a real directory and a symlink to "/", as fast as it goes,
// while the provider calls readFile('a/etc/passwd'), writeFile('a/tmp/<tag>'), list('a'), remove('a/tmp/<tag>').
// Broken if any call reads/lists/writes the host (the helper's) root instead of the workspace.
const L = require('./lib');
const fsn = require('node:fs');
const dir = L.scratch(process.argv[2] !== 'root');
const tag = 'atk21b-swap-' + process.pid;
const asNobody = process.argv[2] !== 'root';
const body = `
  const s = await m.acquire(scope('c1'), actor);
  await s.exec({ shell: 'bash', script: 'mkdir -p a/etc a/tmp && echo workspace-passwd > a/etc/passwd && ln -s / b && echo ok' });
  const swapper = await s.start(['python3', '-c', \`
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
AT = -100
while True:
    libc.renameat2(AT, b"a", AT, b"b", 2)
\`]);
  const N = ${process.env.N || 400};
  const hits = { read: [], write: 0, list: [], codes: {} };
  const code = (e) => { hits.codes[e.code] = (hits.codes[e.code] || 0) + 1; };
  for (let i = 0; i < N; i++) {
    await s.readFile('a/etc/passwd').then((b) => { const t = b.toString(); if (!t.startsWith('workspace-passwd')) hits.read.push(t.slice(0, 60)); }, code);
    await s.writeFile('a/tmp/${tag}', 'x').then(() => { hits.write++; }, code);
    await s.list('a').then((l) => { const names = l.map((e) => e.name ?? e); if (names.some((n) => !['etc', 'tmp', '${tag}'].includes(n))) hits.list.push(names.slice(0, 8)); }, code);
  }
  await swapper.kill?.();
  out({ hits: { read: hits.read.slice(0, 3), readN: hits.read.length, write: hits.write, list: hits.list.slice(0, 2), listN: hits.list.length, codes: hits.codes } });
  await s.end();
`;
const res = L.run(dir, body, { asNobody, timeoutMs: 300_000 });
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 2000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 1500));
console.log('host /tmp/' + tag + ' exists:', fsn.existsSync('/tmp/' + tag));
