'use strict';

// The event loop while a root provider mounts and unmounts session
// workspaces (lib/sessions/workspace.js: mount(8) and umount(8) of the
// tmpfs). Two contestants, each N times, with perf_hooks'
// monitorEventLoopDelay (1 ms resolution) recording how late the loop ran:
//   workspace  createWorkspace + removeWorkspace, nothing else (the mount
//              and unmount, a few directory operations);
//   session    manager.acquire + session.end (adds the sandbox's start and
//              stop).
// Prints, per contestant, the loop delay's max, p99 and mean (ms) and the
// wall time per iteration. Root only (the workspace quota is a tmpfs).
//   node bench/workspace-mount.js [N]     (default 20)

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
const { prepareRoot, createWorkspace, removeWorkspace } = require('../lib/sessions/workspace');
const { loadBinding } = require('../lib/native');
const { createSessionManager } = require('..');

const ms = (ns) => Number((ns / 1e6).toFixed(2));

async function measured(name, iterations, body) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  for (let i = 0; i < iterations; i += 1) await body(i);
  const wall = (performance.now() - started) / iterations;
  delay.disable();
  const row = { contestant: name, n: iterations, loopDelayMaxMs: ms(delay.max), loopDelayP99Ms: ms(delay.percentile(99)), loopDelayMeanMs: ms(delay.mean), wallMsPerIteration: Number(wall.toFixed(2)) };
  console.log(JSON.stringify(row));
  return row;
}

async function main() {
  if (process.geteuid() !== 0) {
    console.log('skipped: needs a root provider (the workspace quota is a tmpfs)');
    return;
  }
  const iterations = Number(process.argv[2] ?? 20);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-mount-'));
  fs.chmodSync(dir, 0o711);
  try {
    const native = loadBinding();
    const deps = {
      removeTree: { tree: (d, max) => native.removeTree(d, max), contents: (d, max) => native.emptyTree(d, max) },
      killUid: (uid, userns) => native.killUidProcesses(uid, userns),
    };
    const root = prepareRoot(path.join(dir, 'workspaces'));
    // An owner id of the launcher's range that no session of this benchmark claims.
    const ownerUid = native.WORKSPACE_OWNER_UID_FIRST + native.WORKSPACE_OWNER_UIDS - 1;
    await measured('workspace', iterations, async (i) => {
      const key = `bench-${i}`;
      await createWorkspace({ root, key, ownerUid, quotaBytes: 1 << 20 });
      const report = await removeWorkspace({ workspace: path.join(root.path, key, 'ws'), ownerUid }, deps, { sweep: false });
      if (!report.removed) throw new Error(`not removed: ${report.detail}`);
    });
    const manager = createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), authorize: () => true, workspaceBytes: 1 << 20 });
    await measured('session', iterations, async (i) => {
      const session = await manager.acquire({ tenant: 'bench', conversation: `c${i}` }, 'u');
      await session.end();
    });
    await manager.close?.();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
