'use strict';

// What starting bwrap costs the provider's process, per cold
// `spawnIsolated(['/bin/true'])`: the time the calling (JS) thread is blocked
// inside `spawnIsolated`, the launcher's `fork.start → fork.exec_done` step
// (its step stamps, CORDON_STEP_TRACE: from the hand-off to the fork thread
// until bwrap's exec has replaced the child's memory), and the minor page
// faults the provider takes per run (process.resourceUsage(): a fork of the
// provider write-protects its memory, and its writes fault until the
// child's exec). docs/performance.md › "Change: bwrap started without a fork
// of the provider".
//
//   node bench/spawn-cost.js [--runs 40] [--gap-ms 20] [--rounds 2] [--nobody] [checkout ...]
//
// --nobody (as root): the provider is a Node process of uid 65534 with
// subordinate ids, started under setpriv from a world-readable copy of each
// checkout's package (__test__/security/nobody-provider.js, as
// bench/nobody-child.js does), so each run also makes its user namespace
// (docs/performance.md › "Change: a non-root provider's user namespace
// holder cloned, not forked").
//
// Each checkout (default: this one) is a built cordon (`npm run build`);
// each round runs every checkout once, in a child process of its own, in
// turn, so a load drift hits each alike. Medians per sample.

const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync } = require('node:child_process');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const NOBODY = args.includes('--nobody');
const NOBODY_UID = 65534;
const checkouts = args.filter((arg, i) => !arg.startsWith('--') && (i === 0 || !args[i - 1].startsWith('--') || args[i - 1] === '--nobody'));
const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];

async function child(checkout, runs, gapMs, traceFile) {
  const { spawnIsolated, readOnly } = require(checkout);
  const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
  const blocked = [];
  const faults = [];
  for (let i = 0; i < runs + 1; i += 1) {
    const faultsBefore = process.resourceUsage().minorPageFault;
    const started = process.hrtime.bigint();
    const run = spawnIsolated(['/bin/true'], { policy: readOnly() });
    const returned = process.hrtime.bigint();
    run.stderr.resume();
    run.protocol.resume();
    const result = await run.wait();
    if (result.returncode !== 0) throw new Error(`exit ${result.returncode}`);
    // The first run is a warm-up (the addon's and the launcher's caches).
    if (i > 0) {
      blocked.push(Number(returned - started) / 1e6);
      faults.push(process.resourceUsage().minorPageFault - faultsBefore);
    }
    await sleep(gapMs);
  }
  const steps = new Map();
  for (const line of fs.readFileSync(traceFile, 'utf8').trim().split('\n')) {
    const [id, step, ns] = line.split(' ');
    if (!steps.has(id)) steps.set(id, {});
    steps.get(id)[step] = Number(ns);
  }
  const forkToExec = [...steps.values()].slice(1).map((s) => (s['fork.exec_done'] - s['fork.start']) / 1e6);
  process.stdout.write(JSON.stringify({
    blocked: median(blocked),
    forkToExec: median(forkToExec),
    faults: median(faults),
    rss: process.memoryUsage().rss / 2 ** 20,
  }));
}

const nobodyCopies = new Map();

/** The child, as uid 65534 from the checkout's world-readable package copy. */
function nobodyChild(checkout, runs, gapMs, dir, traceFile, env) {
  if (!nobodyCopies.has(checkout)) {
    nobodyCopies.set(checkout, require(path.join(checkout, '__test__', 'security', 'nobody-provider')).nobodyProvider());
  }
  const { node, pkg } = nobodyCopies.get(checkout);
  fs.chownSync(dir, NOBODY_UID, NOBODY_UID);
  const script = `const fs = require('node:fs'); const median = ${median.toString()};
    (${child.toString()})(${JSON.stringify(pkg)}, ${runs}, ${gapMs}, ${JSON.stringify(traceFile)})
      .catch((error) => { console.error(error); process.exit(1); });`;
  return execFileSync('/usr/bin/setpriv', ['--reuid', String(NOBODY_UID), '--regid', String(NOBODY_UID), '--clear-groups', '--', node, '-e', script], {
    encoding: 'utf8', cwd: '/', env: { PATH: env.PATH, CORDON_STEP_TRACE: env.CORDON_STEP_TRACE },
  });
}

function main() {
  const runs = option('--runs', 40);
  const gapMs = option('--gap-ms', 20);
  const rounds = option('--rounds', 2);
  const builds = (checkouts.length ? checkouts : [path.resolve(__dirname, '..')]).map((c) => path.resolve(c));
  console.log(`cold spawnIsolated(['/bin/true']), ${runs} runs ${gapMs} ms apart per sample${NOBODY ? ', provider uid 65534 with subordinate ids' : ''}: medians`);
  console.log('| round | checkout | load | JS thread in spawnIsolated, ms | fork.start → fork.exec_done, ms | minor faults per run | RSS MiB |');
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: |');
  for (let round = 1; round <= rounds; round += 1) {
    for (const checkout of builds) {
      const load = os.loadavg()[0].toFixed(2);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-spawn-cost-'));
      const traceFile = path.join(dir, 'steps');
      try {
        // Read once by the launcher, at its first stamp.
        const env = { ...process.env, CORDON_STEP_TRACE: traceFile };
        const out = NOBODY ? nobodyChild(checkout, runs, gapMs, dir, traceFile, env)
          : execFileSync(process.execPath, [__filename, '--child', checkout, String(runs), String(gapMs), traceFile], { encoding: 'utf8', env });
        const r = JSON.parse(out);
        console.log(`| ${round} | ${checkout} | ${load} | ${r.blocked.toFixed(3)} | ${r.forkToExec.toFixed(3)} | ${r.faults} | ${r.rss.toFixed(0)} |`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }
}

if (args[0] === '--child') {
  child(args[1], Number(args[2]), Number(args[3]), args[4]).catch((error) => { console.error(error); process.exit(1); });
} else {
  main();
}
