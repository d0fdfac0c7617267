'use strict';

// A provider whose own cgroup has a memory limit (a container, a pod,
// systemd's MemoryMax=) holds its sandboxes' cgroups below it (cgroup v1
// here: docs/security.md › Resource ceilings). When that limit is reached
// the kernel's OOM killer chooses within the provider's cgroup, and the
// provider, the largest task there, was its choice: a sandbox within its
// own ceiling, its memory spread over small processes, had the provider
// killed (black-box round on the sandbox's start, F1; the k8s manifest has
// exactly that shape). Every sandbox process now has oom_score_adj 1000, so
// the kernel takes the sandbox's processes first, and the provider lives.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const h = require('./harness');

const MEMORY = '/sys/fs/cgroup/memory';
const skip = h.skipReason()
  ?? (process.geteuid() === 0 ? false : 'needs root: it gives a provider a memory cgroup of its own');
const ROOT = path.join(__dirname, '..', '..');

/** The program: `count` processes, each touching `mib` MiB, then waiting. */
function bomb(count, mib) {
  return ['/usr/bin/python3', '-c', `
import os, time
for _ in range(${count}):
    if os.fork() == 0:
        block = b"\\x01" * (${mib} << 20)
        time.sleep(3)
        os._exit(0)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
print("done", flush=True)
`];
}

test('a sandbox within its ceiling never gets its provider OOM-killed when the provider\'s own cgroup runs out', { skip }, () => {
  assert.ok(fs.existsSync(`${MEMORY}/cgroup.procs`), 'a v1 memory hierarchy (this host\'s kind)');
  const cgroup = `${MEMORY}/cordon-oom-provider-${process.pid}`;
  fs.mkdirSync(cgroup);
  try {
    fs.writeFileSync(`${cgroup}/memory.limit_in_bytes`, String(300 << 20));
    // The provider: moves itself into the limited cgroup, holds 100 MiB,
    // runs one sandbox of five 48 MiB processes (240 MiB, under the run's
    // own 256 MiB ceiling), and reports what the run and its program saw.
    const provider = `
      const fs = require('node:fs');
      fs.writeFileSync(${JSON.stringify(`${cgroup}/cgroup.procs`)}, String(process.pid));
      const cordon = require(${JSON.stringify(ROOT)});
      const held = [];
      for (let i = 0; i < 100; i += 1) held.push(Buffer.alloc(1 << 20, 1));
      const adj = cordon.spawnIsolated(['/bin/cat', '/proc/self/oom_score_adj'], { policy: cordon.readOnly() });
      let adjText = ''; adj.stderr.on('data', (d) => { adjText += d; }); adj.protocol.resume();
      adj.wait().then(() => {
        const run = cordon.spawnIsolated(${JSON.stringify(bomb(5, 48))}, { policy: cordon.readOnly(), deadlineMs: 20000 });
        let out = ''; run.stderr.on('data', (d) => { out += d; }); run.protocol.resume();
        return run.wait().then((r) => {
          const providerAdj = fs.readFileSync('/proc/self/oom_score_adj', 'utf8').trim();
          console.log(JSON.stringify({ adj: adjText.trim(), providerAdj, out, oom: r.receipt.confinement.cgroupOutcome, contained: r.receipt.stop.containmentConfirmed, held: held.length }));
        });
      }).catch((e) => { console.log(JSON.stringify({ error: e.message })); });
    `;
    const run = spawnSync(process.execPath, ['-e', provider], { encoding: 'utf8', timeout: 60_000 });
    // SIGKILLed (137) is what the provider got before the fix.
    assert.equal(run.signal, null, `the provider was killed by ${run.signal}: ${run.stderr}`);
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.error, undefined, report.error);
    assert.equal(report.adj, '1000', 'every sandbox process goes first in an OOM choice');
    // Raised in bwrap's child alone, though it shared the provider's memory
    // (the kernel spreads a change to every process sharing an mm, but not
    // from a vfork child).
    assert.equal(report.providerAdj, '0', 'the provider keeps its own');
    assert.equal(report.held, 100);
    assert.equal(report.contained, true);
    // The kernel chose within the sandbox (its processes' memory is charged
    // to its leaf, below the provider's cgroup).
    const oomKills = Number(fs.readFileSync(`${cgroup}/memory.oom_control`, 'utf8').match(/oom_kill (\d+)/)?.[1] ?? 0);
    assert.ok(oomKills >= 1 || report.out.includes('done'), `no OOM kill and no result: ${JSON.stringify(report)}`);
  } finally {
    // The provider has exited: its cgroup (and the runs' below it) is empty.
    for (const leaf of fs.existsSync(`${cgroup}/cordon`) ? fs.readdirSync(`${cgroup}/cordon`, { withFileTypes: true }) : []) {
      if (leaf.isDirectory()) fs.rmdirSync(`${cgroup}/cordon/${leaf.name}`);
    }
    if (fs.existsSync(`${cgroup}/cordon`)) fs.rmdirSync(`${cgroup}/cordon`);
    fs.rmdirSync(cgroup);
  }
});

/** Whether this process holds CAP_SYS_RESOURCE (a container's root may not). */
function hasSysResource() {
  const eff = fs.readFileSync('/proc/self/status', 'utf8').match(/^CapEff:\s*([0-9a-f]+)$/m)[1];
  return (BigInt(`0x${eff}`) >> 24n) & 1n ? true : false;
}

test('a sandbox may not lower its oom_score_adj below the provider\'s floor; a root provider with CAP_SYS_RESOURCE locks it at 1000', { skip }, async () => {
  const cordon = require(ROOT);
  const script = 'echo -1 > /proc/self/oom_score_adj; echo "below=$?"; echo 0 > /proc/self/oom_score_adj; echo "floor=$?"; cat /proc/self/oom_score_adj';
  const run = cordon.spawnIsolated(['/bin/sh', '-c', script], { policy: cordon.readOnly() });
  let out = '';
  run.stderr.on('data', (d) => { out += d; });
  run.protocol.resume();
  await run.wait();
  assert.match(out, /below=[1-9]/, out);
  if (hasSysResource()) {
    // Written by a CAP_SYS_RESOURCE process, 1000 is also the floor.
    assert.match(out, /floor=[1-9]/, out);
    assert.match(out, /^1000$/m, out);
  } else {
    // The floor stays the provider's (0 here): the program can put itself
    // back on equal terms with the provider, not below it
    // (docs/security.md › Resource ceilings).
    assert.match(out, /floor=0/, out);
    assert.match(out, /^0$/m, out);
  }
});
