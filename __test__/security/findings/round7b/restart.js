'use strict';
// SIGKILL the provider mid-command (a command that setsid-forks a signal-ignoring child and
// keeps writing), then check processes gone, and restart: resume keeps files, no processes.
const L = require('./lib');
const fsn = require('node:fs');
const asNobody = process.argv[2] !== 'root';
const dir = L.scratch(asNobody);
const tag = 'atk21b-restart-' + process.pid;
const first = `
  const s = await m.acquire(scope('c1'), actor);
  await sh(s, 'echo kept > kept.txt');
  s.exec({ shell: 'bash', script: \`(setsid bash -c 'trap "" TERM HUP INT; exec -a ${tag} sleep 300' </dev/null >/dev/null 2>&1 &); while :; do echo tick >> ticks; sleep 0.05; done\` }, { timeoutMs: 60000 }).catch(() => {});
  setTimeout(() => { out({ started: true, pid: process.pid }); }, 1500);
`;
const child = L.start(dir, first, { asNobody, idleTimeoutMs: 600_000 });
let outText = '';
child.stdout.on('data', (d) => {
  outText += d;
  if (outText.includes('started')) {
    console.log('before kill, tagged:', L.withTag(tag), 'holders:', L.withTag('session-holder').length);
    child.kill('SIGKILL');
  }
});
child.on('exit', () => {
  setTimeout(() => {
    console.log('after provider SIGKILL (1s): tagged procs:', L.withTag(tag), 'sub-uid procs:', L.procsOfUids(1342177280, 1342177280 + 131072).map((p) => p.cmd));
    const second = `
      await m.recover();
      const s = await m.acquire(scope('c1'), actor);
      out({ origin: s.origin, kept: await s.readFile('kept.txt').then(String, (e) => e.code) });
      out(await sh(s, 'ls; ps -e 2>/dev/null | wc -l; ls /proc | grep -c "^[0-9]"'));
      out({ end: (await s.end()).endReason });
    `;
    const r = L.run(dir, second, { asNobody });
    for (const l of r.lines) console.log(JSON.stringify(l).slice(0, 1500));
    console.log('status', r.status, r.signal, r.stderr.slice(0, 1500));
    console.log('end: tagged', L.withTag(tag), 'holders', L.withTag('session-holder').length, 'root:', fsn.readdirSync(dir + '/root'));
  }, 1000);
});
