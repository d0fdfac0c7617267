'use strict';

// mount(8) and umount(8) for a root provider's session workspaces, run as
// child processes the event loop does not wait for: execFileSync held the
// provider's JavaScript thread for each one (a fork, an exec and the mount
// or unmount itself; measured with bench/workspace-mount.js: the loop ran
// up to 25 ms late, 8.6 ms on average, during workspace creates and
// removes). Fixed programs, an empty environment, bounded in time, a
// failure rejects with the tool's stderr (`error.stderr`), as
// execFileSync's did.

const { spawn } = require('node:child_process');

const MOUNT = '/usr/bin/mount';
const UMOUNT = '/usr/bin/umount';
/** Wait for mount(8)/umount(8) (ms): they are local and quick, never unbounded. */
const MOUNT_TIMEOUT_MS = 10_000;
/** Stderr kept of a tool (bytes): its message, not an unbounded buffer. */
const STDERR_BYTES = 4096;

/**
 * Runs `program args…`; `fd` (optional) is the child's fd 3. Resolves when
 * it exits 0; rejects with `{stderr, status, signal}` otherwise (SIGTERM at
 * MOUNT_TIMEOUT_MS, as execFileSync's timeout).
 */
function runMountTool(program, args, { fd } = {}) {
  return new Promise((resolve, reject) => {
    const stdio = fd === undefined ? ['ignore', 'ignore', 'pipe'] : ['ignore', 'ignore', 'pipe', fd];
    let child;
    try {
      child = spawn(program, args, { stdio, env: {} });
    } catch (error) {
      reject(error);
      return;
    }
    // The bound is ours rather than spawn's `timeout` option: Node 22 clears
    // that timer only at 'exit', which a spawn that failed (ENOENT, EMFILE,
    // EAGAIN) never emits, so the provider's event loop stayed alive for the
    // whole bound (as in holder-files.js).
    const bound = setTimeout(() => child.kill('SIGTERM'), MOUNT_TIMEOUT_MS);
    let stderr = '';
    child.once('error', (error) => {
      clearTimeout(bound);
      reject(error);
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-STDERR_BYTES);
    });
    child.once('close', (status, signal) => {
      clearTimeout(bound);
      if (status === 0) resolve();
      else reject(Object.assign(new Error(`${program} ${args.join(' ')} failed (${signal ?? `status ${status}`})`), { stderr: stderr || undefined, status, signal }));
    });
  });
}

/** mount(8) or umount(8) on the directory `fd` holds, as the child's fd 3: no path is resolved again. */
function onDescriptor(program, args, fd) {
  return runMountTool(program, ['-c', ...args, '/proc/self/fd/3'], { fd });
}

module.exports = { runMountTool, onDescriptor, MOUNT, UMOUNT };
