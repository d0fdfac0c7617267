'use strict';

// Issue 18, items A3, B4, B5 and B10 (raw mknod): kernel objects a sandbox
// shares with the host, each attacked from inside a real sandbox by
// round3.c, for a root provider and for a provider of uid 65534
// ("nobody", no cgroup). The attacks are round3.c's last ones. Every probe
// reports "open" when its filter rule or mount is removed (checked by hand:
// the commit says so), and where a host-side
// effect is the harm (a lease stalling host writes) the host side is
// measured while the sandbox holds on.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const h = require('./harness');

const skip = h.skipReason();
if (skip) console.log(`# SKIPPED host reach: ${skip}`);

/** The attacker: round3.c (its issue-18 attacks), compiled once. */
function attacker() {
  return h.compiled('round3.c');
}

/**
 * Runs the attacker in a provider process of its own (root, or uid 65534),
 * and returns what it printed. `duringShell`: a host command the provider
 * runs (bounded by 10 s) once the attacker has printed its RESULT line,
 * while the sandbox still holds whatever it took; `$PROVIDER_PID` in
 * `args` becomes the provider's pid.
 */
function run({ asNobody, args, workspace = null, duringShell = null }) {
  const script = `
    const policy = cordon.readOnly();
    const args = ${JSON.stringify(args)}.map((a) => a === '$PROVIDER_PID' ? String(process.pid) : a);
    const ex = cordon.spawnIsolated([${JSON.stringify(attacker())}, ...args], { policy, deadlineMs: 30000${workspace ? `, workspace: ${JSON.stringify(workspace)}` : ''} });
    let text = '';
    let during = null;
    ex.protocol.resume();
    ex.stderr.on('data', (d) => {
      text += d;
      if (during === null && /^RESULT /m.test(text)) {
        during = {};
        const duringShell = ${JSON.stringify(duringShell)};
        if (duringShell) {
          const started = Date.now();
          const r = require('node:child_process').spawnSync('/bin/sh', ['-c', duringShell], { timeout: 10000 });
          during = { status: r.status, signal: r.signal, ms: Date.now() - started };
        }
        ex.stop();
      }
    });
    ex.wait().then((r) => process.stdout.write(JSON.stringify({ text, during, returncode: r.returncode })));
  `;
  const result = h.runProvider(script, { asNobody });
  if (result.skip) return result;
  assert.equal(result.error, undefined, result.error);
  return { ...result.value, results: h.parseResults(result.value.text) };
}

/** A host directory the sandbox identity owns (as a caller's workspace would be), with one file. */
function ownedWorkspace(asNobody) {
  const dir = fs.mkdtempSync('/var/tmp/cordon-host-reach-ws-');
  fs.chmodSync(dir, 0o755);
  fs.writeFileSync(path.join(dir, 'shared'), 'host data\n', { mode: 0o644 });
  // The identity the run gets: a uid-65534 provider's sandboxes run as its
  // first subordinate owner id, never as 65534 (owning the file is what lets
  // a lease or dnotify be attempted at all).
  const owner = asNobody ? h.nobodyOwner() : { uid: h.SANDBOX_UID, gid: h.SANDBOX_UID };
  assert.ok(owner, 'uid 65534 has a subordinate range (.ci/run adds one)');
  // A uid-65534 provider writes the file too (the lease probe's host
  // write): through the group, its own.
  const group = asNobody ? h.NOBODY_UID : owner.gid;
  if (process.geteuid() === 0) {
    fs.chownSync(dir, owner.uid, group);
    fs.chownSync(path.join(dir, 'shared'), owner.uid, group);
    fs.chmodSync(path.join(dir, 'shared'), 0o664);
  }
  return dir;
}

const PROVIDERS = [
  { label: 'root provider', asNobody: false },
  { label: 'provider of uid 65534 (no cgroup)', asNobody: true },
];

function probe(name, fn) {
  for (const { label, asNobody } of PROVIDERS) {
    const needsRoot = asNobody && process.geteuid() !== 0 ? 'needs root to run a provider as uid 65534' : false;
    test(`${name} (${label})`, { skip: skip ?? needsRoot, timeout: 90_000 }, (t) => fn(t, asNobody));
  }
}

describe('file leases, dnotify, signal owners and terminal input (fcntl/ioctl, A3)', () => {
  probe('a read lease on a bound file the sandbox owns is refused (EPERM), and the host writes that file at once', (t, asNobody) => {
    const workspace = ownedWorkspace(asNobody);
    try {
      const file = path.join(workspace, 'shared');
      // Without the rule the lease is taken and held with SIGIO ignored: the
      // host's write then waits out fs.lease-break-time (45 s; killed at 10 s).
      const outcome = run({ asNobody, args: ['lease', '/workspace/shared', '20'], workspace, duringShell: `echo host-write >> ${file}` });
      h.expectBlocked(outcome, 'lease', /Operation not permitted/);
      assert.equal(outcome.during.status, 0, `the host write did not complete: ${JSON.stringify(outcome.during)}`);
      assert.match(fs.readFileSync(file, 'utf8'), /host-write/);
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });

  probe('dnotify (F_NOTIFY) on a bound host directory is refused (EPERM)', (t, asNobody) => {
    const workspace = ownedWorkspace(asNobody);
    try {
      h.expectBlocked(run({ asNobody, args: ['dnotify', '/workspace'], workspace }), 'dnotify', /Operation not permitted/);
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });

  probe('F_SETOWN stays allowed but cannot name the provider: its host pid is no process in the sandbox (ESRCH)', (t, asNobody) => {
    h.expectBlocked(run({ asNobody, args: ['setown', '$PROVIDER_PID'] }), 'setown', /No such process/);
  });

  probe('TIOCSTI is refused by the filter (EPERM, where a non-terminal would say ENOTTY)', (t, asNobody) => {
    h.expectBlocked(run({ asNobody, args: ['tiocsti-filter'] }), 'tiocsti', /Operation not permitted/);
  });
});

describe('the host-wide pty quota (B4)', () => {
  probe('no pty can be opened, through /dev/ptmx or /dev/pts/ptmx, so kernel.pty.max cannot be drawn on', (t, asNobody) => {
    const outcome = run({ asNobody, args: ['ptys', '64', '10'] });
    h.expectBlocked(outcome, 'ptys', /^opened 0 of 64 \(Permission denied\)$/);
  });
});

describe('the kernel log (B5)', () => {
  probe('syslog(2) is refused (EPERM) even with kernel.dmesg_restrict=0', (t, asNobody) => {
    if (process.geteuid() !== 0) return t.skip('needs root to set kernel.dmesg_restrict=0 for the probe');
    const sysctl = '/proc/sys/kernel/dmesg_restrict';
    const before = fs.readFileSync(sysctl, 'utf8').trim();
    // Restored right after: with 0 any uid may read the log, which is what
    // the filter must hold against.
    fs.writeFileSync(sysctl, '0');
    try {
      h.expectBlocked(run({ asNobody, args: ['syslog'] }), 'syslog', /Operation not permitted/);
    } finally {
      fs.writeFileSync(sysctl, before);
    }
  });
});

describe('the raw mknod(2) call (B10)', () => {
  probe('SYS_mknod with a set-uid mode is refused (EPERM): glibc never makes this call, so only a raw one tests the rule', (t, asNobody) => {
    h.expectBlocked(run({ asNobody, args: ['raw-mknod', '/tmp/setuid-node'] }), 'raw-mknod', /Operation not permitted/);
  });
});
