'use strict';
// R9 (low, remote host): `cordon host` keeps every run's receipt under stateDir/receipts
// forever: no retention, no quota, no per-tenant bound in its configuration (an unknown
// key is refused, and none of the documented keys bounds it). One directory per
// invocation id and one file per run: an authenticated tenant running `/bin/true` in a
// loop with fresh ids grows the host's disk by a fixed amount per run, without end.
//   node remote-receipts-unbounded.js [N]   N runs (default 200) of one tenant; prints bytes per run
//   node remote-receipts-unbounded.js 0     control: no run, no growth (the measure is not noise)
//   node remote-receipts-unbounded.js N MAX  with `receipts: {maxPerTenant: MAX,
//     pruneIntervalSeconds: 1}` (the retention added for R9-9; default 10000 per tenant):
//     waits up to 30 s for the count to fall to MAX
// VULNERABLE when N runs left N receipt files (the host kept all of them).
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const pkg = path.resolve(__dirname, '../../../..');
const { connectRemote } = require(path.join(pkg, 'lib/remote'));

function usage(dir) {
  const kb = Number(execFileSync('du', ['-sk', dir]).toString().split('\t')[0]);
  const files = Number(execFileSync('sh', ['-c', `find "${dir}" -type f | wc -l`]).toString().trim());
  return { kb, files };
}

async function main() {
  const n = Number(process.argv[2] ?? 200);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-remote-'));
  const state = path.join(dir, 'state'); const run = path.join(dir, 'run');
  fs.mkdirSync(state, { mode: 0o700 }); fs.mkdirSync(run, { mode: 0o700 });
  const token = crypto.randomBytes(16).toString('hex');
  const config = {
    listen: { unix: path.join(run, 'host.sock') }, stateDir: state, allowUids: [process.getuid()],
    tokens: { [crypto.createHash('sha256').update(token).digest('hex')]: 'tenant-a' },
    programs: { true: '/bin/true' }, admission: { maxSessions: 8, perTenant: 4, retryAfterMs: 100 },
  };
  const max = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
  if (max !== undefined) config.receipts = { maxPerTenant: max, pruneIntervalSeconds: 1 };
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify(config));
  const host = spawn(path.join(pkg, 'target/release/cordon'), ['host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await new Promise((resolve, reject) => {
      let err = ''; host.stderr.on('data', (d) => { err += d; if (err.includes('listening')) resolve(); });
      host.on('exit', (c) => reject(new Error(`host exited ${c}: ${err}`)));
    });
    const remote = connectRemote({ socket: config.listen.unix, token });
    const receipts = path.join(state, 'receipts');
    const before = usage(receipts);
    for (let i = 0; i < n; i += 4) {
      await Promise.all([0, 1, 2, 3].filter((j) => i + j < n).map(async (j) => {
        const r = await remote.spawnIsolated(['true'], { policy: remote.readOnly(), invocationId: `r9-${process.pid}-${i + j}` });
        await r.wait();
      }));
    }
    let after = usage(receipts);
    for (let waited = 0; max !== undefined && after.files - before.files > max && waited < 30_000; waited += 200) {
      await new Promise((r) => setTimeout(r, 200));
      after = usage(receipts);
    }
    const files = after.files - before.files;
    console.log(`${n} runs of one tenant: receipts/ ${before.kb} -> ${after.kb} KiB, ${files} receipt files kept${n ? ` (${((after.kb - before.kb) / n).toFixed(1)} KiB of disk per run)` : ''}`);
    if (n === 0) console.log(after.kb === before.kb ? 'control ok' : 'control FAILED');
    else console.log(files >= n ? 'VULNERABLE: every receipt is kept, with no retention or per-tenant bound' : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => (host.exitCode !== null ? r() : host.on('exit', r)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
