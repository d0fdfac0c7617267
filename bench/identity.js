'use strict';

// Cold-start cost of a sandbox's identity (issue 18 A1), one run of
// spawnIsolated(['/bin/true']) to wait(), interleaved in one loop so load
// drifts hit all alike:
//   raw bwrap        bwrap /bin/true with the launcher's flags, as root (baseline)
//   root provider    per-run uid leased from the reserved range (setuid)
//   non-root shared  uid 65534, policy process.identity "shared-with-provider"
//   non-root own     uid 65534, a subordinate uid/gid of its own (fork a
//                    namespace holder, newuidmap + newgidmap, setns)
// Needs root (the non-root provider is started as uid 65534 by setpriv) and
// a subordinate range for uid 65534 (.ci/run adds one).
//   node bench/identity.js [--iterations N] [--warmup N]

const { spawnIsolated, readOnly } = require('..');
const { BWRAP, rawBwrap, timeChild } = require('./peers');
const { sectionRows, renderTable, nowMs } = require('./stats');
const { nobodyChild } = require('./nobody-child');

/** One sandbox of `policy` in this process, in ms. */
async function timeSpawn(policy) {
  const started = nowMs();
  const execution = spawnIsolated(['/bin/true'], { policy });
  execution.protocol.resume();
  execution.stderr.resume();
  const { returncode, receipt } = await execution.wait();
  if (returncode !== 0) throw new Error(`spawnIsolated(/bin/true) exited ${returncode}`);
  return { ms: nowMs() - started, allocation: receipt.confinement.planned.uidAllocation };
}

// The non-root provider: one line per run ("own" or "shared") in, the
// run's JSON out; the same timing code as the root side.
const CHILD = (pkg) => `
const { spawnIsolated, readOnly } = require(${JSON.stringify(pkg)});
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const policyFor = (mode) => {
  const base = structuredClone(readOnly());
  return mode === 'shared' ? { ...base, process: { ...base.process, identity: 'shared-with-provider' } } : base;
};
${timeSpawn.toString()}
require('node:readline').createInterface({ input: process.stdin }).on('line', async (mode) => {
  process.stdout.write(JSON.stringify(await timeSpawn(policyFor(mode))) + '\\n');
});
`;

/** Starts the uid-65534 provider; `run(mode)` resolves with its reply. */
function nonRootProvider() {
  const child = nobodyChild(CHILD);
  return { run: (mode) => child.ask(mode), close: () => child.close() };
}

function parseArgs(argv) {
  const args = { iterations: 50, warmup: 5 };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--iterations') args.iterations = Number(argv[(i += 1)]);
    else if (argv[i] === '--warmup') args.warmup = Number(argv[(i += 1)]);
    else throw new Error(`unknown argument ${argv[i]}; usage: bench/identity.js [--iterations N] [--warmup N]`);
  }
  return args;
}

async function main() {
  if (process.geteuid() !== 0) throw new Error('bench/identity.js runs as root: it starts the non-root provider as uid 65534');
  const { iterations, warmup } = parseArgs(process.argv.slice(2));
  const raw = rawBwrap('/bin/true');
  const provider = nonRootProvider();
  const samples = { bwrap: [], root: [], shared: [], own: [] };
  try {
    for (let i = 0; i < warmup + iterations; i += 1) {
      const keep = i >= warmup;
      const bwrap = await timeChild(BWRAP, raw.argv);
      const root = await timeSpawn(readOnly());
      const shared = await provider.run('shared');
      const own = await provider.run('own');
      const expected = [[root, 'per-run'], [shared, 'shared-with-provider'], [own, 'subordinate-per-run']];
      for (const [run, allocation] of expected) {
        if (run.allocation !== allocation) throw new Error(`expected ${allocation}, got ${run.allocation}`);
      }
      if (!keep) continue;
      samples.bwrap.push(bwrap);
      samples.root.push(root.ms);
      samples.shared.push(shared.ms);
      samples.own.push(own.ms);
    }
  } finally {
    provider.close();
    raw.cleanup?.();
  }
  const rows = sectionRows('identity cold', 'ms', [
    ['raw bwrap /bin/true (root)', samples.bwrap],
    ['spawnIsolated, root provider (per-run uid)', samples.root],
    ['spawnIsolated, uid 65534, shared-with-provider', samples.shared],
    ['spawnIsolated, uid 65534, subordinate ids', samples.own],
  ]);
  console.log(renderTable(rows));
  const median = (name) => rows.find((r) => r.name.includes(name)).median;
  console.log(`\nsubordinate ids / shared (same non-root provider): ${(median('subordinate') / median('shared-with')).toFixed(2)}x`);
  console.log(`subordinate ids / root provider: ${(median('subordinate') / median('root provider')).toFixed(2)}x`);
  console.log(`command: node bench/identity.js --iterations ${iterations} --warmup ${warmup}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
