'use strict';

// The security battery's probes that mean something through a host
// (issue 22): the attacker binary of __test__/security/probe.c, served as a
// program of a real `cordon host` on a Unix socket and run through
// cordon/remote — the path a remote provider's model-written code takes.
// Each probe asserts that the attack fails and, after it, that nothing of
// it is left (no process of the attacker binary, no sandbox below the host)
// and that the host still runs sandboxes. Remote-only probes: the host's
// own pid, environment and stateDir are out of reach, and the host's
// ceilings (processes, memory, deadline) hold against a client that asks
// for more. Left out: probes of the provider's own control roots, host
// workspaces, launcher options and cgroups (a remote client has none of
// them: docs/remote.md § The shared suites through a host).

const { after, before, describe, test } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const h = require('./security/harness');
const { startHost } = require('./remote-support');
const { isPairMaker } = require('./spawn-support');
const { connectRemote } = require('../lib/remote');

const skip = h.skipReason();
if (skip) console.log(`# SKIPPED remote security battery: ${skip}`);

/** A value of the host's environment that no sandbox may see. */
const HOST_SECRET = `host-secret-${process.pid}`;
/** The tight host's ceilings, below what the probes ask for. */
const CEILINGS = { processes: 16, memoryBytes: 64 << 20, deadlineMs: 3000 };

let host; // default ceilings
let tight; // CEILINGS
let remote;
let tightRemote;

before(async () => {
  if (skip) return;
  const programs = { probe: h.probe() };
  process.env.CORDON_REMOTE_BATTERY_SECRET = HOST_SECRET; // inherited by the hosts only
  try {
    host = await startHost({ programs });
    tight = await startHost({ programs, ceilings: CEILINGS });
  } finally {
    delete process.env.CORDON_REMOTE_BATTERY_SECRET;
  }
  remote = connectRemote({ socket: host.socket });
  tightRemote = connectRemote({ socket: tight.socket });
});

after(async () => {
  await remote?.close();
  await tightRemote?.close();
  await host?.stop();
  await tight?.stop();
});

/** Reads a stream to its end (what the probe says on stderr). */
function text(stream) {
  const chunks = [];
  stream.on('data', (chunk) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    stream.once('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.once('error', reject);
  });
}

/**
 * One attack through `client`: `probe ARGS…` in a remote sandbox.
 * `during(execution, started)` runs while it is alive.
 */
async function attack(args, options = {}, { client = remote, during = null } = {}) {
  const { policy = client.readOnly(), ...rest } = options;
  const execution = client.spawnIsolated(['probe', ...args], { policy, ...rest });
  const started = new Promise((resolve) => execution.stderr.once('data', resolve));
  const stderr = text(execution.stderr);
  execution.protocol.resume();
  if (during) await during(execution, started);
  const outcome = await execution.wait();
  const said = await stderr;
  return { ...outcome, text: said, results: h.parseResults(said) };
}

function expectBlocked(run, name, detailPattern) {
  const result = run.results.get(name);
  assert.ok(result, `no RESULT for ${name}; sandbox output: ${run.text.slice(0, 500)}`);
  assert.equal(result.verdict, 'blocked', `${name} worked: ${result.detail}`);
  if (detailPattern) assert.match(result.detail, detailPattern);
}

/** Live (not zombie) descendants of `root`, from /proc. */
function descendants(root) {
  const parents = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A host's pair maker lives as long as the host: not a sandbox's.
      if (state !== 'Z' && !isPairMaker(entry)) parents.set(Number(entry), Number(ppid));
    } catch {
      // exited meanwhile
    }
  }
  const found = [root];
  for (let i = 0; i < found.length; i += 1) {
    for (const [pid, ppid] of parents) if (ppid === found[i]) found.push(pid);
  }
  return found.slice(1);
}

/** Waits (bounded) for `condition`; returns whether it came. */
async function eventually(condition, bound = 20_000) {
  const until = Date.now() + bound;
  while (!condition()) {
    if (Date.now() > until) return false;
    await sleep(20);
  }
  return true;
}

/** After every probe: nothing of the attack left, and both hosts still serve. */
async function hostsUnharmed() {
  const left = () => ({
    attackers: h.processesWith(h.probe()),
    sandboxes: [...descendants(host.child.pid), ...descendants(tight.child.pid)],
  });
  await eventually(() => Object.values(left()).every((list) => list.length === 0));
  assert.deepEqual(left(), { attackers: [], sandboxes: [] }, 'the attack left nothing behind');
  for (const client of [remote, tightRemote]) {
    const run = client.spawnIsolated(['true'], { policy: client.readOnly() });
    run.protocol.resume();
    run.stderr.resume();
    assert.equal((await run.wait()).returncode, 0, 'the host still runs sandboxes');
  }
}

function probe(name, fn) {
  test(name, { skip: skip ?? false, timeout: 120_000 }, async () => {
    await fn();
    await hostsUnharmed();
  });
}

describe('network, through a host', () => {
  for (const family of ['inet', 'inet6', 'netlink', 'packet']) {
    probe(`socket(AF_${family.toUpperCase()}) fails with EPERM`, async () => {
      expectBlocked(await attack([`socket-${family}`]), `socket-${family}`, /Operation not permitted/);
    });
  }

  probe("a listener on the host machine's 127.0.0.1 is unreachable and sees no connection", async () => {
    let connections = 0;
    const server = net.createServer(() => { connections += 1; });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expectBlocked(await attack(['connect-host-loopback', String(server.address().port)]), 'connect-host-loopback');
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  probe("an abstract unix socket on the host machine is unreachable", async () => {
    const name = `cordon-remote-battery-${process.pid}`;
    let connections = 0;
    const server = net.createServer(() => { connections += 1; });
    await new Promise((resolve) => server.listen(`\0${name}`, resolve));
    try {
      expectBlocked(await attack(['connect-abstract-unix', name]), 'connect-abstract-unix', /Connection refused|No such file/);
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  probe('DNS has neither a resolver config nor a UDP socket', async () => {
    expectBlocked(await attack(['dns']), 'dns');
  });
});

describe('filesystem, through a host', () => {
  probe('/etc/shadow is not readable', async () => {
    expectBlocked(await attack(['read', '/etc/shadow']), '/etc/shadow');
  });

  probe("the host process's /proc/PID/environ is not readable", async () => {
    const target = `/proc/${host.child.pid}/environ`;
    expectBlocked(await attack(['read', target]), target);
  });

  for (const [name, dirOf] of [
    ['/root', () => '/root'],
    ['/home', () => '/home'],
    ["the host's stateDir (receipts, uploads of every tenant)", () => path.join(host.dir, 'state')],
    ["the host's socket directory", () => path.dirname(host.socket)],
  ]) {
    probe(`${name} does not exist inside`, async () => {
      const dir = dirOf();
      expectBlocked(await attack(['list', dir]), dir, /No such file/);
    });
  }

  for (const [target, preset] of [['/workspace/x', 'readOnly'], ['/usr/x', 'workspaceWrite'], ['/x', 'workspaceWrite']]) {
    probe(`writing ${target} under ${preset}() fails`, async () => {
      const run = await attack(['write', target], { policy: remote[preset]() });
      expectBlocked(run, target, /Read-only file system|Permission denied|No such file/);
    });
  }

  probe('a symlink in /tmp to /etc/shadow reaches nothing', async () => {
    expectBlocked(await attack(['symlink-escape']), 'symlink-escape', /No such file/);
  });

  probe('/tmp/../etc/shadow reaches nothing', async () => {
    expectBlocked(await attack(['read', '/tmp/../etc/shadow']), '/tmp/../etc/shadow');
  });

  probe("another running sandbox's /tmp on the same host is invisible", async () => {
    const marker = `secret-${process.pid}`;
    let neighbour;
    const first = await attack(['write-then-hang', `/tmp/${marker}`], {}, {
      during: async (execution, started) => {
        await started;
        neighbour = await attack(['read', `/tmp/${marker}`]);
        execution.stop();
      },
    });
    assert.equal(first.results.get(`/tmp/${marker}`)?.verdict, 'open', 'the first sandbox wrote its file');
    expectBlocked(neighbour, `/tmp/${marker}`, /No such file/);
  });
});

describe('disclosure, through a host', () => {
  probe("neither the sandbox's init nor its program sees the host's environment", async () => {
    const init = await attack(['dump', '/proc/1/environ']);
    assert.match(init.text, /^DUMP \/proc\/1\/environ $/m, `the init's environment: ${init.text.slice(0, 300)}`);
    const own = await attack(['dump', '/proc/self/environ']);
    assert.match(own.text, /^DUMP \/proc\/self\/environ /m, 'the program read its environment');
    for (const run of [init, own]) {
      assert.doesNotMatch(run.text, new RegExp(HOST_SECRET));
      assert.doesNotMatch(run.text, /CORDON_REMOTE_BATTERY_SECRET/);
    }
  });
});

describe('processes and limits, through a host', () => {
  probe('the client and the host are invisible', async () => {
    expectBlocked(await attack(['see-host-pid', String(process.pid)]), 'see-host-pid');
  });

  probe('ptrace fails with EPERM', async () => {
    expectBlocked(await attack(['ptrace']), 'ptrace', /Operation not permitted/);
  });

  probe('a setsid + double-forked grandchild ignoring SIGTERM does not outlive a remote stop()', async () => {
    const marker = `9${String(process.pid).padStart(7, '0')}4`;
    const run = await attack(['outlive-stop', marker], { stop: { graceMs: 200, forceMs: 2000 } }, {
      during: async (execution) => {
        assert.ok(await eventually(() => h.processesWith(marker).length > 0), 'the grandchild started');
        execution.stop();
      },
    });
    assert.equal(run.receipt.stop.requested, true);
    assert.ok(await eventually(() => h.processesWith(marker).length === 0), 'no process survives wait()');
  });

  probe("a fork bomb asking for 1000 processes stops at the host's ceiling of 16", async () => {
    const policy = { ...structuredClone(tightRemote.readOnly()), resources: { processes: 1000 } };
    const run = await attack(['fork-bomb'], { policy }, { client: tightRemote });
    assert.deepEqual(run.receipt.remote.clamped.processes, { requested: 1000, applied: CEILINGS.processes });
    expectBlocked(run, 'fork-bomb', /Resource temporarily unavailable/);
    const forks = Number(/forks=(\d+)/.exec(run.results.get('fork-bomb').detail)[1]);
    // Without a cgroup the bound is RLIMIT_NPROC: processes plus 512 (docs/security.md).
    const bound = run.receipt.confinement.planned.cgroup === null ? CEILINGS.processes + 512 : CEILINGS.processes;
    assert.ok(forks < bound, `${forks} forks (bound ${bound})`);
  });

  probe("a memory bomb asking for 1 GiB is stopped at the host's ceiling of 64 MiB", async () => {
    const policy = { ...structuredClone(tightRemote.readOnly()), resources: { memoryBytes: 1 << 30 } };
    const run = await attack(['memory-bomb'], { policy }, { client: tightRemote });
    assert.deepEqual(run.receipt.remote.clamped.memoryBytes, { requested: 1 << 30, applied: CEILINGS.memoryBytes });
    const result = run.results.get('memory-bomb');
    const killed = run.signal === 'SIGKILL' || run.receipt.confinement.cgroupOutcome?.oomKills > 0;
    assert.ok(killed || result?.verdict === 'blocked', `memory bomb: ${result?.detail} ${run.signal}`);
    if (result) assert.ok(Number(/touched=(\d+)/.exec(result.detail)[1]) <= 64, result.detail);
  });

  probe("a CPU burn asking for a 10-minute deadline is ended by the host's ceiling", async () => {
    const run = await attack(['cpu-burn'], { deadlineMs: 600_000, stop: { graceMs: 100, forceMs: 1000 } }, { client: tightRemote });
    assert.deepEqual(run.receipt.remote.clamped.deadlineMs, { requested: 600_000, applied: CEILINGS.deadlineMs });
    assert.equal(run.receipt.stop.reason, 'deadline');
  });
});
