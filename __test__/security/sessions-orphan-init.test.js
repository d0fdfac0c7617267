'use strict';

// Round 7b, R7b-3: a provider SIGKILLed while its session sandbox is set up
// left bwrap's namespace init behind. bwrap clones the init, which blocks
// reading an eventfd until the outer bwrap writes it, and arms its own
// parent-death signal only after that read; the outer bwrap dies with the
// provider (the parent-death signal the launcher armed), so an init cloned
// but not yet released blocks forever (pid 1 of its pid namespace, PPID 1,
// uid U, holding the session's mount namespace). The window is a few
// microseconds of the outer bwrap's time: the finding needed load ~10 to
// see it in 1 of 10 tries. So each try here steps the outer bwrap with
// SIGSTOP/SIGCONT until its init exists, and kills the provider only when
// the init is blocked on that eventfd with the outer bwrap stopped before
// its write: the exact state a lost race leaves, reached by stepping, not
// by timing. Then a fresh provider runs recover(), acquire() and end() of
// the same session, and no process of the session's owner uid may be left
// (the fix: lib/sessions/owner-sweep.js, crates/launcher/src/host/uid_sweep.rs).
// Both a root provider and a uid-65534 one (as in sessions-nonroot.test.js).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const h = require('./harness');
const { FILE_STORE_SCRIPT } = require('./file-store-script');
const { unmountLeft } = require('../sessions-support');
const { READ_SYSCALL, blockedOnEventfd, killProviderAtClone, processesOf, realUid, state } = require('./bwrap-stepping');

const skip = process.geteuid() === 0 ? false : 'needs root: it steps the sandbox of a root and of a uid-65534 provider with SIGSTOP';
/** Tries per provider kind (each ~2-5 s), and the hits that end the loop early. */
const MAX_TRIES = 30;
const WANTED_HITS = 2;
/** A provider script over `<dir>/root` with a JSON-file store (file-store-script.js). */
function script(dir, body, agentPath) {
  return `
    const fs = require('node:fs');
    const dir = ${JSON.stringify(dir)};
    ${FILE_STORE_SCRIPT}
    const m = cordon.createSessionManager({ secret: Buffer.from('0123456789abcdef0123456789abcdef'), root: dir + '/root', store,
      authorize: () => true, workspaceBytes: 1 << 20, agentPath: ${JSON.stringify(agentPath)} });
    const out = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
    (async () => { ${body} })().catch((e) => { out({ failed: String(e.stack ?? e), code: e.code }); process.exitCode = 3; });`;
}

function providerKind(nobody) {
  if (!nobody) return { node: process.execPath, pkg: path.join(__dirname, '..', '..'), identity: {}, agentPath: undefined };
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-orphan-init-pkg-'));
  fs.chmodSync(scratch, 0o755);
  process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
  const { node, pkg } = require('./nobody-provider').nobodyProvider();
  const agentPath = path.join(scratch, 'cordon-exec-agent');
  fs.copyFileSync(path.join(require('../../lib/platform-package').cargoTargetDir(), 'release', 'cordon-exec-agent'), agentPath);
  fs.chmodSync(agentPath, 0o755);
  return { node, pkg, identity: { uid: h.NOBODY_UID, gid: h.NOBODY_UID }, agentPath };
}

async function oneTry(kind, nobody) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-orphan-init-'));
  if (nobody) fs.chownSync(dir, h.NOBODY_UID, h.NOBODY_UID);
  fs.chmodSync(dir, 0o711);
  const args = (body) => ['-e', `const cordon = require(${JSON.stringify(kind.pkg)});\n${script(dir, body, kind.agentPath)}`];
  const first = spawn(kind.node, args(`await m.acquire({ tenant: 'acme', conversation: 'c1' }, 'u'); out({ acquired: true }); await new Promise(() => {});`),
    { cwd: '/', env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'], ...kind.identity });
  const { init } = await killProviderAtClone(first);
  let result = init === null ? { hit: false } : { hit: true, init };
  let ownerUid = result.hit ? realUid(result.init) : null;
  // The lost race's state: the outer bwrap died with the provider, the init lives on, still blocked.
  // (Anything else was not that state after all: a miss, though nothing may be left of it either.)
  if (result.hit && !(state(result.init) === 'S' && blockedOnEventfd(result.init))) {
    result = { hit: false };
    ownerUid = null;
  }
  let left = [];
  let second = null;
  {
    const run = spawnSync(kind.node, args(`
      const rec = await m.recover();
      const s = await m.acquire({ tenant: 'acme', conversation: 'c1' }, 'u');
      const origin = s.origin;
      await s.end();
      out({ rec, origin, ownerUid: s.ownerUid });`), { cwd: '/', encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH }, ...kind.identity });
    second = { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr.slice(-2000) };
    // Only a subordinate or reserved owner uid (never 65534 or a host account's): what is left of it is this try's.
    if (ownerUid !== null && ownerUid > 65535) left = processesOf(ownerUid);
  }
  // Whatever this try left (a failure above, or the bug itself): killed by pid so the next try and test start clean.
  for (const line of left) {
    try {
      process.kill(Number(line.split(' ')[0]), 'SIGKILL');
    } catch {
      // gone
    }
  }
  // A holder (uid 65534) or a root provider's workspace the second provider did not end: this try's, by its directory.
  for (const pid of h.sessionHolders(`${dir}/root/`)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone
    }
  }
  unmountLeft(path.join(dir, 'root'));
  fs.rmSync(dir, { recursive: true, force: true });
  return { hit: result.hit, ownerUid, second, left };
}

for (const nobody of [false, true]) {
  const who = nobody ? 'a uid-65534 provider' : 'a root provider';
  test(`${who} SIGKILLed while bwrap has cloned but not released its namespace init leaves no process of the session behind once the next provider recovers, resumes and ends it (round 7b, R7b-3)`, { skip, timeout: 600_000 }, async () => {
    if (READ_SYSCALL === undefined) return; // only x86_64 and aarch64 syscall numbers are known here
    const kind = providerKind(nobody);
    const hits = [];
    let tries = 0;
    while (tries < MAX_TRIES && hits.length < WANTED_HITS) {
      tries += 1;
      const outcome = await oneTry(kind, nobody);
      if (!outcome.hit) continue;
      hits.push(outcome);
      assert.equal(outcome.second.status, 0, `the next provider recovered, resumed and ended the session: ${JSON.stringify(outcome.second)}`);
      assert.deepEqual(outcome.left, [], `no process of the session's owner uid ${outcome.ownerUid} is left after recover(), acquire() and end()`);
    }
    // The loop must have reached the state it is about: else it proved nothing.
    assert.ok(hits.length >= 1, `no try of ${tries} stopped bwrap between the clone of its init and its release`);
  });
}
