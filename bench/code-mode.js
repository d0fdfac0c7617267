'use strict';

// Code Mode overhead, side by side with its floor, in one command:
//   node bench/code-mode.js [--runs N] [--calls N]
// (a) cold start: createCodeMode().run("return 1") — launcher, bwrap, runner,
//     ready/execute/result — against raw bwrap running /bin/true with the
//     launcher's flags (namespaces, caps, runtime binds, /proc, /dev, tmpfs,
//     read-only root; without the seccomp and info fds, which need the launcher).
// (b) tool-call round trip: N calls in one execution through the whole stack
//     (runner → fd 3 → launcher pumps → host validation → handler → back)
//     against a raw Node ↔ child Node JSON-lines echo over a socketpair.
// Medians of interleaved runs; the ratio is cordon / peer. Two attribution
// columns say where the difference lives: spawnIsolated(["/bin/true"]) alone
// (the launcher's share of (a)) and cordon-runner over a plain socketpair with
// no sandbox and no host logic (the runner's share of (b)).

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createCodeMode, spawnIsolated, readOnly, runnerPath } = require('..');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const RUNS = option('--runs', 30);
const CALLS = option('--calls', 1000);
const BWRAP = '/usr/bin/bwrap';

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The launcher's bwrap flags (crates/launcher/src/bwrap_argv.rs) with paths in place of descriptor binds. */
function rawBwrapArgv(command) {
  const runtime = [];
  for (const dir of ['/lib', '/lib64', '/lib32', '/libx32', '/bin', '/sbin']) {
    if (!fs.existsSync(dir)) continue;
    const stat = fs.lstatSync(dir);
    if (stat.isSymbolicLink()) runtime.push('--symlink', fs.readlinkSync(dir), dir);
    else runtime.push('--ro-bind', dir, dir);
  }
  if (fs.existsSync('/etc/ld.so.cache')) runtime.push('--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache');
  const workspace = fs.mkdtempSync('/tmp/cordon-bench-ws-');
  const exe = fs.realpathSync(command[0]);
  const argv = [
    '--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup',
    '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'cordon',
    '--ro-bind', '/usr', '/usr', ...runtime, '--proc', '/proc', '--dev', '/dev',
    '--size', String(256 << 20), '--tmpfs', '/tmp', '--ro-bind', workspace, '/workspace', '--ro-bind', exe, exe,
    '--remount-ro', '/', '--chdir', '/workspace', '--clearenv', '--', ...command,
  ];
  return { argv, workspace };
}

function timeChild(file, argv) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, argv, { stdio: 'ignore', env: {} });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`exit ${code}`))));
  });
}

async function timeSpawnIsolatedTrue() {
  const started = process.hrtime.bigint();
  const execution = spawnIsolated(['/bin/true'], { policy: readOnly() });
  execution.protocol.resume();
  execution.stderr.resume();
  await execution.wait();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function coldStart() {
  const codeMode = createCodeMode({ tools: [], admission: { maxConcurrent: 1 } });
  const { argv: rawArgv, workspace } = rawBwrapArgv(['/bin/true']);
  await codeMode.run('return 1;'); // warm the page cache and the executable hash cache, not the sandbox
  await timeChild(BWRAP, rawArgv);
  const cordon = [];
  const raw = [];
  const launcher = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = process.hrtime.bigint();
    const result = await codeMode.run('return 1;');
    if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
    cordon.push(Number(process.hrtime.bigint() - started) / 1e6);
    raw.push(await timeChild(BWRAP, rawArgv));
    launcher.push(await timeSpawnIsolatedTrue());
  }
  fs.rmSync(workspace, { recursive: true, force: true });
  return { cordonMs: median(cordon), rawBwrapMs: median(raw), spawnIsolatedTrueMs: median(launcher) };
}

async function toolCalls() {
  const echo = { name: 'echo', description: 'Echo the arguments', effect: 'read', inputSchema: { type: 'object', properties: { i: { type: 'integer' } } }, handler: (a) => a };
  const codeMode = createCodeMode({ tools: [echo], limits: { toolCalls: CALLS, timeoutMs: 60000 } });
  const code = `for (let i = 0; i < ${CALLS}; i++) { const r = await tools.echo({ i }); if (r.i !== i) throw new Error('bad echo'); } return ${CALLS};`;
  const perCall = [];
  for (let i = 0; i < 5; i += 1) {
    const result = await codeMode.run(code);
    if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
    // From the first call's request to the last call's completion: the round trips only.
    const first = result.events.find((e) => e.type === 'tool.requested');
    const last = result.events.filter((e) => e.type === 'tool.completed').at(-1);
    perCall.push(((last.time - first.time) / (CALLS - 1)) * 1000);
  }
  const raw = [];
  const runnerOnly = [];
  for (let i = 0; i < 5; i += 1) {
    raw.push(await rawEcho(CALLS, process.execPath, ['-e', ECHO_CHILD], echoFrame));
    runnerOnly.push(await rawEcho(CALLS, runnerPath, ['--max-calls', String(CALLS)], runnerFrame(CALLS)));
  }
  return { cordonUsPerCall: median(perCall), rawEchoUsPerCall: median(raw), runnerOverSocketpairUsPerCall: median(runnerOnly) };
}

const ECHO_CHILD = `
const net = require('node:net');
const s = new net.Socket({ fd: 3, readable: true, writable: true });
let buf = '';
s.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\\n')) >= 0) { const f = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
  s.write(JSON.stringify({ type: 'tool.result', id: f.id, ok: true, result: f.arguments }) + '\\n'); } });
s.on('end', () => process.exit(0));`;

/** The echo child needs no first frame; the first call starts the exchange. */
const echoFrame = (socket, n) => socket.write(`${JSON.stringify({ type: 'tool.call', id: n + 1, name: 'echo', arguments: { i: n } })}\n`);

/** cordon-runner without a sandbox: the execute frame starts it calling tools.echo. */
function runnerFrame(calls) {
  const execute = {
    version: 'code-bridge-v1', type: 'execute', executionId: 'bench', tools: [{ name: 'echo' }],
    code: `for (let i = 0; i < ${calls}; i++) await tools.echo({ i }); return 1;`,
    limits: { maxToolCalls: calls, maxResultBytes: 1024, timeoutMs: 60000 },
  };
  return (socket, n) => { if (n === 0) socket.write(`${JSON.stringify(execute)}\n`); };
}

/**
 * N sequential JSON-line round trips over a socketpair (the child's fd 3).
 * With the echo child the parent calls; with the runner the child calls and
 * the parent answers. Timed from the first round trip to the last.
 */
function rawEcho(calls, file, argv, start) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
    const socket = child.stdio[3];
    let buf = '';
    let n = 0;
    let started;
    socket.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const frame = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (frame.type === 'tool.call') { // the runner calls: answer like a host would
          socket.write(`${JSON.stringify({ version: 'code-bridge-v1', type: 'tool.result', id: frame.id, ok: true, result: frame.arguments })}\n`);
        } else if (frame.type !== 'tool.result') continue;
        n += 1;
        if (n === 1) started = process.hrtime.bigint();
        if (n === calls) {
          resolve((Number(process.hrtime.bigint() - started) / 1e6 / (calls - 1)) * 1000);
          socket.end();
        } else if (frame.type === 'tool.result') start(socket, n);
      }
    });
    child.on('error', reject);
    start(socket, 0);
  });
}

async function main() {
  const a = await coldStart();
  const b = await toolCalls();
  const report = {
    date: new Date().toISOString(),
    runs: RUNS,
    calls: CALLS,
    coldStart: { ...a, ratio: a.cordonMs / a.rawBwrapMs },
    toolCall: { ...b, ratio: b.cordonUsPerCall / b.rawEchoUsPerCall },
  };
  console.log(`(a) cold run("return 1"): cordon ${a.cordonMs.toFixed(2)} ms vs raw bwrap /bin/true ${a.rawBwrapMs.toFixed(2)} ms → ${report.coldStart.ratio.toFixed(2)}× (median of ${RUNS}); spawnIsolated(["/bin/true"]) alone ${a.spawnIsolatedTrueMs.toFixed(2)} ms`);
  console.log(`(b) tool call round trip: cordon ${b.cordonUsPerCall.toFixed(1)} µs vs raw socketpair echo ${b.rawEchoUsPerCall.toFixed(1)} µs → ${report.toolCall.ratio.toFixed(2)}× (${CALLS} calls, median of 5); cordon-runner over a bare socketpair ${b.runnerOverSocketpairUsPerCall.toFixed(1)} µs`);
  console.log(JSON.stringify(report));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
