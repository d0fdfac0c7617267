'use strict';

// Section 14: sessions of a non-root provider (docs/sessions.md, "Non-root
// providers") beside the root provider's same operation, interleaved in
// one loop (root, uid 65534, floor, root, …):
//   14 non-root session exec: session.exec(['/bin/true']) in a warm session
//     of the root provider (baseline) and of a uid-65534 provider (its
//     sandbox joins the workspace holder's namespaces), and
//     child_process.execFile('/bin/true') (starting any process from Node)
//   14 non-root session writeFile / readFile 4 KiB: the root provider's
//     file tools (in-process, openat2 beneath the workspace) vs the
//     uid-65534 provider's (one `cordon-exec-agent session-files` process
//     per operation, joining the holder's namespaces) vs fs.promises on
//     the root session's workspace
//   14 non-root session readFile 4 KiB, batch mean: a second method for
//     the readFile rows: back-to-back reads timed as one batch (one clock
//     read per batch, not per operation), total / count
// The uid-65534 provider is a child process (bench/nobody-child.js) that
// times each operation with its own clock, as this process times the
// root side. Needs root (to start it) and a subordinate range for uid
// 65534 (.ci/run adds one); skipped, loudly, otherwise.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { createSessionManager } = require('..');
const { sectionRows, nowMs } = require('./stats');
const { nobodyChild, NOBODY_UID } = require('./nobody-child');

const FILE_BYTES = 4 << 10;
const WORKSPACE_BYTES = 8 << 20;

/**
 * One timed session operation ("exec", "write", "read", or "batch N": N
 * reads timed as one), in ms, on `session`; `data` is what writeFile
 * writes (and readFile reads back: its length is checked).
 */
async function timeOperation(session, op, data) {
  const started = nowMs();
  if (op === 'exec') {
    const r = await session.exec(['/bin/true']);
    if (r.exitCode !== 0) throw new Error(`session exec /bin/true: ${r.exitCode}`);
  } else if (op === 'write') {
    await session.writeFile('tool.bin', data);
  } else if (op === 'read') {
    const read = await session.readFile('tool.bin', { maxBytes: data.length });
    if (read.length !== data.length) throw new Error(`readFile gave ${read.length} bytes`);
  } else if (op.startsWith('batch ')) {
    const count = Number(op.slice(6));
    for (let i = 0; i < count; i += 1) await session.readFile('tool.bin', { maxBytes: data.length });
    return (nowMs() - started) / count;
  } else {
    throw new Error(`unknown operation ${op}`);
  }
  return nowMs() - started;
}

// The uid-65534 provider: each stdin line is an operation, answered with
// one JSON line. "start": a manager over its own sessions root under `dir`
// and one warm session holding a 4 KiB tool.bin ({ready}); then timed
// operations ({ms}); "end" ends the session ({ended}).
const CHILD = (pkg, dir) => `
const { createSessionManager } = require(${JSON.stringify(pkg)});
const crypto = require('node:crypto');
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
${timeOperation.toString()}
let manager = null;
let session = null;
const data = crypto.randomBytes(${FILE_BYTES});
async function answer(op) {
  if (op === 'start') {
    manager = createSessionManager({ secret: crypto.randomBytes(32), root: ${JSON.stringify(`${dir}/root`)}, authorize: () => true, workspaceBytes: ${WORKSPACE_BYTES} });
    session = await manager.acquire({ tenant: 'bench', conversation: 'non-root' }, 'bench');
    await session.writeFile('tool.bin', data);
    return { ready: true };
  }
  if (op === 'end') {
    await manager?.endAll();
    return { ended: true };
  }
  return { ms: await timeOperation(session, op, data) };
}
require('node:readline').createInterface({ input: process.stdin }).on('line', (op) => {
  answer(op).then((value) => value, (error) => ({ error: String(error.stack ?? error) }))
    .then((value) => process.stdout.write(JSON.stringify(value) + '\\n'));
});
`;

/** Why section 14 cannot run here, or null. */
function skipReason() {
  if (process.geteuid() !== 0) return 'it needs root (to start a provider as uid 65534, and the root provider\'s tmpfs workspace)';
  return require('../__test__/security/provider-process').nonRootSkipReason();
}

/** The uid-65534 provider over a fresh directory of its own; `ms(op)` resolves with its timing of `op`. */
async function nonRootSessions() {
  // Its own, 0711: the session owner uid must traverse it (docs/sessions.md).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-nonroot-'));
  fs.chownSync(dir, NOBODY_UID, NOBODY_UID);
  fs.chmodSync(dir, 0o711);
  const child = nobodyChild((pkg) => CHILD(pkg, dir));
  const reply = async (line) => {
    const answer = await child.ask(line);
    if (answer.error) throw new Error(`uid-65534 provider: ${answer.error}`);
    return answer;
  };
  const close = async () => {
    try {
      await reply('end');
    } finally {
      await child.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    await reply('start');
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  return { ms: async (op) => (await reply(op)).ms, close };
}

async function sessionsNonRoot({ iterations, warmup, batch }) {
  const reason = skipReason();
  if (reason) {
    console.log(`section 14 (non-root sessions) skipped: ${reason}`);
    return [];
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-bench-sessions-root-'));
  const manager = createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true, workspaceBytes: WORKSPACE_BYTES });
  const run = promisify(execFile);
  const samples = {};
  const add = (key, value) => (samples[key] ??= []).push(value);
  let nonRoot = null;
  try {
    nonRoot = await nonRootSessions();
    const session = await manager.acquire({ tenant: 'bench', conversation: 'root' }, 'bench');
    const data = crypto.randomBytes(FILE_BYTES);
    await session.writeFile('tool.bin', data);
    const plain = path.join(session.workspace, 'plain.bin');
    await fs.promises.writeFile(plain, data);
    for (let i = 0; i < warmup + iterations; i += 1) {
      const keep = i >= warmup;
      const round = {
        execRoot: await timeOperation(session, 'exec', data),
        execNonRoot: await nonRoot.ms('exec'),
        execFile: await (async () => { const t = nowMs(); await run('/bin/true'); return nowMs() - t; })(),
        writeRoot: await timeOperation(session, 'write', data),
        writeNonRoot: await nonRoot.ms('write'),
        writeFs: await (async () => { const t = nowMs(); await fs.promises.writeFile(plain, data); return nowMs() - t; })(),
        readRoot: await timeOperation(session, 'read', data),
        readNonRoot: await nonRoot.ms('read'),
        readFs: await (async () => { const t = nowMs(); await fs.promises.readFile(plain); return nowMs() - t; })(),
      };
      if (keep) for (const [key, value] of Object.entries(round)) add(key, value);
    }
    // The batch rows (a second method: one clock read per batch), after the interleaved loop.
    for (let i = 0; i < 3; i += 1) {
      add('batchRoot', await timeOperation(session, `batch ${batch}`, data));
      add('batchNonRoot', await nonRoot.ms(`batch ${batch}`));
    }
  } finally {
    await nonRoot?.close();
    await manager.endAll();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return [
    ...sectionRows('14 non-root session exec /bin/true (warm)', 'ms', [
      ['root provider session.exec', samples.execRoot], ['uid-65534 provider session.exec', samples.execNonRoot], ['child_process.execFile /bin/true', samples.execFile],
    ]),
    ...sectionRows('14 non-root session writeFile 4 KiB', 'ms', [
      ['root provider session.writeFile', samples.writeRoot], ['uid-65534 provider session.writeFile', samples.writeNonRoot], ['fs.promises.writeFile', samples.writeFs],
    ]),
    ...sectionRows('14 non-root session readFile 4 KiB', 'ms', [
      ['root provider session.readFile', samples.readRoot], ['uid-65534 provider session.readFile', samples.readNonRoot], ['fs.promises.readFile', samples.readFs],
    ]),
    ...sectionRows(`14 non-root session readFile 4 KiB, batch mean of ${batch}`, 'ms', [
      ['root provider session.readFile', samples.batchRoot], ['uid-65534 provider session.readFile', samples.batchNonRoot],
    ]),
  ];
}

module.exports = { sessionsNonRoot };
