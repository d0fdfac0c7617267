'use strict';
// R18b: docs/remote.md § Workspaces / § Receipts kept on the host: a session's upload directory is "removed at its
// end", and each run's marker in runs/ lives "until its receipt is kept". Runs with uploads end in every way:
// normally, stop(), deadline, AbortSignal during the upload phase (6 files of 700 kB) and right after spawn, a client
// process SIGKILLed during its upload or its run. Afterwards stateDir/workspaces/ and stateDir/runs/ must be empty
// and no sandbox left. Usage: node remote-state-leftovers.js [rounds] [tls|nobody|control]  (control: normal runs only)
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { startHost, sleep, PKG, descendants } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const ROUNDS = +(process.argv[2] || 5);
const mode = process.argv[3] || '';
const control = mode === 'control';
const list = (d) => { try { return fs.readdirSync(d); } catch (e) { return [`(${e.code})`]; } };
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  const state = path.join(h.dir, 'state');
  const big = Buffer.alloc(700000, 65); // one file travels in one frame (≤ 783360 bytes); 6 of them: 4.2 MB
  const ends = control ? ['normal'] : ['normal', 'stop', 'deadline', 'abort-upload', 'abort-spawn', 'kill-upload', 'kill-run'];
  const tally = {};
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const end of ends) {
        const files = { 'a.txt': 'hello', 'd/e/f.bin': Buffer.from('x') };
        if (end.includes('upload')) for (let k = 0; k < 6; k++) files[`d/big${k}.bin`] = big;
        let outcome;
        if (end.startsWith('kill')) {
          const src = `const { connectRemote } = require(${JSON.stringify(PKG + '/lib/remote')});
const c = connectRemote(${JSON.stringify(h.target)});
const files = { 'a.txt': 'hello' }; for (let k = 0; k < ${end === 'kill-upload' ? 6 : 1}; k++) files['d/big' + k + '.bin'] = Buffer.alloc(700000, 65);
const ex = c.spawnIsolated(['py', '-c', 'import time\\ntime.sleep(5)'], { policy: c.readOnly(), workspace: { files } });
ex.stderr.resume(); ex.protocol.resume(); ex.wait().catch(() => {}); console.log('GO');`;
          const child = spawn(process.execPath, ['-e', src], { stdio: ['ignore', 'pipe', 'inherit'] });
          await new Promise((res) => child.stdout.once('data', res));
          await sleep(end === 'kill-upload' ? 5 + Math.floor(Math.random() * 30) : 400);
          child.kill('SIGKILL');
          await new Promise((res) => (child.exitCode !== null || child.signalCode !== null ? res() : child.once('exit', res)));
          outcome = 'killed';
        } else {
          const ac = new AbortController();
          const ex = c.spawnIsolated(['py', '-c', 'import time\ntime.sleep(1.5)'], { policy: c.readOnly(), workspace: { files }, ...(end === 'deadline' ? { deadlineMs: 200 } : {}), ...(end.startsWith('abort') ? { signal: ac.signal } : {}) });
          ex.stderr.resume(); ex.protocol.resume();
          if (end === 'abort-upload') setTimeout(() => ac.abort(), 2 + Math.floor(Math.random() * 20));
          if (end === 'abort-spawn') setTimeout(() => ac.abort(), 60);
          if (end === 'stop') setTimeout(() => ex.stop(), 300);
          outcome = await ex.wait().then((x) => x.receipt.stop?.reason ?? 'exited', (e) => e.code);
        }
        tally[`${end}:${outcome}`] = (tally[`${end}:${outcome}`] || 0) + 1;
      }
    }
    // sessions end asynchronously: give the host a moment
    for (let k = 0; k < 50 && (list(path.join(state, 'workspaces')).length || list(path.join(state, 'runs')).length || descendants(h.pid).length); k++) await sleep(100);
  } finally {
    var ws = list(path.join(state, 'workspaces')), runs = list(path.join(state, 'runs')), left = descendants(h.pid).length;
    console.log(JSON.stringify(tally));
    console.log(`workspaces/ ${JSON.stringify(ws)}; runs/ ${JSON.stringify(runs)}; processes left ${left}`);
    await c.close(); await h.stop();
  }
  console.log(ws.length || runs.length || left ? `FINDING: left behind: ${ws.length} workspaces, ${runs.length} run markers, ${left} processes` : 'held');
})();
