'use strict';

// A second method for bench section 14's "uid-65534 provider
// session.readFile 4 KiB" row (not part of `npm run bench`): a uid-65534
// provider reads a 4 KiB file N times (2 ms apart), each read timed in JS
// as the bench does, while `perf record -a` takes the kernel's
// sched_process_fork and sched_process_exit events. Each read is one
// `cordon-exec-agent session-files` process the provider forks, so the
// kernel's clock gives that process's life (fork → exit) per read: the
// part of the JS-timed figure that is the helper, the rest being the
// provider's own (spawn, pipes, parsing). Needs root, perf, and a
// subordinate range for uid 65534.
//   node bench/sessions-nonroot-crosscheck.js [--reads N]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { nobodyProvider } = require('../__test__/security/nobody-provider');
const { summarize } = require('./stats');
const { NOBODY_UID } = require('./nobody-child');

const LOOP = (pkg, dir, reads) => `
const { createSessionManager } = require(${JSON.stringify(pkg)});
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
(async () => {
  const m = createSessionManager({ secret: require('node:crypto').randomBytes(32), root: ${JSON.stringify(`${dir}/root`)}, authorize: () => true, workspaceBytes: 8 << 20 });
  const s = await m.acquire({ tenant: 'bench', conversation: 'crosscheck' }, 'bench');
  await s.writeFile('tool.bin', require('node:crypto').randomBytes(4096));
  const times = [];
  for (let i = 0; i < ${reads}; i += 1) {
    const started = nowMs();
    await s.readFile('tool.bin', { maxBytes: 4096 });
    times.push(nowMs() - started);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await m.endAll();
  process.stdout.write(JSON.stringify({ pid: process.pid, times }));
})();`;

/** Life (ms, fork → exit) of each `cordon-exec-agent` process `parent` forked, from `perf script` text. */
function helperLives(text, parent) {
  const forked = new Map();
  const lives = [];
  for (const line of text.split('\n')) {
    const fork = /\s(\d+\.\d+): sched:sched_process_fork: comm=\S+ pid=(\d+) child_comm=\S+ child_pid=(\d+)/.exec(line);
    if (fork && Number(fork[2]) === parent) {
      forked.set(fork[3], Number(fork[1]));
      continue;
    }
    const exit = /\s(\d+\.\d+): sched:sched_process_exit: comm=(\S+) pid=(\d+)/.exec(line);
    if (exit && forked.has(exit[3])) {
      if (exit[2].startsWith('cordon-exec')) lives.push((Number(exit[1]) - forked.get(exit[3])) * 1000);
      forked.delete(exit[3]);
    }
  }
  return lives;
}

function main() {
  if (process.geteuid() !== 0) throw new Error('runs as root: it starts the provider as uid 65534 and perf record -a');
  const at = process.argv.indexOf('--reads');
  const reads = at > 0 ? Number(process.argv[at + 1]) : 200;
  const { node, pkg } = nobodyProvider();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-crosscheck-'));
  fs.chownSync(dir, NOBODY_UID, NOBODY_UID);
  fs.chmodSync(dir, 0o711);
  const data = path.join(os.tmpdir(), `cordon-crosscheck-${process.pid}.perf`);
  try {
    const identity = ['--reuid', String(NOBODY_UID), '--regid', String(NOBODY_UID), '--clear-groups', '--'];
    const run = spawnSync('perf', ['record', '-q', '-a', '-e', 'sched:sched_process_fork,sched:sched_process_exit', '-o', data, '--',
      '/usr/bin/setpriv', ...identity, node, '-e', LOOP(pkg, dir, reads)], { cwd: '/', encoding: 'utf8', env: { PATH: process.env.PATH }, maxBuffer: 64 << 20 });
    if (run.status !== 0) throw new Error(`perf record: ${run.status ?? run.signal}: ${run.stderr}`);
    const { pid, times } = JSON.parse(run.stdout);
    const script = spawnSync('perf', ['script', '-i', data], { encoding: 'utf8', maxBuffer: 256 << 20 });
    // By exit time: the first writeFile's helper, the reads', then the holder's (killed at endAll).
    const all = helperLives(script.stdout, pid);
    if (all.length < reads + 1) throw new Error(`perf saw ${all.length} helpers of the provider, not ${reads} reads and a write`);
    const lives = all.slice(1, reads + 1);
    const js = summarize(times);
    const helper = summarize(lives);
    console.log(`uid-65534 provider, session.readFile 4 KiB, ${reads} reads (load ${os.loadavg()[0].toFixed(2)})`);
    console.log(`  JS-timed (as bench section 14):          median ${js.median.toFixed(2)} ms, p90 ${js.p90.toFixed(2)} ms`);
    console.log(`  helper fork -> exit (kernel, perf):      median ${helper.median.toFixed(2)} ms, p90 ${helper.p90.toFixed(2)} ms (n ${helper.n})`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(data, { force: true });
  }
}

main();
