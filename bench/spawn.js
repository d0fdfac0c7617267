'use strict';

// Spawn cost, side by side, interleaved in one run:
//   A  spawnIsolated(['/bin/true'], {policy: readOnly()}) → wait()
//   B  the same Bubblewrap sandbox spawned with child_process.spawn
//      (same namespaces, flags, layout and tmpfs /tmp; paths instead of
//      descriptors; no seccomp filter, rlimits or cgroup) → 'close'
//   C  child_process.spawn('/bin/true') → 'close'
// Usage: node bench/spawn.js [iterations=300]. Prints medians, p90 and ratios.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly } = require('..');

const ITERATIONS = Number(process.argv[2] ?? 300);
const WARMUP = 20;
const BWRAP = '/usr/bin/bwrap';
const isRoot = process.geteuid() === 0;

function rawBwrapArgv(workspace) {
  const runtime = [];
  for (const entry of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    let stat;
    try { stat = fs.lstatSync(entry); } catch { continue; }
    if (stat.isSymbolicLink()) runtime.push('--symlink', fs.readlinkSync(entry), entry);
    else if (stat.isDirectory()) runtime.push('--ro-bind', entry, entry);
  }
  return [
    '--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup',
    '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'cordon',
    '--ro-bind', '/usr', '/usr', ...runtime, '--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache',
    '--proc', '/proc', '--dev', '/dev', '--size', String(256 * 1024 * 1024), '--tmpfs', '/tmp',
    '--ro-bind', workspace, '/workspace',
    '--ro-bind', '/usr/bin/true', '/usr/bin/true', '--remount-ro', '/', '--chdir', '/workspace', '--clearenv',
    '--', '/usr/bin/env', '-i', '--', '/bin/true',
  ];
}

function timeChild(file, args, options) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(file, args, options);
    child.on('error', reject);
    child.stdout?.resume();
    child.stderr?.resume();
    child.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - start) / 1e6) : reject(new Error(`${file} exited ${code}`))));
  });
}

async function timeIsolated() {
  const start = process.hrtime.bigint();
  const execution = spawnIsolated(['/bin/true'], { policy: readOnly() });
  execution.protocol.resume();
  execution.stderr.resume();
  const { returncode } = await execution.wait();
  if (returncode !== 0) throw new Error(`spawnIsolated exited ${returncode}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-'));
  const workspace = path.join(dir, 'workspace');
  const temp = path.join(dir, 'temp');
  fs.mkdirSync(workspace);
  fs.mkdirSync(temp);
  fs.chmodSync(dir, 0o755);
  if (isRoot) fs.chownSync(temp, 65534, 65534);
  const bwrapOptions = {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: { TMPDIR: temp },
    ...(isRoot ? { uid: 65534, gid: 65534 } : {}),
  };
  const argv = rawBwrapArgv(workspace);
  const runs = {
    spawnIsolated: timeIsolated,
    'raw bwrap': () => timeChild(BWRAP, argv, bwrapOptions),
    '/bin/true': () => timeChild('/bin/true', [], { stdio: ['ignore', 'pipe', 'pipe'] }),
  };
  const samples = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let i = 0; i < WARMUP + ITERATIONS; i += 1) {
    for (const [name, run] of Object.entries(runs)) {
      const ms = await run();
      if (i >= WARMUP) samples[name].push(ms);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const median = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, quantile(v, 0.5)]));
  const rows = Object.entries(samples).map(([name, values]) => ({
    name,
    medianMs: median[name].toFixed(2),
    p90Ms: quantile(values, 0.9).toFixed(2),
    'vs raw bwrap': (median[name] / median['raw bwrap']).toFixed(2),
  }));
  console.log(`bench/spawn.js: ${ITERATIONS} interleaved iterations (+${WARMUP} warm-up), node ${process.version}, ${os.cpus().length} cpus`);
  console.table(rows);
  const ratio = median.spawnIsolated / median['raw bwrap'];
  console.log(`spawnIsolated / raw bwrap = ${ratio.toFixed(2)}x (goal <= 1.20x)`);
  fs.writeFileSync(path.join(__dirname, 'results.json'), `${JSON.stringify({ iterations: ITERATIONS, rows, ratio }, null, 2)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
