'use strict';

// Round 3: an outside attack round against the sandbox (docs/security.md's
// threat model), each blocked attack kept as a probe. The attacker is
// round3.c (compiled here with `cc -static`, like probe.c); every probe
// asserts that the attack fails AND that the host is unharmed afterwards.
// Each attack reports "open" when round3 runs directly on this host as root
// (outside any sandbox) — noted per probe — so none of them is vacuous.
// Attacks that succeeded are reproduced in findings/*.repro.js instead.
// Ends with "round 3: N probes tried, N blocked".

const { before, describe, test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const cordon = require('../..');
const h = require('./harness');

const skip = h.skipReason();
if (skip) console.log(`# SKIPPED round 3: ${skip}`);

const tally = { tried: 0, blocked: 0 };
let rootsBefore = [];
let fdsBefore = 0;

/** round3.c, compiled once (static: the sandbox has no loader of its own). */
function attacker() {
  return h.compiled('round3.c');
}

/** harness.attack with round3 as the program. */
async function attack(args, options = {}, during = null) {
  const { policy = cordon.readOnly(), ...rest } = options;
  const execution = cordon.spawnIsolated([attacker(), ...args], { policy, ...rest });
  const started = new Promise((resolve) => execution.stderr.once('data', resolve));
  let text = '';
  execution.stderr.on('data', (chunk) => { if (text.length < 1 << 20) text += chunk; });
  const protocolChunks = [];
  execution.protocol.on('data', (chunk) => protocolChunks.push(chunk));
  const ended = Promise.all([
    new Promise((resolve) => execution.stderr.on('end', resolve)),
    new Promise((resolve) => execution.protocol.on('end', resolve)),
  ]);
  if (during) await during(execution, started, () => text);
  const outcome = await execution.wait();
  await ended;
  return { ...outcome, text, protocol: Buffer.concat(protocolChunks), results: h.parseResults(text) };
}

/** Waits until the attacker has printed its RESULT line (it then holds), or has ended. */
async function untilResult(text, execution) {
  let ended = false;
  execution.wait().then(() => {}, () => {}).finally(() => { ended = true; });
  while (!ended && !/^RESULT /m.test(text())) await sleep(20);
}

/** As battery.test.js: the host forks, and nothing of the attack is left. */
function hostUnharmed() {
  return h.hostUnharmed(rootsBefore, attacker());
}

function probe(name, fn, options = {}) {
  test(name, { skip: skip ?? false, timeout: 90_000, ...options }, async (t) => {
    tally.tried += 1;
    await fn(t);
    await hostUnharmed();
    tally.blocked += 1;
  });
}

before(async () => {
  if (skip) return;
  attacker();
  // One run first, as spawn-hygiene does: process-wide state the first
  // launch creates once (the launcher's supervision runtime: an epoll and
  // its waker) is not a descriptor a probe left behind.
  const warm = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
  warm.protocol.resume();
  warm.stderr.resume();
  await warm.wait();
  rootsBefore = h.controlRoots();
  fdsBefore = h.openFdCount();
});

describe('kernel interfaces a default-allow filter could forget', () => {
  // Each of these reports "open" when round3 runs as root on this host.
  probe('open_by_handle_at ("shocker": files by handle, past every bind mount) fails with EPERM', async () => {
    h.expectBlocked(await attack(['open-by-handle']), 'open-by-handle', /Operation not permitted/);
  });

  probe('an alarm timer (CLOCK_BOOTTIME_ALARM: wakes the host) fails with EPERM', async () => {
    h.expectBlocked(await attack(['alarm-timer']), 'alarm-timer', /Operation not permitted/);
  });

  probe('the kernel log (syslog READ_ALL) is not readable', async () => {
    h.expectBlocked(await attack(['syslog']), 'syslog', /Operation not permitted/);
  });

  probe('fanotify (watching a whole mount, host writes included) is ENOSYS', async () => {
    // Was EPERM (a mount mark needs a capability); fanotify_init is now
    // denied outright (round 4, R4-1: inode marks need none since 5.13).
    h.expectBlocked(await attack(['fanotify']), 'fanotify', /Function not implemented/);
  });

  probe('a seccomp filter of its own that allows everything does not lift the sandbox filter', async () => {
    h.expectBlocked(await attack(['stacked-allow']), 'stacked-allow', /Operation not permitted/);
  });

  probe('no real-time scheduling (SCHED_FIFO would starve every normal process, the provider included)', async () => {
    h.expectBlocked(await attack(['rt-sched']), 'rt-sched', /Operation not permitted/);
  });

  probe('a memfd cannot be made set-uid (memfd_create is ENOSYS; fchmod 04755 would be EPERM)', async () => {
    h.expectBlocked(await attack(['memfd-setuid']), 'memfd-setuid', /Function not implemented/);
  });

  probe('kernel AIO (io_setup) is ENOSYS: the host-wide fs.aio-max-nr cannot be taken', async () => {
    // Was findings/aio-host-quota.repro.js: io_setup took all of the
    // host's AIO events and every host process then got EAGAIN. As root on
    // the host, round3 aio-hog holds the whole quota ("open").
    const aioBefore = Number(fs.readFileSync('/proc/sys/fs/aio-nr', 'utf8'));
    let during = null;
    const run = await attack(['aio-hog', '1'], { deadlineMs: 30_000 }, async (execution, started, text) => {
      await untilResult(text, execution);
      during = Number(fs.readFileSync('/proc/sys/fs/aio-nr', 'utf8'));
      execution.stop();
    });
    h.expectBlocked(run, 'aio-hog', /held 0 aio events \(io_setup then: Function not implemented\)/);
    assert.ok(during <= aioBefore + 64, `the host's AIO events in use went from ${aioBefore} to ${during} while the sandbox ran`);
  });

  probe('inotify is ENOSYS: host activity on the bound /usr cannot be watched', async () => {
    // Was findings/inotify-host-activity.repro.js: a watch on /usr/bin
    // logged every host program run, by name, as it ran. As root on the
    // host, round3 watch-host gets its watch ("open").
    h.expectBlocked(await attack(['watch-host', '/usr/bin', '1']), 'watch-host', /Function not implemented/);
  });

  probe('a host sysctl cannot be written (/proc/sys/kernel/domainname)', async () => {
    // As root on the host this write succeeds (not run there: it would change the host's domain name).
    const before = fs.readFileSync('/proc/sys/kernel/domainname', 'utf8');
    h.expectBlocked(await attack(['sysctl-write']), 'sysctl-write');
    assert.equal(fs.readFileSync('/proc/sys/kernel/domainname', 'utf8'), before);
  });
});

describe('the provider\'s terminal', () => {
  // The provider runs under `script`, so it has a controlling terminal; the
  // sandbox's new session must have none. round3 run under `script` on the
  // host injects into the terminal ("open").
  const hasScript = fs.existsSync('/usr/bin/script');
  probe('TIOCSTI through /dev/tty cannot push input into the provider\'s terminal', async () => {
    const root = path.join(__dirname, '..', '..');
    const provider = `
      const cordon = require(${JSON.stringify(root)});
      const ex = cordon.spawnIsolated([${JSON.stringify(attacker())}, 'tiocsti'], { policy: cordon.readOnly() });
      let text = ''; ex.stderr.on('data', (d) => { text += d; }); ex.protocol.resume();
      ex.wait().then(() => { require('fs').writeFileSync(process.env.R3_OUT, text); });
    `;
    const out = path.join(os.tmpdir(), `cordon-round3-tty-${process.pid}`);
    const script = `${out}.js`;
    fs.writeFileSync(script, provider);
    try {
      const run = spawnSync('/usr/bin/script', ['-qec', `${process.execPath} ${script}`, '/dev/null'], {
        encoding: 'utf8', timeout: 30_000, env: { ...process.env, R3_OUT: out }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      assert.equal(run.status, 0, `the provider under script failed: ${run.stderr}${run.stdout}`);
      const results = h.parseResults(fs.readFileSync(out, 'utf8'));
      assert.equal(results.get('tiocsti')?.verdict, 'blocked', `tiocsti: ${JSON.stringify(results.get('tiocsti'))}`);
      assert.match(results.get('tiocsti').detail, /No such device or address/, 'no controlling terminal in the sandbox');
      assert.doesNotMatch(run.stdout, /#/, 'nothing was injected into the terminal');
    } finally {
      fs.rmSync(out, { force: true });
      fs.rmSync(script, { force: true });
    }
  }, { skip: skip ?? (hasScript ? false : 'no /usr/bin/script (util-linux) to give the provider a terminal') });
});

describe('host workspace', () => {
  probe('a hard link to a host set-uid binary cannot be made in a host workspace on the same filesystem', async () => {
    // /var/tmp is on the root filesystem with /usr here; as root on the host the same link succeeds.
    const target = ['/usr/bin/passwd', '/usr/bin/su', '/usr/bin/mount'].find((file) => {
      try { return (fs.statSync(file).mode & 0o4000) !== 0; } catch { return false; }
    });
    if (!target) return;
    const workspace = fs.mkdtempSync('/var/tmp/cordon-round3-ws-');
    fs.chmodSync(workspace, 0o755);
    h.ownForSandbox(workspace);
    try {
      const run = await attack(['hardlink-setuid', target, '/workspace/link'], { policy: cordon.workspaceWrite(), workspace });
      h.expectBlocked(run, 'hardlink-setuid', /cross-device|Operation not permitted|No such file/);
      assert.deepEqual(fs.readdirSync(workspace), [], 'nothing was linked on the host');
    } finally {
      h.removeOwned(workspace);
    }
  });
});

describe('the provider\'s own process', () => {
  probe('descriptors sent over fd 3 (SCM_RIGHTS: stdout, fd 3 itself, a pipe, a /tmp file) neither leak into the provider nor hold wait()', async () => {
    // A first attack opens whatever this Node opens lazily and keeps (under CI
    // load Node 24 once showed two more descriptors after the one attack); the
    // second, counted one must then install nothing that stays.
    await attack(['pass-fds', '200']);
    const before = h.openFds();
    const started = Date.now();
    const run = await attack(['pass-fds', '200']);
    const detail = run.results.get('pass-fds')?.detail ?? '';
    const sent = Number(/sent (\d+)/.exec(detail)?.[1]);
    if (h.kernelRefusesPassedFds()) {
      // fd 3's host end refuses descriptors (SO_PASSRIGHTS off): the first
      // sendmsg fails, nothing is queued (crates/passed-fds/src/refuse.rs).
      assert.equal(sent, 0, `the kernel refused the descriptors: ${detail}`);
      assert.match(detail, /Operation not permitted/);
    } else {
      assert.ok(sent > 0, `the attacker sent descriptors: ${run.text.slice(0, 200)}`);
    }
    assert.equal(run.returncode, 0);
    assert.ok(Date.now() - started < 20_000, 'wait() settled although the sandbox\'s own fd 3 and stdout were in flight');
    assert.equal(run.protocol.length, sent, 'the provider read exactly the bytes sent, no more');
    // Descriptors of other async work come and go; one installed from the message would stay.
    let added = [];
    for (let i = 0; i < 100; i += 1) {
      const now = h.openFds();
      added = [...now].filter(([fd, target]) => before.get(fd) !== target);
      if (added.length === 0) break;
      await sleep(20);
    }
    assert.deepEqual(added, [], 'no descriptor was installed in the provider');
    assert.equal(run.receipt.stop.containmentConfirmed, true);
  });

  probe('stdout, stderr and fd 3 hidden in an unreachable in-flight SCM_RIGHTS cycle do not hold wait() open', async () => {
    // After the program exits only the kernel's unix garbage collector can
    // close those descriptors, and it runs only when some unix socket is
    // released: on a quiet host wait() hung here for minutes (5 min, then the
    // timeout) until the launcher released a socket pair of its own after the
    // namespace emptied (supervisor.rs, collect_in_flight_descriptors).
    const started = Date.now();
    const run = await attack(['inflight-cycle']);
    assert.equal(run.results.get('inflight-cycle')?.detail, 'hidden', `the cycle was built: ${run.text.slice(0, 200)}`);
    assert.ok(Date.now() - started < 10_000, `wait() took ${Date.now() - started} ms`);
    assert.equal(run.receipt.stop.requested, false, 'no stop was needed');
    assert.equal(run.receipt.stop.containmentConfirmed, true);
  });

  probe('MSG_OOB on fd 3 neither stalls the provider\'s reader nor corrupts the frames around it', async () => {
    const run = await attack(['oob']);
    const text = run.protocol.toString('utf8');
    assert.match(text, /\{"before":1\}\n/);
    assert.match(text, /\{"after":1\}\n/);
    assert.equal(run.receipt.bytes.protocolOut, run.protocol.length, 'the receipt counts what the provider read');
  });

  probe('a child subreaper\'s setsid, SIGTERM-immune daemon does not outlive the run', async () => {
    const run = await attack(['subreaper-daemon']);
    assert.equal(run.results.get('subreaper-daemon')?.detail, 'daemon running', 'the daemon started');
    assert.equal(run.receipt.stop.containmentConfirmed, true);
    // hostUnharmed() then asserts no live process of the attacker is left.
  });
});

describe('a hostile runner against the provider', () => {
  // round3 started with "--" flags acts as a code-bridge-v1 runner that
  // shuts the read side of fd 3 (every host write then fails with EPIPE)
  // and calls a tool. The provider runs in a process of its own, with no
  // 'error' listener of its own: an error that escaped cordon would kill it.
  probe('Code Mode: a runner that shut its read side makes the tool result\'s write fail, and the provider survives', async () => {
    const run = h.runProvider(`
      const mode = cordon.createCodeMode({
        tools: [{ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: async () => ({ big: 'x'.repeat(200000) }) }],
        runner: { path: ${JSON.stringify(attacker())} }, limits: { timeoutMs: 2000 } });
      mode.run('return 1').then((r) => process.stdout.write(JSON.stringify({ settled: true, toolCalls: r.metrics.toolCalls, kind: r.error?.kind ?? null })));
    `);
    assert.equal(run.error, undefined, `the provider died: ${run.error}`);
    assert.equal(run.value.settled, true);
    assert.equal(run.value.toolCalls, 1, 'the host dispatched the call and wrote its result into a closed pipe');
  });

  probe('spawnIsolated: writes to fd 3 after the sandbox shut its read side neither crash nor grow the provider', async () => {
    const run = h.runProvider(`
      const ex = cordon.spawnIsolated([${JSON.stringify(attacker())}, '--hostile'], { policy: cordon.readOnly(), deadlineMs: 20000 });
      ex.stderr.resume();
      let got = '';
      ex.protocol.on('data', (d) => {
        got += d;
        if (got.includes('tool.call') && !got.includes('#')) { got += '#'; setTimeout(() => { for (let i = 0; i < 64; i += 1) ex.protocol.write(Buffer.alloc(65536)); }, 50); }
      });
      ex.protocol.write('{"executionId":"x"}\\n');
      ex.wait().then((r) => process.stdout.write(JSON.stringify({ returncode: r.returncode, bytes: r.receipt.bytes })));
    `);
    assert.equal(run.error, undefined, `the provider died: ${run.error}`);
    assert.equal(run.value.returncode, 0);
    assert.equal(run.value.bytes.protocolInDiscarded, 64 * 65536, 'the bytes the sandbox refused are counted as discarded');
  });
});

describe('caller-named host paths that go through a symlink', () => {
  // Was findings/workspace-symlink-redirect.repro.js: a run with a writable
  // workspace plants `cache -> /dev/shm` and `config -> /etc`; a later run
  // given `<project>/cache` as its workspace got the host's /dev/shm bound
  // read-write, `<project>/config` the host's /etc. Now every component of
  // a workspace or extra path is opened without following links, and that
  // descriptor is what bwrap binds.

  /** spawnIsolated → wait(), with a synchronous refusal returned as the error. */
  async function runIn(script, options) {
    let execution;
    try {
      execution = cordon.spawnIsolated(['/bin/sh', '-c', script], options);
    } catch (error) {
      return { error };
    }
    let out = '';
    execution.stderr.on('data', (d) => { out += d; });
    execution.protocol.resume();
    return execution.wait().then((r) => ({ ...r, out }), (error) => ({ error, out }));
  }

  function project() {
    const dir = fs.mkdtempSync('/var/tmp/cordon-round3-project-');
    fs.chmodSync(dir, 0o755);
    h.ownForSandbox(dir);
    return dir;
  }

  probe('a symlink planted by an earlier run is refused as a later run\'s workspace or extra, naming it', async () => {
    const dir = project();
    const marker = `round3-planted-${process.pid}`;
    try {
      const planted = await runIn('ln -s /dev/shm /workspace/cache && ln -s /etc /workspace/config', { policy: cordon.workspaceWrite(), workspace: dir });
      assert.equal(planted.returncode, 0, `${planted.error?.message ?? ''} ${planted.out}`);
      assert.ok(fs.lstatSync(path.join(dir, 'cache')).isSymbolicLink(), 'the first run planted its link');
      const redirected = await runIn(`echo from-the-sandbox > /workspace/${marker}`, { policy: cordon.workspaceWrite(), workspace: path.join(dir, 'cache') });
      assert.equal(redirected.error?.code, 'ERR_CORDON_INVALID_OPTIONS', `the run was not refused: ${JSON.stringify(redirected.receipt?.confinement?.planned?.hostBinds)}`);
      assert.match(redirected.error.message, new RegExp(`goes through the symlink ${path.join(dir, 'cache')}`));
      assert.equal(fs.existsSync(`/dev/shm/${marker}`), false, 'nothing was written to the host /dev/shm');
      const nested = await runIn('ls /workspace', { policy: cordon.readOnly(), workspace: path.join(dir, 'config', 'ssl') });
      assert.equal(nested.error?.code, 'ERR_CORDON_INVALID_OPTIONS', 'a link in the middle of the path is refused too');
      const policy = structuredClone(cordon.readOnly());
      policy.filesystem.extra = [{ path: path.join(dir, 'config'), access: 'read' }];
      const extra = await runIn('cat /var/tmp/*/config/passwd', { policy });
      assert.equal(extra.error?.code, 'ERR_CORDON_INVALID_OPTIONS', `the extra was not refused: ${extra.out}`);
      assert.match(extra.error.message, /goes through the symlink/);
    } finally {
      fs.rmSync(`/dev/shm/${marker}`, { force: true });
      h.removeOwned(dir);
    }
  });

  probe('a directory swapped for a symlink in a loop while runs launch never gets the link\'s target bound', async () => {
    // The swapper below is a host process of the provider: a non-root
    // provider's project is its own (it could not swap entries in a
    // directory of its sandbox owner); runs here only read it.
    const ownDir = process.geteuid() !== 0;
    const dir = ownDir ? fs.mkdtempSync('/var/tmp/cordon-round3-project-') : project();
    fs.chmodSync(dir, 0o755);
    // The link's target: a directory the launcher would otherwise accept as
    // a workspace (owned like the project), holding a file no run may see.
    const target = fs.mkdtempSync('/var/tmp/cordon-round3-target-');
    fs.chmodSync(target, 0o755);
    fs.writeFileSync(path.join(target, 'passwd'), 'secret\n');
    if (!ownDir) h.ownForSandbox(target);
    const etc = fs.statSync(target);
    // Swaps <dir>/swap between a real directory, nothing and a link to the
    // target, in a process of its own, while runs launch on it.
    const swap = `
      const fs = require('fs');
      const hold = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
      for (;;) { fs.mkdirSync('swap'); hold(2); fs.rmdirSync('swap'); fs.symlinkSync(${JSON.stringify(target)}, 'swap'); hold(2); fs.unlinkSync('swap'); }`;
    const swapper = require('node:child_process').spawn(process.execPath, ['-e', swap], { cwd: dir, stdio: 'ignore' });
    const seen = { bound: 0, refused: 0, other: 0 };
    try {
      // The swapper is running once `swap` exists (a refused launch takes
      // a millisecond: without this, all could end before it starts).
      for (let i = 0; i < 500 && !fs.existsSync(path.join(dir, 'swap')); i += 1) await sleep(20);
      for (let i = 0; i < 30; i += 1) {
        await sleep(7); // a different phase of the 4 ms swap cycle each time
        const run = await runIn('ls /workspace | head -3; echo listed', { policy: cordon.readOnly(), workspace: path.join(dir, 'swap') });
        if (run.error?.code === 'ERR_CORDON_SPAWN_FAILED') {
          // Opened, then removed before bwrap bound it: bwrap's own set-up failed (a failed
          // launch, never the program's exit), and nothing was bound. bwrap words it by the
          // step that found it gone: its realpath ("Can't find source path") or its stat
          // ("Can't get type of source", seen once in CI run 12).
          assert.match(run.error.message, /^bubblewrap could not set up the sandbox: bwrap: Can't (find source path|get type of source) .*No such file/, run.error.message);
          seen.refused += 1;
          seen.gone = (seen.gone ?? 0) + 1;
          continue;
        }
        if (run.error) {
          // A symlink (refused by name), or caught mid-swap (gone).
          assert.equal(run.error.code, 'ERR_CORDON_INVALID_OPTIONS', run.error.message);
          assert.match(run.error.message, /goes through the symlink|No such file|not a directory/i, run.error.message);
          seen.refused += 1;
          const why = /symlink/.test(run.error.message) ? 'symlink' : 'gone';
          seen[why] = (seen[why] ?? 0) + 1;
          if (seen.refused === 1) console.log(`# first refusal: ${run.error.message}`);
          continue;
        }
        assert.doesNotMatch(run.out, /passwd/, `run ${i} listed the link's target`);
        const bound = run.receipt.confinement.planned.hostBinds.find((b) => b.dest === '/workspace');
        assert.ok(bound, JSON.stringify(run.receipt.confinement.planned.hostBinds));
        assert.ok(!(bound.device === etc.dev && bound.inode === etc.ino), `run ${i} bound the link's target`);
        if (run.returncode === 0) seen.bound += 1; else seen.other += 1;
      }
    } finally {
      swapper.kill('SIGKILL');
      if (swapper.exitCode === null && swapper.signalCode === null) await new Promise((resolve) => swapper.once('exit', resolve));
      h.removeOwned(dir);
      h.removeOwned(target);
    }
    console.log(`# swap race: ${JSON.stringify(seen)}`);
  });

  probe('the receipt records the device and inode of each bound host directory', async () => {
    const dir = project();
    try {
      const run = await runIn('true', { policy: cordon.readOnly(), workspace: dir });
      assert.equal(run.returncode, 0, run.error?.message);
      const st = fs.statSync(dir);
      assert.deepEqual(run.receipt.confinement.planned.hostBinds, [{ source: dir, dest: '/workspace', writable: false, device: st.dev, inode: st.ino }]);
    } finally {
      h.removeOwned(dir);
    }
  });
});

describe('kernel memory outside RLIMIT_AS', () => {
  // Not in the non-root pass: a uid-65534 provider has no cgroup (no
  // delegated subtree in CI) and this policy requires one; what holds
  // without a cgroup is the next group, and docs/security.md says socket
  // buffers are not bounded there.
  if (!h.NONROOT_PASS) probe('AF_UNIX socket buffers past the memory ceiling are charged to the run\'s cgroup: an OOM kill inside', async (t) => {
    // 2 processes × 32 socket pairs, both directions filled to 2 × wmem_max:
    // far over the 128 MiB ceiling. Without a cgroup nothing charges this
    // memory (findings/memory-without-cgroup.repro.js).
    const policy = structuredClone(cordon.readOnly());
    policy.resources = { ...policy.resources, memoryBytes: 128 * 1024 * 1024, processes: 8, treeLimits: 'required' };
    let run;
    try {
      run = await attack(['unix-pin', '2', '32'], { policy, deadlineMs: 30_000 });
    } catch (error) {
      if (error.code === 'ERR_CORDON_CONFINEMENT_UNAVAILABLE') return t.skip('no cgroup on this host');
      throw error;
    }
    const queued = [...run.text.matchAll(/^PINNED \d+ (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    assert.ok(queued < 128 * 1024 * 1024, `the sandbox queued ${queued} bytes past its 128 MiB ceiling`);
    assert.ok(run.receipt.confinement.cgroupOutcome.oomKills >= 1, `an OOM kill in the run's cgroup: ${JSON.stringify(run.receipt.confinement.cgroupOutcome)}`);
    assert.equal(run.receipt.stop.reason, null, 'ended by the OOM kill, not the deadline');
  });

});

describe('kernel memory outside RLIMIT_AS, without a cgroup', () => {
  // Was findings/memory-without-cgroup.repro.js (memfd and SysV parts): a
  // provider without a cgroup let one process hold 2–3× its memory ceiling
  // in memfds kept as descriptors and in detached SysV segments. Both
  // routes are closed by the filter, with or without a cgroup; as root on
  // the host, round3 unmapped-memory holds what it asks for ("open").
  for (const kind of ['memfd', 'sysv']) {
    probe(`${kind === 'memfd' ? 'memfd_create' : 'shmget'} is ENOSYS: no ${kind} memory is held past RLIMIT_AS`, async () => {
      const policy = structuredClone(cordon.readOnly());
      policy.resources = { ...policy.resources, memoryBytes: 128 * 1024 * 1024, processes: 8 };
      const run = await attack(['unmapped-memory', kind, '8', '32'], { policy, deadlineMs: 30_000 }, async (execution, started, text) => {
        await untilResult(text, execution);
        execution.stop();
      });
      assert.match(run.text, /^HELD 0$/m, `the sandbox held ${kind} memory: ${run.text.slice(0, 200)}`);
      h.expectBlocked(run, 'unmapped-memory', /held 0 then Function not implemented/);
    });
  }
});

describe('rlimits set explicitly, not inherited from the provider', () => {
  probe('inside, RTPRIO, NICE and RTTIME are 0, SIGPENDING 1024, MSGQUEUE 0, MEMLOCK 64 KiB (soft = hard)', async () => {
    // The provider's own limits here differ (pending signals ~ RLIMIT_NPROC
    // of the host, locked memory 8 MiB, realtime timeout unlimited): a launcher
    // that left them inherited shows those values.
    const execution = cordon.spawnIsolated(['/bin/cat', '/proc/self/limits'], { policy: cordon.readOnly() });
    let text = '';
    execution.stderr.on('data', (chunk) => { text += chunk; });
    execution.protocol.resume();
    const { returncode } = await execution.wait();
    assert.equal(returncode, 0, text);
    const row = (label) => {
      const line = text.split('\n').find((l) => l.startsWith(label));
      assert.ok(line, `no "${label}" row: ${text}`);
      return line.slice(label.length).trim().split(/\s+/).slice(0, 2);
    };
    assert.deepEqual(row('Max realtime priority'), ['0', '0']);
    assert.deepEqual(row('Max nice priority'), ['0', '0']);
    assert.deepEqual(row('Max realtime timeout'), ['0', '0']);
    assert.deepEqual(row('Max pending signals'), ['1024', '1024']);
    assert.deepEqual(row('Max msgqueue size'), ['0', '0']);
    assert.deepEqual(row('Max locked memory'), ['65536', '65536']);
  });
});

describe('the shared staged executable', () => {
  probe('locks on its own executable (flock, POSIX, OFD, lease) do not hold up the next run of the same program', async () => {
    // Every run of one binary executes the same staged copy; a launcher that
    // locked or rewrote it while a sandbox held a lock would wait here.
    let second = null;
    const first = await attack(['lock-exe', '/proc/self/exe'], { deadlineMs: 30_000 }, async (execution, started) => {
      await started;
      const t0 = Date.now();
      second = await attack(['memfd-setuid'], { deadlineMs: 20_000 });
      second.ms = Date.now() - t0;
      execution.stop();
    });
    assert.match(first.results.get('lock-exe')?.detail ?? '', /flock=0/, `the first run holds its locks: ${first.text.slice(0, 200)}`);
    assert.equal(second.receipt.stop.requested, false, 'the second run was not ended by its deadline');
    assert.ok(second.ms < 10_000, `the second run took ${second.ms} ms`);
    h.expectBlocked(second, 'memfd-setuid');
    assert.equal(first.receipt.stop.reason, 'stop');
  });
});

// Not in the non-root pass: planting a base for another uid and running a
// provider as that uid need root (the root pass plants it for an uid of no
// account, a non-root provider alike).
if (!h.NONROOT_PASS) describe('a planted control-root base', () => {
  // What a sandbox could do with the host /dev/shm in reach
  // (the symlinked-workspace redirect of round 3, now refused): create the control-root
  // base of a provider uid that has not run yet, world-writable, to own its
  // staged executables. The launcher must refuse it and write nothing there.
  probe('a provider refuses a control-root base that a sandbox uid created before it', async (t) => {
    if (process.geteuid() !== 0) return t.skip('needs root to plant a base and run a provider as another uid');
    const uid = 40000 + (process.pid % 20000);
    const base = `/dev/shm/cordon-${uid}`;
    if (fs.existsSync(base)) return t.skip(`${base} exists already`);
    fs.mkdirSync(base, { mode: 0o777 });
    fs.chmodSync(base, 0o777);
    fs.chownSync(base, h.SANDBOX_UID, h.SANDBOX_UID);
    try {
      const root = path.join(__dirname, '..', '..');
      const run = spawnSync(process.execPath, ['-e', `
        const cordon = require(${JSON.stringify(root)});
        try {
          const ex = cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() });
          ex.stderr.resume(); ex.protocol.resume();
          ex.wait().then((r) => console.log(JSON.stringify({ ran: r.returncode })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));
        } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }
      `], { uid, gid: uid, cwd: '/', encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH } });
      if (/EACCES|Cannot find module/.test(run.stderr)) return t.skip(`uid ${uid} cannot read the checkout`);
      const result = JSON.parse(run.stdout);
      assert.equal(result.ran, undefined, 'the provider launched through a base a sandbox uid owns');
      assert.match(result.message, /not a private directory owned by uid/);
      assert.deepEqual(fs.readdirSync(base), [], 'nothing was staged in the planted base');
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('host afterwards', () => {
  test('no control root, zombie, attacker process or descriptor is left', { skip: skip ?? false }, async () => {
    await hostUnharmed();
    const now = await h.settledFdCount(fdsBefore + 2);
    assert.ok(now <= fdsBefore + 2, `descriptors: ${fdsBefore} before, ${now} now`);
    console.log(`round 3: ${tally.tried} probes tried, ${tally.blocked} blocked`);
  });
});
