'use strict';

// The adversarial battery: each test runs one attack (probe.c) inside a real
// sandbox and asserts that the attack fails AND that the host is unharmed.
// Ends with "security battery: N probes tried, N blocked".

const { after, before, describe, test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');

const cordon = require('../..');
const h = require('./harness');

const skip = h.skipReason();
if (skip) console.log(`# SKIPPED security battery: ${skip}`);

const tally = { tried: 0, blocked: 0 };

/**
 * A battery probe: counted as tried, and as blocked if every assertion held —
 * the attack's own and, after it, that the host is unharmed.
 */
function probe(name, fn, options = {}) {
  test(name, { skip: skip ?? false, timeout: 60_000, ...options }, async (t) => {
    tally.tried += 1;
    await fn(t);
    // Nothing of the attack is left (descriptors are compared across the
    // batch in "host afterwards").
    await h.hostUnharmed(rootsBefore, h.probe());
    tally.blocked += 1;
  });
}

let rootsBefore;

before(() => {
  if (skip) return;
  h.probe();
  rootsBefore = h.controlRoots();
});


describe('network', () => {
  for (const family of ['inet', 'inet6', 'netlink', 'packet']) {
    probe(`socket(AF_${family.toUpperCase()}) fails with EPERM`, async () => {
      const run = await h.attack([`socket-${family}`]);
      h.expectBlocked(run, `socket-${family}`, /Operation not permitted/);
    });
  }

  probe('a listener on host 127.0.0.1 is unreachable and sees no connection', async () => {
    let connections = 0;
    const server = net.createServer(() => { connections += 1; });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const run = await h.attack(['connect-host-loopback', String(server.address().port)]);
      h.expectBlocked(run, 'connect-host-loopback');
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  probe('an abstract unix socket opened on the host is unreachable', async () => {
    const name = `cordon-battery-${process.pid}`;
    let connections = 0;
    const server = net.createServer(() => { connections += 1; });
    await new Promise((resolve) => server.listen(`\0${name}`, resolve));
    try {
      const run = await h.attack(['connect-abstract-unix', name]);
      h.expectBlocked(run, 'connect-abstract-unix', /Connection refused|No such file/);
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  probe('DNS has neither a resolver config nor a UDP socket', async () => {
    h.expectBlocked(await h.attack(['dns']), 'dns');
  });
});

describe('filesystem', () => {
  for (const secret of ['/etc/shadow', '/proc/1/environ-of-host']) {
    probe(`${secret} is not readable`, async () => {
      const target = secret === '/etc/shadow' ? secret : `/proc/${process.pid}/environ`;
      h.expectBlocked(await h.attack(['read', target]), target);
    });
  }

  const hostDirs = {
    '/root': () => '/root',
    '/home': () => '/home',
    'the control-root base': () => h.controlRootBase(),
    'the default-TMPDIR control-root base': () => path.join(os.tmpdir(), `cordon-${process.geteuid()}`),
  };
  for (const [name, dirOf] of Object.entries(hostDirs)) {
    probe(`${name} does not exist inside`, async () => {
      const dir = dirOf();
      h.expectBlocked(await h.attack(['list', dir]), dir, /No such file/);
    });
  }

  probe('the sandbox init environment carries nothing of the provider', async () => {
    process.env.CORDON_BATTERY_SECRET = 'hunter2-battery';
    try {
      const run = await h.attack(['dump', '/proc/1/environ']);
      assert.match(run.text, /^DUMP \/proc\/1\/environ /m, 'the init environment was read');
      assert.doesNotMatch(run.text, /hunter2-battery/);
      assert.doesNotMatch(run.text, /CORDON_BATTERY_SECRET/);
    } finally {
      delete process.env.CORDON_BATTERY_SECRET;
    }
  });

  probe("another running sandbox's /tmp is invisible", async () => {
    const marker = `secret-${process.pid}`;
    let neighbour;
    const first = await h.attack(['write-then-hang', `/tmp/${marker}`], {}, async (execution, started) => {
      await started;
      neighbour = await h.attack(['read', `/tmp/${marker}`]);
      execution.stop();
    });
    assert.equal(first.results.get(`/tmp/${marker}`)?.verdict, 'open', 'the first sandbox wrote its file');
    h.expectBlocked(neighbour, `/tmp/${marker}`, /No such file/);
  });

  for (const [target, policy] of [['/workspace/x', 'readOnly'], ['/usr/x', 'workspaceWrite'], ['/x', 'workspaceWrite']]) {
    probe(`writing ${target} under ${policy}() fails`, async () => {
      const run = await h.attack(['write', target], { policy: cordon[policy]() });
      h.expectBlocked(run, target, /Read-only file system|Permission denied|No such file/);
    });
  }

  probe('a symlink in /tmp to /etc/shadow reaches nothing', async () => {
    h.expectBlocked(await h.attack(['symlink-escape']), 'symlink-escape', /No such file/);
  });

  probe('/tmp/../etc/shadow reaches nothing', async () => {
    h.expectBlocked(await h.attack(['read', '/tmp/../etc/shadow']), '/tmp/../etc/shadow');
  });
});


describe('disclosure', () => {
  probe("the sandbox init's environment is empty: bwrap runs with none", async () => {
    const run = await h.attack(['dump', '/proc/1/environ']);
    assert.match(run.text, /^DUMP \/proc\/1\/environ $/m, `the init's environment: ${run.text.slice(0, 300)}`);
  });

  probe('launcherEnvironment is refused before anything is spawned, so none of it can reach the sandbox', async () => {
    const secret = `launcher-secret-${process.pid}`;
    let run = null;
    try {
      run = await h.attack(['dump', '/proc/1/environ'], { launcherEnvironment: { CORDON_LAUNCHER_SECRET: secret } });
    } catch (error) {
      assert.equal(error.code, 'ERR_CORDON_INVALID_OPTIONS');
      assert.match(error.message, /launcherEnvironment.*\/proc\/1\/environ/);
    }
    assert.equal(run, null, `the option was accepted; the init's environment: ${run?.text.slice(0, 300)}`);
  });

  // The control root's name, seen from the host while the sandbox runs,
  // must appear in nothing the sandbox can read. (The default workspace is
  // a bind from the control root, and mountinfo names a bind's source: see
  // docs/security.md, "Not guaranteed"; this run has no workspace.)
  for (const file of ['/proc/1/environ', '/proc/self/environ', '/proc/self/mountinfo', '/proc/self/cmdline']) {
    probe(`${file} names no host path of the control root`, async () => {
      let roots = [];
      const run = await h.attack(['dump-then-hang', file], { policy: cordon.profile('untrusted') }, async (execution, started) => {
        await started;
        roots = h.controlRoots().filter((r) => !rootsBefore.includes(r));
        execution.stop();
      });
      assert.match(run.text, new RegExp(`^DUMP ${file} `, 'm'), 'the file was read');
      assert.equal(roots.length, 1, 'the run\'s control root was seen from the host');
      assert.ok(!run.text.includes(roots[0]), `${file} names the control root ${roots[0]}: ${run.text.slice(0, 400)}`);
      assert.ok(!run.text.includes(h.controlRootBase()), `${file} names the control-root base`);
    });
  }

  probe("the host's boot command line (/proc/cmdline) is not readable", async () => {
    h.expectBlocked(await h.attack(['read', '/proc/cmdline']), '/proc/cmdline', /Permission denied/);
  });
});

/** A provider-supplied host workspace the sandbox may write (docs/policy.md). */
function hostWorkspace() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-battery-ws-'));
  fs.chmodSync(dir, 0o755);
  h.ownForSandbox(dir);
  return dir;
}

/** Host files under `dir` (not following links) with a set-uid or set-gid bit. */
function setIdFiles(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { recursive: true })) {
    const stat = fs.lstatSync(path.join(dir, entry));
    if (stat.mode & 0o6000) found.push(`${entry} ${(stat.mode & 0o7777).toString(8)}`);
  }
  return found;
}

describe('set-id files', () => {
  probe('no call plants a set-uid or set-gid file in a host workspace', async () => {
    const workspace = hostWorkspace();
    try {
      const run = await h.attack(['setid-files', '/workspace'], { policy: cordon.workspaceWrite(), workspace });
      h.expectBlocked(run, 'setid-files', /plain-chmod=ok$/);
      assert.ok(fs.statSync(path.join(workspace, 'copy')).size > 0, 'the sandbox wrote its copy on the host');
      assert.deepEqual(setIdFiles(workspace), [], 'no host file carries a set-id bit');
    } finally {
      h.removeOwned(workspace);
    }
  });

  probe('no file capability or device node reaches a host workspace', async () => {
    const workspace = hostWorkspace();
    try {
      const run = await h.attack(['privileged-files', '/workspace'], { policy: cordon.workspaceWrite(), workspace });
      h.expectBlocked(run, 'privileged-files', /setxattr=Operation not permitted getxattr=absent mknod-chr=Operation not permitted/);
      assert.ok(fs.existsSync(path.join(workspace, 'capfile')), 'the sandbox wrote the file on the host');
      assert.ok(!fs.existsSync(path.join(workspace, 'mem')), 'no device node on the host');
    } finally {
      h.removeOwned(workspace);
    }
  });

  probe('every mount inside the sandbox is nosuid', async () => {
    const workspace = hostWorkspace();
    try {
      const policy = { ...structuredClone(cordon.workspaceWrite()) };
      policy.filesystem.extra = [{ path: '/opt', access: 'read' }];
      h.expectBlocked(await h.attack(['mounts-nosuid'], { policy, workspace }), 'mounts-nosuid');
    } finally {
      h.removeOwned(workspace);
    }
  });
});

describe('processes', () => {
  probe('host pids are invisible', async () => {
    h.expectBlocked(await h.attack(['see-host-pid', String(process.pid)]), 'see-host-pid');
  });

  probe('a host process of the sandbox uid can be neither signalled nor hit by kill(-1)', async () => {
    const sentinel = h.sandboxUidSentinel();
    const workspace = hostWorkspace();
    try {
      await sleep(100);
      assert.ok(h.alive(sentinel.pid), 'the sentinel runs before the attack');
      // Root: a workspace owned by the sentinel's uid, so the sandbox runs as
      // it too. A non-root provider: the sentinel is the provider's own uid,
      // the sandbox its first subordinate owner id.
      const options = { workspace };
      const signalled = await h.attack(['signal-host-pid', String(sentinel.pid)], options);
      const owner = process.geteuid() === 0 ? h.SANDBOX_UID : h.nobodyOwner()?.uid;
      assert.equal(signalled.receipt.confinement.planned.uid, owner);
      h.expectBlocked(signalled, 'signal-host-pid');
      h.expectBlocked(await h.attack(['kill-minus-one'], options), 'kill-minus-one');
      assert.ok(h.alive(sentinel.pid), 'the sentinel survived both attacks');
    } finally {
      sentinel.kill('SIGKILL');
      h.removeOwned(workspace);
    }
  });

  probe('ptrace fails with EPERM', async () => {
    h.expectBlocked(await h.attack(['ptrace']), 'ptrace', /Operation not permitted/);
  });

  probe('a setsid + double-forked grandchild ignoring SIGTERM does not outlive stop()', async () => {
    const marker = `9${String(process.pid).padStart(7, '0')}1`;
    const run = await h.attack(['outlive-stop', marker], { stop: { graceMs: 200, forceMs: 2000 } }, async (execution) => {
      for (let i = 0; i < 500 && h.processesWith(marker).length === 0; i += 1) await sleep(20); // up to 10 s
      assert.ok(h.processesWith(marker).length > 0, 'the grandchild started');
      execution.stop();
    });
    // SIGTERM ends the program; the pid namespace (and the cgroup) take the
    // SIGTERM-immune grandchild with it.
    assert.equal(run.receipt.stop.requested, true);
    assert.deepEqual(h.processesWith(marker), [], 'no process survives wait()');
  });

  probe('stop() while bwrap is still setting up leaves no sandbox process behind', async () => {
    const marker = `8${String(process.pid).padStart(7, '0')}2`;
    const run = await h.attack(['outlive-stop', marker], {}, async (execution) => {
      execution.stop();
    }).catch((error) => ({ error }));
    await sleep(100);
    assert.deepEqual(h.processesWith(marker), [], 'no process survives wait()');
    assert.ok(run.receipt || run.error?.code, 'wait() settled');
  });

  probe('a fork bomb stops at the pids ceiling and the host can still fork', async () => {
    const policy = { ...structuredClone(cordon.readOnly()), resources: { processes: 32 } };
    const run = await h.attack(['fork-bomb'], { policy });
    h.expectBlocked(run, 'fork-bomb', /Resource temporarily unavailable/);
    const forks = Number(/forks=(\d+)/.exec(run.results.get('fork-bomb').detail)[1]);
    // Without a cgroup (a non-root provider without a delegated subtree)
    // the bound is RLIMIT_NPROC, the policy's processes plus 512 for the
    // zombies of earlier runs (docs/security.md, "Resource ceilings").
    const nproc = run.receipt.confinement.planned.rlimits.find((r) => r.name === 'NPROC');
    const bound = run.receipt.confinement.planned.cgroup === null ? nproc.hard : 32;
    if (run.receipt.confinement.planned.cgroup === null) assert.equal(bound, 32 + 512);
    assert.ok(forks < bound, `${forks} forks under processes: 32 (bound ${bound})`);
    assert.equal(execFileSync('/bin/echo', ['host ok']).toString(), 'host ok\n');
  });
});

describe('teardown', () => {
  // What the provider does with a tree a sandbox left in its default
  // workspace: the run settles, the provider lives, the tree goes. The
  // provider runs in a process of its own (a crash must fail the test, not
  // end it) and reports whether its control roots are gone after wait().
  const LITTER = `
(async () => {
  const started = Date.now();
  const ex = cordon.spawnIsolated([probe, 'litter', '20000'], { policy: cordon.workspaceWrite() });
  let text = '';
  ex.stderr.on('data', (d) => { text += d; });
  ex.protocol.resume();
  const r = await ex.wait();
  const settledMs = Date.now() - started;
  const fs = require('node:fs');
  const base = require(${JSON.stringify(require.resolve('../../binding.js'))}).controlRootBase();
  const mine = () => fs.readdirSync(base).filter((n) => {
    try { return fs.readFileSync(base + '/' + n + '/owner', 'utf8').split(' ')[0] === String(process.pid); } catch { return false; }
  });
  let left = mine();
  for (let i = 0; i < 500 && left.length > 0; i += 1) { await new Promise((res) => setTimeout(res, 20)); left = mine(); }
  process.stdout.write(JSON.stringify({ text, returncode: r.returncode, settledMs, left }));
})();
`;
  // A provider killed mid-run leaves its control root; the next provider's
  // stale-root sweep (on its own thread, at its first launch) must remove
  // it whatever it holds. No sandbox writes into a control root any more
  // (a writable default workspace is a tmpfs), so the attacker's tree is
  // planted there from the host, as an older version's root could hold it.
  const DIE_MID_RUN = `
const ex = cordon.spawnIsolated([probe, 'litter', '1', 'hang'], { policy: cordon.workspaceWrite() });
ex.protocol.resume();
ex.stderr.on('data', (d) => { if (String(d).includes('RESULT litter')) { process.stdout.write(JSON.stringify(String(d))); process.kill(process.pid, 'SIGKILL'); } });
`;
  const NEXT_PROVIDER = (stale) => `
(async () => {
  const fs = require('node:fs');
  const ex = cordon.spawnIsolated([probe, 'exit', '0'], { policy: cordon.readOnly() });
  ex.stderr.resume(); ex.protocol.resume();
  await ex.wait();
  let gone = false;
  for (let i = 0; i < 500 && !gone; i += 1) { gone = !fs.existsSync(${JSON.stringify(stale)}); if (!gone) await new Promise((r) => setTimeout(r, 20)); }
  process.stdout.write(JSON.stringify({ gone }));
})();
`;
  probe("the next provider's stale-root sweep removes a dead provider's 25 000-level tree", async () => {
    const base = h.controlRootBase();
    const dead = h.runProvider(DIE_MID_RUN);
    assert.match(dead.error ?? '', /SIGKILL/, 'the first provider died mid-run');
    const stale = fs.readdirSync(base).filter((n) => {
      try {
        return fs.readFileSync(path.join(base, n, 'owner'), 'utf8').split(' ')[0] === String(dead.pid);
      } catch {
        return false;
      }
    });
    assert.equal(stale.length, 1, `one stale root: ${stale}`);
    const litter = path.join(base, stale[0], 'litter');
    fs.mkdirSync(litter);
    const planted = spawnSync(h.probe(), ['litter', '25000'], { cwd: litter, encoding: 'utf8' });
    assert.match(planted.stdout, /RESULT litter blocked nested=25000/, planted.stderr);
    const next = h.runProvider(NEXT_PROVIDER(path.join(base, stale[0])));
    assert.equal(next.error, undefined, next.error);
    assert.equal(next.value.gone, true, 'the stale root is gone');
  });

  // The last process of the sandbox's mount namespace frees its /tmp as it
  // exits: with 300 000 inodes there, seconds after bwrap was reaped, past
  // the forced rung's wait (forceMs 0: 100 ms). The namespace init is
  // already exiting then, and nothing of it can run again; the receipt said
  // containmentConfirmed false, and a session ended so kept its holder or
  // its workspace mount for good (round 12, R12-2).
  probe('a namespace still being torn down by the kernel after the forced rung (300 000 inodes in /tmp) is waited for and confirmed contained (round 12, R12-2)', async () => {
    const script = "import os\nos.close(os.open('/tmp/f', os.O_CREAT|os.O_WRONLY))\nfor i in range(300000): os.link('/tmp/f', '/tmp/%d' % i)\nprint('made', flush=True)";
    const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', script], { policy: cordon.readOnly(), stop: { graceMs: 0, forceMs: 0 } });
    let text = '';
    ex.stderr.on('data', (d) => { text += d; });
    ex.protocol.resume();
    const r = await ex.wait();
    assert.equal(r.returncode, 0, text);
    assert.match(text, /made/);
    assert.equal(r.receipt.stop.containmentConfirmed, true, JSON.stringify(r.receipt.stop));
  });

  // Not in the non-root pass: both providers are run from here by the root
  // pass (the uid-65534 one through runProvider), and this process is not
  // root.
  for (const asNobody of h.NONROOT_PASS ? [] : [false, true]) {
    const who = asNobody ? 'a non-root provider' : 'a root provider';
    probe(`${who} survives a 20 000-level tree with locked directories, FIFOs, sockets and links, and removes it`, async (t) => {
      const run = h.runProvider(LITTER, { asNobody });
      if (run.skip) return t.skip(run.skip);
      assert.equal(run.error, undefined, run.error);
      assert.match(run.value.text, /RESULT litter blocked nested=20000/, run.value.text.slice(0, 300));
      assert.equal(run.value.returncode, 0);
      assert.deepEqual(run.value.left, [], 'the control root and everything in it are gone');
    });
  }
});

describe('pid namespace', () => {
  for (const name of ['pidfd-getfd', 'process-vm-readv']) {
    probe(`${name} on the namespace init fails with EPERM`, async () => {
      h.expectBlocked(await h.attack([name]), name, /Operation not permitted/);
    });
  }

  // The attack: rewrite the init through /proc/1/mem so that it clears its
  // parent-death signal and reports "exited 0" to bwrap, which then exits
  // while the init and the program live on, holding the streams open.
  probe('a program that fakes its exit through the init neither outlives wait() nor keeps it pending', async () => {
    let settled;
    const run = h.attack(['fake-exit', 'open'], { stop: { graceMs: 200, forceMs: 500 } });
    const timer = new Promise((resolve) => { settled = setTimeout(resolve, 15_000, null); });
    const outcome = await Promise.race([run, timer]);
    clearTimeout(settled);
    assert.ok(outcome, 'wait() settled within 15 s');
    assert.equal(outcome.results.get('fake-exit')?.detail, 'init rewritten; the host checks that nothing outlives wait()');
    assert.equal(outcome.receipt.stop.containmentConfirmed, true);
  });

  const WITHOUT_CGROUP = `
const runs = [];
const once = (mode) => new Promise((resolve) => {
  const started = Date.now();
  const ex = cordon.spawnIsolated([probe, 'fake-exit', mode], { policy: cordon.readOnly(), stop: { graceMs: 200, forceMs: 500 } });
  let text = '';
  ex.stderr.on('data', (d) => { text += d; });
  ex.protocol.resume();
  const late = setTimeout(() => resolve({ mode, settled: false }), 10_000);
  ex.wait().then((r) => { clearTimeout(late); resolve({ mode, settled: true, ms: Date.now() - started, text,
    cgroup: r.receipt.confinement.planned.cgroup, contained: r.receipt.stop.containmentConfirmed }); });
});
(async () => {
  for (const mode of ['closed', 'open']) runs.push(await once(mode));
  process.stdout.write(JSON.stringify(runs));
  process.exit(0);
})();
`;
  probe('without a cgroup (non-root provider), a faked exit is killed with the whole pid namespace before wait() settles', async (t) => {
    const marker = h.probe();
    try {
      const run = h.runProvider(WITHOUT_CGROUP, { asNobody: true });
      if (run.skip) return t.skip(run.skip);
      assert.equal(run.error, undefined, run.error);
      for (const result of run.value) {
        assert.equal(result.settled, true, `wait() settled (streams ${result.mode})`);
        assert.match(result.text, /RESULT fake-exit blocked init rewritten/, `the attack ran (${result.mode})`);
        assert.equal(result.cgroup, null, 'no cgroup helped');
        assert.equal(result.contained, true, `containment confirmed (${result.mode})`);
      }
      assert.deepEqual(h.processesWith(marker), [], 'no init or program of the attack survives its provider');
    } finally {
      for (const pid of h.processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  });

  const STOP_WITHOUT_CGROUP = (marker) => `
const until = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
(async () => {
  const fs = require('node:fs');
  // This script's own command line holds the marker too, and so does its
  // pair maker's (cordon-pairs shares this process's memory).
  const grandchild = () => fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p) && p !== String(process.pid)).some((p) => {
    try {
      const maker = /^Name:\\tcordon-pairs$/m.test(fs.readFileSync('/proc/' + p + '/status', 'utf8')) && /^NSpid:\\t\\d+$/m.test(fs.readFileSync('/proc/' + p + '/status', 'utf8'));
      return !maker && fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').includes(${JSON.stringify(marker)});
    } catch { return false; }
  });
  const ex = cordon.spawnIsolated([probe, 'outlive-stop', ${JSON.stringify(marker)}], { policy: cordon.readOnly(), stop: { graceMs: 200, forceMs: 1000 } });
  ex.stderr.resume(); ex.protocol.resume();
  let started = false;
  for (let i = 0; i < 250 && !started; i += 1) { started = grandchild(); if (!started) await until(20); }
  ex.stop();
  const r = await ex.wait();
  const burn = cordon.spawnIsolated([probe, 'cpu-burn'], { policy: cordon.readOnly(), deadlineMs: 300, stop: { graceMs: 100, forceMs: 1000 } });
  burn.stderr.resume(); burn.protocol.resume();
  const b = await burn.wait();
  process.stdout.write(JSON.stringify({ started, survivor: grandchild(), cgroup: r.receipt.confinement.planned.cgroup,
    contained: r.receipt.stop.containmentConfirmed, burnReason: b.receipt.stop.reason, burnContained: b.receipt.stop.containmentConfirmed }));
})();
`;
  probe('without a cgroup (non-root provider), stop() ends a setsid, SIGTERM-immune grandchild and a deadline ends a CPU burn', async (t) => {
    const marker = `7${String(process.pid).padStart(7, '0')}3`;
    try {
      const run = h.runProvider(STOP_WITHOUT_CGROUP(marker), { asNobody: true });
      if (run.skip) return t.skip(run.skip);
      assert.equal(run.error, undefined, run.error);
      assert.deepEqual(run.value, { started: true, survivor: false, cgroup: null, contained: true, burnReason: 'deadline', burnContained: true });
      assert.deepEqual(h.processesWith(marker), [], 'nothing of the run outlives its provider');
    } finally {
      for (const pid of h.processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('resources', () => {
  probe('a memory bomb is stopped inside the sandbox alone', async () => {
    const policy = { ...structuredClone(cordon.readOnly()), resources: { memoryBytes: 64 << 20 } };
    const run = await h.attack(['memory-bomb'], { policy });
    const result = run.results.get('memory-bomb');
    // Either RLIMIT_AS refuses the mapping (ENOMEM) or the cgroup OOM-kills it.
    const killed = run.signal === 'SIGKILL' || run.receipt.confinement.cgroupOutcome?.oomKills > 0;
    assert.ok(killed || result?.verdict === 'blocked', `memory bomb: ${result?.detail} ${run.signal}`);
    if (result) assert.ok(Number(/touched=(\d+)/.exec(result.detail)[1]) <= 64, result.detail);
  });

  // Not in the non-root pass: a uid-65534 provider has no cgroup (no
  // delegated subtree in CI), so no tree ceiling; its per-process ceiling is
  // "a memory bomb is stopped inside the sandbox alone", and
  // docs/security.md says what is not bounded without a cgroup.
  if (!h.NONROOT_PASS) probe('a memory bomb spread over four processes is OOM-killed by the tree ceiling', async (t) => {
    const policy = { ...structuredClone(cordon.readOnly()), resources: { memoryBytes: 64 << 20 } };
    // Each child touches 40 MiB (within its own 64 MiB address space); the
    // tree needs 160 MiB. Only the cgroup's memory limit can stop that.
    const run = await h.attack(['tree-memory-bomb', '40'], { policy, deadlineMs: 20_000 });
    if (run.receipt.confinement.planned.cgroup === null) {
      t.skip('no cgroup on this host: the tree ceiling is not enforced (see docs/security.md)');
      return;
    }
    h.expectBlocked(run, 'tree-memory-bomb');
    assert.ok(run.receipt.confinement.cgroupOutcome.oomKills >= 1, JSON.stringify(run.receipt.confinement.cgroupOutcome));
    assert.equal(execFileSync('/bin/echo', ['host ok']).toString(), 'host ok\n');
  });

  probe('a CPU burn is ended by the deadline', async () => {
    const run = await h.attack(['cpu-burn'], { deadlineMs: 300, stop: { graceMs: 100, forceMs: 1000 } });
    assert.equal(run.receipt.stop.reason, 'deadline');
    assert.ok(run.ms < 5000, `took ${run.ms} ms`);
  });

  probe('a disk fill ends at the tmpfs size, not the host disk', async () => {
    const run = await h.attack(['disk-fill']);
    h.expectBlocked(run, 'disk-fill', /No space left on device/);
    assert.ok(run.receipt.confinement.planned.temp.sizeBytes > 0);
    const wrote = Number(/wrote=(\d+)/.exec(run.results.get('disk-fill').detail)[1]);
    assert.ok(wrote <= run.receipt.confinement.planned.temp.sizeBytes / 2 ** 20, `${wrote} MiB`);
  });

  probe('/dev is read-only and /dev/shm ends at its planned size', async () => {
    const run = await h.attack(['write', '/dev/planted']);
    h.expectBlocked(run, '/dev/planted', /Read-only file system/);
    const writable = run.receipt.confinement.planned.writableFilesystems;
    assert.ok(!writable.some((w) => w.mount === '/dev'), JSON.stringify(writable));
    const shm = writable.find((w) => w.mount === '/dev/shm');
    assert.equal(shm.kind, 'tmpfs');
    const fill = await h.attack(['fill', '/dev/shm']);
    h.expectBlocked(fill, 'fill:/dev/shm', /No space left on device/);
    const wrote = Number(/wrote=(\d+)/.exec(fill.results.get('fill:/dev/shm').detail)[1]);
    assert.ok(wrote <= shm.sizeBytes / 2 ** 20, `${wrote} MiB in a ${shm.sizeBytes}-byte /dev/shm`);
  });

  probe('filling every writable filesystem at once ends in ENOSPC, not an OOM kill', async () => {
    // Default workspace under workspaceWrite(): a bounded tmpfs too. With a
    // 64 MiB memory ceiling, every tmpfs together stays within half of it.
    const policy = { ...structuredClone(cordon.workspaceWrite()), resources: { memoryBytes: 64 << 20 } };
    const run = await h.attack(['fill', '/dev/shm', '/tmp', '/workspace'], { policy });
    assert.equal(run.signal, null, `the sandbox was killed: ${run.text.slice(0, 300)}`);
    assert.equal(run.receipt.confinement.cgroupOutcome?.oomKills ?? 0, 0);
    const writable = run.receipt.confinement.planned.writableFilesystems;
    assert.deepEqual(writable.map((w) => [w.mount, w.kind]), [['/dev/shm', 'tmpfs'], ['/tmp', 'tmpfs'], ['/workspace', 'tmpfs']]);
    let total = 0;
    for (const { mount, sizeBytes } of writable) {
      h.expectBlocked(run, `fill:${mount}`, /No space left on device/);
      const wrote = Number(/wrote=(\d+)/.exec(run.results.get(`fill:${mount}`).detail)[1]);
      assert.ok(wrote <= sizeBytes / 2 ** 20, `${mount}: ${wrote} MiB > ${sizeBytes} bytes`);
      total += sizeBytes;
    }
    assert.ok(total <= (64 << 20) / 2, `tmpfs total ${total} within half the memory ceiling`);
  });

  probe('descriptor exhaustion ends at the NOFILE ceiling', async () => {
    const run = await h.attack(['fd-exhaustion']);
    h.expectBlocked(run, 'fd-exhaustion');
    assert.ok(Number(/opened=(\d+)/.exec(run.results.get('fd-exhaustion').detail)[1]) < 256);
  });

  // 512 MiB through each stream, 4x the bound on the provider's RSS growth:
  // memory that scaled with the flood would fail this.
  for (const [stream, attackName] of [['stdout', 'flood-stdout'], ['fd 3', 'flood-protocol']]) {
    probe(`a 512 MiB flood on ${stream} keeps host memory bounded`, async () => {
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      const watch = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 20);
      try {
        const run = await h.attack([attackName, '512']);
        assert.equal(run.returncode, 0);
      } finally {
        clearInterval(watch);
      }
      assert.ok(peak - rssBefore < 128 * 2 ** 20, `RSS grew ${(peak - rssBefore) >> 20} MiB`);
    });
  }
});

describe('identity', () => {
  probe('no capabilities, no_new_privs, seccomp filter mode', async () => {
    h.expectBlocked(await h.attack(['identity']), 'identity');
  });

  probe('no nested user namespace', async () => {
    h.expectBlocked(await h.attack(['new-user-namespace']), 'new-user-namespace');
  });

  probe('the sandbox is never uid 0 on the host', async () => {
    let hostUid;
    let cgroupLines;
    const run = await h.attack(['hang'], {}, async (execution, started) => {
      await started;
      const status = fs.readFileSync(`/proc/${execution.pid}/status`, 'utf8');
      hostUid = Number(/^Uid:\s+(\d+)/m.exec(status)[1]);
      // bwrap, the namespace init it forked, and the program below it.
      const tree = [execution.pid];
      for (let i = 0; i < tree.length && tree.length < 16; i += 1) {
        tree.push(...fs.readFileSync(`/proc/${tree[i]}/task/${tree[i]}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
      }
      cgroupLines = tree.map((pid) => fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
      execution.stop();
    });
    // bwrap joined the run's cgroup before it forked anything (it waits for
    // its options until the launcher has moved it), so the init and the
    // program it forks are inside too: each one's pids/memory (v1) or
    // unified (v2) line names the leaf.
    assert.ok(cgroupLines.length >= 3, `bwrap, init and program: ${cgroupLines.length} processes`);
    for (const leaf of run.receipt.confinement.planned.cgroup?.paths ?? []) {
      const name = path.basename(leaf);
      cgroupLines.forEach((lines, i) => assert.match(lines, new RegExp(`/cordon/${name}$`, 'm'), `process ${i} of the tree is in ${leaf}`));
    }
    if (process.geteuid() === 0) {
      assert.ok(hostUid >= h.RUN_UID_FIRST && hostUid < h.RESERVED_UIDS.end, `per-run uid ${hostUid}`);
    } else {
      assert.equal(run.receipt.confinement.planned.uidAllocation, 'subordinate-per-run');
      assert.notEqual(hostUid, process.geteuid(), 'not the provider\'s uid');
    }
    assert.equal(run.receipt.confinement.planned.uid, hostUid);
    assert.notEqual(hostUid, 0);
    assert.notEqual(run.receipt.confinement.planned.uid, 0);
  });

  // What a host process of "nobody" (65534, shared by ordinary daemons) tries
  // on a running sandbox: read its environment (a secret passed in `env`) and
  // its files through /proc. Both need ptrace-read access, which a matching
  // uid grants: it fails only because sandboxes run as a uid of their own.
  // Not in the non-root pass: there uid 65534 is the provider itself, which
  // owns its sandboxes' user namespaces and so holds CAP_SYS_PTRACE over
  // them (measured: it lists /proc/<pid>/root of its sandboxed program).
  // The provider is trusted with its own sandboxes (docs/security.md, "A
  // non-root provider"); a host process of a third uid needs root to start.
  const NOBODY_PEEK = `
const fs = require('node:fs');
const tryCode = (fn) => { try { fn(); return 'read'; } catch (e) { return e.code; } };
const pid = process.argv[1];
process.stdout.write(JSON.stringify({
  environ: tryCode(() => fs.readFileSync('/proc/' + pid + '/environ')),
  root: tryCode(() => fs.readdirSync('/proc/' + pid + '/root/')),
}));`;
  if (!h.NONROOT_PASS) probe('a host process of uid 65534 (nobody) can read neither the environment nor the files of a sandboxed program', async () => {
    const secret = `cordon-secret-${process.pid}-${Date.now()}`;
    const execution = cordon.spawnIsolated(['/bin/sh', '-c', 'echo "got=$CORDON_SECRET"; exec /bin/sleep 30'], {
      policy: { ...cordon.readOnly(), environment: { allow: ['CORDON_SECRET'] } }, env: { CORDON_SECRET: secret },
    });
    const outcome = execution.wait();
    execution.protocol.resume();
    try {
      const [first] = await once(execution.stderr, 'data');
      assert.equal(first.toString(), `got=${secret}\n`, 'the sandbox received the secret');
      // The program among bwrap's descendants: the one whose environment (read
      // as root) holds the secret, so the peek below aims at the right target.
      // The shell may be inside its exec of sleep at this moment (its environ
      // reads empty while the image is replaced), so look again until the
      // holder settles.
      const findHolder = () => {
        const tree = [execution.pid];
        for (let i = 0; i < tree.length && tree.length < 16; i += 1) {
          tree.push(...fs.readFileSync(`/proc/${tree[i]}/task/${tree[i]}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
        }
        return tree.find((pid) => {
          try { return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(secret); } catch { return false; }
        });
      };
      let holder = findHolder();
      for (let tries = 0; !holder && tries < 100; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        holder = findHolder();
      }
      assert.ok(holder, 'a sandbox process holds the secret in its environment');
      const peek = spawnSync(process.execPath, ['-e', NOBODY_PEEK, String(holder)], {
        uid: h.NOBODY_UID, gid: h.NOBODY_UID, cwd: '/', encoding: 'utf8', env: {}, timeout: 30_000,
      });
      assert.equal(peek.status, 0, peek.stderr);
      assert.deepEqual(JSON.parse(peek.stdout), { environ: 'EACCES', root: 'EACCES' });
    } finally {
      execution.stop();
      execution.stderr.resume();
    }
    const { receipt } = await outcome;
    assert.equal(receipt.confinement.planned.uidAllocation, 'per-run');
    assert.ok(receipt.confinement.planned.uid >= h.RUN_UID_FIRST, `uid ${receipt.confinement.planned.uid}`);
  }, { skip: skip ?? (process.geteuid() === 0 ? false : 'needs root: a host process of another uid must be started') });

  // Per-user kernel quotas are per host uid: a sandbox that takes them all
  // must not starve another. inotify instances (fs.inotify.max_user_instances)
  // were one; inotify is now denied outright (ENOSYS: it reported host
  // activity on bound host directories), so no sandbox holds any.
  probe('inotify is unavailable (ENOSYS), so no sandbox can take its uid\'s inotify instances', async () => {
    const hog = await h.attack(['inotify-hog'], {}, async (execution, started) => {
      await started;
      execution.stop();
    });
    assert.match(hog.results.get('inotify-hog')?.detail ?? '', /^held=0 then Function not implemented/, hog.text);
  });

  // The POSIX message queue byte quota (RLIMIT_MSGQUEUE) was per host uid
  // too, and a non-root provider's sandbox's queues were charged to the
  // provider as well (quotas.test.js): mq_open is now denied (ENOSYS) and
  // the rlimit is 0, so no sandbox holds any.
  probe('POSIX message queues are unavailable (ENOSYS), so no sandbox can take its uid\'s message-queue bytes', async () => {
    const hog = await h.attack(['mqueue-hog'], {}, async (execution, started) => {
      await started;
      execution.stop();
    });
    assert.match(hog.results.get('mqueue-hog')?.detail ?? '', /^held=0 then Function not implemented/, hog.text);
  });

  // Pipe buffer pages too (fs.pipe-user-pages-soft, per host uid): past it
  // every new pipe of that uid shrinks to a page or two.
  probe('a sandbox holding its uid\'s pipe-buffer pages leaves a concurrent sandbox full-size pipes', async () => {
    let neighbour;
    const hog = await h.attack(['pipe-hog'], {}, async (execution, started) => {
      await started;
      neighbour = await h.attack(['pipe-available']);
      execution.stop();
    });
    assert.match(hog.results.get('pipe-hog').detail, /children_with_shrunk_pipes=[1-9]/, 'the hog exhausted its uid\'s pipe pages');
    h.expectBlocked(neighbour, 'pipe-available');
    assert.notEqual(neighbour.receipt.confinement.planned.uid, hog.receipt.confinement.planned.uid, 'two host uids');
  });

  probe('the receipt records every confinement layer planned', async () => {
    const { receipt } = await h.attack(['exit', '0']);
    const confinement = receipt.confinement.planned;
    assert.equal(confinement.seccomp.profile, 'cordon-default-v5');
    assert.ok(confinement.seccomp.denied.includes('ptrace'));
    const names = confinement.rlimits.map((r) => r.name);
    assert.deepEqual(names, ['AS', 'NPROC', 'NOFILE', 'FSIZE', 'CPU', 'CORE', 'RTPRIO', 'NICE', 'RTTIME', 'SIGPENDING', 'MSGQUEUE', 'MEMLOCK']);
    assert.equal(confinement.temp.kind, 'tmpfs');
    if (confinement.cgroup === null) console.log('# note: no cgroup on this host; rlimits only');
    else assert.match(confinement.cgroup.version, /^v[12]$/);
  });
});

describe('host afterwards', () => {
  after(() => {
    if (!skip) console.log(`security battery: ${tally.tried} probes tried, ${tally.blocked} blocked`);
  });

  probe('no control root, sandbox process, zombie or descriptor is left behind', async () => {
    // Descriptors: compared across a batch of runs, so the Node runtime's
    // own lazily-opened descriptors (from earlier tests) do not count.
    const fds = h.openFdCount();
    for (const args of [['exit', '0'], ['crash'], ['fork-bomb'], ['fd-exhaustion']]) await h.attack(args);
    // Control roots, zombies and this battery's sandbox processes (scoped to its attacker
    // binary: other suites may run sandboxes of the same uid) go asynchronously: polled.
    await h.hostUnharmed(rootsBefore, h.probe());
    const after = await h.settledFdCount(fds);
    assert.ok(after <= fds, `descriptors after the batch: ${after}, ${fds} before`);
  });
});
