'use strict';
// R8-3 (README.md). Non-root provider (uid 65534). R7b-2 made the workspace checks accept any
// mode, and docs/sessions.md now says a command's `chmod 777 /workspace` "opens it to no one,
// as the tmpfs exists only in the holder's mount namespace, which no other user can enter".
// But the holder is an ordinary, dumpable process of the provider's uid, so ANY other process
// of that uid reaches the tmpfs through /proc/<holder>/root/<root>/<key>/ — and for uid 65534
// that is every daemon the host runs as "nobody". While the tmpfs root is 0700 (U's) that
// process is refused; once the session's command chmods it 777 (or 755), it reads (755) and
// writes (777) the tenant's files. (The root provider has the 0700 `<key>` directory above the
// tmpfs for exactly this, R7b-5; the holder mounts the tmpfs on `<key>` itself.)
// Runs twice: control (no chmod) and `chmod 777 /workspace`. Exit 1 = reproduced.
// Usage (root): node workspace-exposure.js
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const L = require('./lib');

const body = (chmod) => `
  const s = await m.acquire(scope('c1'), actor);
  await sh(s, 'echo tenant-secret > /workspace/secret.txt; ${chmod}');
  out({ workspace: s.workspace, ownerUid: s.ownerUid });
  await until(dir + '/probed');
  out({ planted: await s.readFile('planted.txt').then(String, (e) => e.code) });
  await s.end();
  out({ ended: true });`;

/** A process of uid `uid` that is not the provider (a stand-in for another "nobody" daemon, or another user). */
function as(uid, argv) {
  const r = spawnSync(argv[0], argv.slice(1), { uid, gid: uid, encoding: 'utf8', cwd: '/', timeout: 10_000 });
  return r.status === 0 ? `ok ${r.stdout.trim()}` : `refused: ${r.stderr.trim()}`;
}

async function attempt(chmod) {
  const dir = L.scratch(true);
  const provider = L.start(dir, body(chmod));
  try {
    const info = await L.until(() => provider.lines.find((l) => l.workspace || l.failed));
    if (info.failed) throw new Error(JSON.stringify(info));
    const holder = L.withTag(`${dir}/root`).find((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('session-holder'));
    const inside = `/proc/${holder}/root${info.workspace}`;
    // A process of the session (its warm sandbox's agent runs as U between commands).
    const sessionPid = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
      try { return Number(/Uid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))[1]) === info.ownerUid; } catch { return false; }
    });
    const result = {
      chmod: chmod || '(none)',
      readAsOtherNobodyProcess: as(L.NOBODY, ['/bin/cat', `${inside}/secret.txt`]),
      writeAsOtherNobodyProcess: as(L.NOBODY, ['/bin/sh', '-c', `echo planted-by-another-process > ${inside}/planted.txt && echo written`]),
      readAsUid1: as(1, ['/bin/cat', `${inside}/secret.txt`]),
      // Ptrace-read access (cwd link) and permission to signal (kill -0) a process of the session.
      sessionProcessAsOtherNobodyProcess: as(L.NOBODY, ['/bin/sh', '-c', `readlink /proc/${sessionPid}/cwd && kill -0 ${sessionPid} && echo may-signal`]),
      sessionProcessAsUid1: as(1, ['/bin/sh', '-c', `readlink /proc/${sessionPid}/cwd && kill -0 ${sessionPid} && echo may-signal`]),
      // Whatever the mode: the provider's uid owns the holder's user namespace, so any of its
      // processes joins it and becomes U there (as the provider's own file helper does).
      nsenterReadAsOtherNobodyProcess: as(L.NOBODY, ['/usr/bin/nsenter', '-t', String(holder), '-U', '-m', '-S', String(info.ownerUid), '-G', String(info.ownerUid),
        '/bin/cat', `${info.workspace}/secret.txt`]),
      nsenterWriteAsOtherNobodyProcess: as(L.NOBODY, ['/usr/bin/nsenter', '-t', String(holder), '-U', '-m', '-S', String(info.ownerUid), '-G', String(info.ownerUid),
        '/bin/sh', '-c', `echo planted-by-another-process > ${info.workspace}/planted.txt && echo written`]),
    };
    fs.writeFileSync(`${dir}/probed`, '');
    const planted = await L.until(() => provider.lines.find((l) => l.planted !== undefined || l.failed));
    result.sessionReadsPlanted = planted.planted ?? planted;
    await provider.done;
    return result;
  } finally {
    provider.kill('SIGKILL');
    L.killTagged(dir);
  }
}

(async () => {
  if (process.geteuid() !== 0) return console.log('skip: needs root to run a uid-65534 provider and other processes');
  const control = await attempt('');
  console.log(JSON.stringify(control));
  const opened = await attempt('chmod 777 /workspace');
  console.log(JSON.stringify(opened));
  // (Creating a file through /proc/<holder>/root fails with EOVERFLOW: 65534 is not mapped in the
  // tmpfs's user namespace; files the session made writable to others can still be changed.)
  const chmodded = control.readAsOtherNobodyProcess.startsWith('refused') && opened.readAsOtherNobodyProcess.includes('tenant-secret');
  const always = control.nsenterReadAsOtherNobodyProcess.includes('tenant-secret') && String(control.sessionReadsPlanted).includes('planted-by-another-process');
  console.log(`R8-3 another process of the provider's uid reads a chmodded workspace through /proc/<holder>/root: ${chmodded ? 'REPRODUCED' : 'not reproduced'}`);
  console.log(`R8-3 another process of the provider's uid reads and writes a 0700 workspace through the holder's user namespace: ${always ? 'REPRODUCED' : 'not reproduced'}`);
  process.exitCode = chmodded || always ? 1 : 0;
})().catch((e) => {
  console.error(e);
  process.exitCode = 3;
});
