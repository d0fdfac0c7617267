'use strict';

// The cost of observing each sandbox's confinement (docs/receipts.md):
// the receipt's own `confinement.observed.costMicros` over N runs, how many
// runs were observed, and the wall time of spawnIsolated → wait(). With a
// second checkout's path it interleaves runs of both for an A/B of wall time.
//
//   node bench/observation.js [runs=40] [/path/to/baseline/checkout]

const path = require('node:path');

const runs = Number(process.argv[2] ?? 40);
const impls = { this: require(path.join(__dirname, '..')) };
if (process.argv[3]) impls.baseline = require(path.resolve(process.argv[3]));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function once(cordon, command) {
  const t0 = process.hrtime.bigint();
  const execution = cordon.spawnIsolated(command, { policy: cordon.readOnly() });
  execution.stderr.resume();
  execution.protocol.resume();
  const result = await execution.wait();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, observed: result.receipt.confinement?.observed };
}

async function main() {
  for (const command of [['/usr/bin/true'], ['/bin/sleep', '0.05']]) {
    const wall = Object.fromEntries(Object.keys(impls).map((k) => [k, []]));
    const cost = [];
    for (let i = 0; i < runs; i++) {
      for (const [name, cordon] of Object.entries(impls)) {
        const { ms, observed } = await once(cordon, command);
        wall[name].push(ms);
        if (name === 'this' && observed?.status === 'observed') cost.push(observed.costMicros);
      }
    }
    const walls = Object.entries(wall).map(([k, v]) => `${k} ${median(v).toFixed(1)} ms`).join(', ');
    const costs = cost.length ? `median ${median(cost)} µs (min ${Math.min(...cost)}, max ${Math.max(...cost)})` : 'none observed';
    console.log(`${command.join(' ')}: observed ${cost.length}/${runs}; observation ${costs}; wall median ${walls}`);
  }
}

main().catch((error) => { console.error(error); process.exitCode = 1; });
