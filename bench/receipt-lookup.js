'use strict';

// Receipt lookup on a host (issue 22): `receipts(invocationId)` through
// cordon/remote against a real `cordon host` whose stateDir already holds
// `--receipts` receipts (default 10 000: 100 tenants × 100 invocation ids,
// ~3.5 KiB each, in the flat layout `receipts/<id>.<8 hex>.json` that hosts
// before the index kept). Two builds side by side, queried interleaved
// (base, this, base, this, …) so that load hits them alike:
//  - `--base FILE`: a `cordon` built before the index (it lists every
//    receipt's name per query);
//  - this checkout's `cordon` (target/release): it moves the flat receipts
//    into the index once at start-up (timed: the start row), then reads one
//    directory per query.
// A hit (an id with one receipt) and a miss (an id with none), each as one
// tenant among the 100. Medians and ratios; nothing is asserted.
//   node bench/receipt-lookup.js --base /tmp/cordon-before [--receipts 10000] [--queries 300]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { connectRemote } = require('../lib/remote');
const { startHost } = require('../__test__/remote-support');
const { sectionRows, renderTable, nowMs } = require('./stats');

const TENANTS = 100;

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
}

const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex');

/** A stateDir holding `count` receipts in the flat layout. */
function populate(count) {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-receipt-bench-'));
  const receipts = path.join(state, 'receipts');
  fs.mkdirSync(receipts, { mode: 0o700 });
  const padding = 'x'.repeat(3000); // a real receipt is 3–4 KiB (argv, policy, limits, timings)
  for (let n = 0; n < count; n += 1) {
    const tenant = `tenant-${n % TENANTS}`;
    const id = `run-${n % TENANTS}-${Math.floor(n / TENANTS)}`;
    const receipt = { receiptVersion: 1, invocationId: id, outcome: { status: 'exited', exitCode: 0 }, padding, remote: { tenant } };
    const file = path.join(receipts, `${id}.${crypto.randomBytes(4).toString('hex')}.json`);
    fs.writeFileSync(file, JSON.stringify(receipt), { mode: 0o600 });
  }
  return state;
}

async function start(binary, state) {
  const tokens = {};
  for (let t = 0; t < TENANTS; t += 1) tokens[sha256(`token-${t}`)] = `tenant-${t}`;
  const began = nowMs();
  const host = await startHost({ stateDir: state, tokens }, { binary });
  return { host, startMs: nowMs() - began };
}

async function timeQuery(client, id, expected) {
  const began = nowMs();
  const found = await client.receipts(id);
  const ms = nowMs() - began;
  if (found.length !== expected) throw new Error(`${id}: ${found.length} receipts, expected ${expected}`);
  return ms;
}

async function main() {
  const base = option('--base');
  if (!base) throw new Error('usage: node bench/receipt-lookup.js --base /path/to/cordon-before-the-index [--receipts N] [--queries N]');
  const count = Number(option('--receipts', '10000'));
  const queries = Number(option('--queries', '300'));
  const states = [populate(count), populate(count)];
  const before = await start(base, states[0]);
  const after = await start(path.join(__dirname, '..', 'target', 'release', 'cordon'), states[1]);
  const hosts = [before, after];
  try {
    const clients = hosts.map(({ host }) => connectRemote({ socket: host.socket, token: 'token-7' }));
    const times = { hit: [[], []], miss: [[], []] };
    const warmup = 20;
    for (let i = 0; i < warmup + queries; i += 1) {
      for (const h of [0, 1]) {
        const hit = await timeQuery(clients[h], 'run-7-42', 1);
        const miss = await timeQuery(clients[h], 'run-7-none', 0);
        if (i >= warmup) {
          times.hit[h].push(hit);
          times.miss[h].push(miss);
        }
      }
    }
    await Promise.all(clients.map((c) => c.close()));
    const section = `receipt lookup, ${count} receipts`;
    const rows = [
      ...sectionRows(section, 'ms', [['hit, before the index', times.hit[0]], ['hit, indexed', times.hit[1]]]),
      ...sectionRows(section, 'ms', [['miss, before the index', times.miss[0]], ['miss, indexed', times.miss[1]]]),
      ...sectionRows(section, 'ms', [['start-up, before the index', [before.startMs]], ['start-up, moving them into the index', [after.startMs]]]),
    ];
    console.log(renderTable(rows));
    console.log(`node ${process.version}, ${new Date().toISOString()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}`);
  } finally {
    await Promise.all(hosts.map(({ host }) => host.stop()));
    for (const state of states) fs.rmSync(state, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
