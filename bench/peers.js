'use strict';

// The baselines cordon is compared with: raw Bubblewrap with the launcher's
// flags, plain child processes, and a JSON-lines echo over a raw socketpair.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { nowMs } = require('./stats');

const BWRAP = '/usr/bin/bwrap';

/**
 * The launcher's bwrap flags (crates/launcher/src/plan/bwrap_argv.rs: namespaces,
 * caps, runtime binds, /proc, /dev, workspace, temp, read-only root, env
 * wrapper) with paths in place of its descriptor binds, and without what
 * needs the launcher (seccomp fd, info fd, cgroup, rlimits).
 */
function rawBwrap(executable) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-'));
  const workspace = path.join(dir, 'workspace');
  const temp = path.join(dir, 'temp');
  fs.mkdirSync(workspace);
  fs.mkdirSync(temp);
  const runtime = [];
  for (const entry of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    let stat;
    try { stat = fs.lstatSync(entry); } catch { continue; }
    if (stat.isSymbolicLink()) runtime.push('--symlink', fs.readlinkSync(entry), entry);
    else if (stat.isDirectory()) runtime.push('--ro-bind', entry, entry);
  }
  const exe = fs.realpathSync(executable);
  const argv = [
    '--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup',
    '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'cordon',
    '--ro-bind', '/usr', '/usr', ...runtime, '--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache',
    '--proc', '/proc', '--dev', '/dev', '--ro-bind', workspace, '/workspace', '--bind', temp, '/tmp',
    '--ro-bind', exe, exe, '--remount-ro', '/', '--chdir', '/workspace', '--clearenv',
    '--', '/usr/bin/env', '-u', 'PWD', '--', exe,
  ];
  return { argv, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** ms from spawn to 'close' of a child that must exit 0. */
function timeChild(file, argv) {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const child = spawn(file, argv, { stdio: 'ignore', env: {} });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(nowMs() - started) : reject(new Error(`${file} exited ${code}`))));
  });
}

/** A Node child that answers each JSON line on its fd 3 with a tool.result line. */
const ECHO_CHILD = `
const net = require('node:net');
const s = new net.Socket({ fd: 3, readable: true, writable: true });
let buf = '';
s.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\\n')) >= 0) { const f = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
  s.write(JSON.stringify({ version: 'code-bridge-v1', type: 'tool.result', id: f.id, ok: true, result: f.arguments }) + '\\n'); } });
s.on('end', () => process.exit(0));`;

/** Reads JSON lines from `socket`, calling `onFrame` for each. */
function onFrames(socket, onFrame) {
  let buf = '';
  socket.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      onFrame(JSON.parse(line));
    }
  });
}

/**
 * µs per round trip: `calls` sequential JSON-line calls from this process to a
 * child Node process over a socketpair (its fd 3), timed from the first answer
 * to the last (the same window the Code Mode row uses).
 */
function rawEchoUs(calls) {
  return echoUs(calls, spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] }));
}

/**
 * The same round trips with `cat` on the child's fd 3: the bytes come back as
 * they went, so this is the socketpair and two process wake-ups, with no JSON
 * work in the child — the floor under any JSON-lines bridge.
 */
function catEchoUs(calls) {
  return echoUs(calls, spawn('/usr/bin/sh', ['-c', 'exec cat <&3 >&3'], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] }));
}

function echoUs(calls, child) {
  return new Promise((resolve, reject) => {
    const socket = child.stdio[3];
    const call = (n) => socket.write(`${JSON.stringify({ version: 'code-bridge-v1', type: 'tool.call', id: n, name: 'echo', arguments: { i: n } })}\n`);
    let started;
    onFrames(socket, (frame) => {
      if (frame.id === 1) started = nowMs();
      if (frame.id === calls) {
        resolve(((nowMs() - started) / (calls - 1)) * 1000);
        socket.end();
      } else call(frame.id + 1);
    });
    child.on('error', reject);
    call(1);
  });
}

/**
 * µs per round trip with cordon-runner over a bare socketpair (no sandbox, no
 * host logic): the runner's own share of a tool call.
 */
function runnerOverSocketpairUs(runnerPath, calls) {
  return new Promise((resolve, reject) => {
    const child = spawn(runnerPath, ['--max-calls', String(calls)], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] });
    const socket = child.stdio[3];
    let started;
    onFrames(socket, (frame) => {
      if (frame.type !== 'tool.call') return;
      if (frame.id === 1) started = nowMs();
      if (frame.id === calls) resolve(((nowMs() - started) / (calls - 1)) * 1000);
      socket.write(`${JSON.stringify({ version: 'code-bridge-v1', type: 'tool.result', id: frame.id, ok: true, result: frame.arguments })}\n`);
    });
    child.on('error', reject);
    socket.write(`${JSON.stringify({
      version: 'code-bridge-v1', type: 'execute', executionId: 'bench', tools: [{ name: 'echo' }],
      code: `for (let i = 0; i < ${calls}; i++) await tools.echo({ i }); return 1;`,
      limits: { maxToolCalls: calls, maxResultBytes: 1024, timeoutMs: 60000 },
    })}\n`);
  });
}

module.exports = { BWRAP, rawBwrap, timeChild, rawEchoUs, catEchoUs, runnerOverSocketpairUs };
