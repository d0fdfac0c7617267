'use strict';

// Black-box harness for round 7b: runs a provider script as uid 65534 (a
// world-readable copy of the package, as __test__/security/nobody-provider.js
// makes it) or as root. Public API only.

const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FILE_STORE_SCRIPT } = require('../../file-store-script');

const ROOT = path.join(__dirname, '..', '..', '..', '..');
const NOBODY = 65534;

let prepared = null;
function prepare() {
  if (prepared) return prepared;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'atk21b-pkg-'));
  process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
  const { node, pkg } = require(path.join(ROOT, '__test__/security/nobody-provider')).nobodyProvider({ scratch });
  const built = path.join(require(path.join(ROOT, 'lib/platform-package')).cargoTargetDir(), 'release', 'cordon-exec-agent');
  const agent = path.join(scratch, 'cordon-exec-agent');
  fs.copyFileSync(built, agent);
  fs.chmodSync(agent, 0o755);
  prepared = { node, pkg, agent };
  return prepared;
}

/** A scratch dir for the provider (its root + store), 0711, owned by the provider uid. */
function scratch(asNobody = true) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atk21b-s-'));
  if (asNobody) fs.chownSync(dir, NOBODY, NOBODY);
  fs.chmodSync(dir, 0o711);
  return dir;
}

function script(dir, body, { idleTimeoutMs = 600_000, workspaceBytes = 1 << 20, agent, extra = '' } = {}) {
  return `
    const fs = require('node:fs');
    const dir = ${JSON.stringify(dir)};
    const secret = Buffer.from('0123456789abcdef0123456789abcdef');
    ${FILE_STORE_SCRIPT}
    const m = cordon.createSessionManager({ secret, root: dir + '/root', store, authorize: () => true,
      idleTimeoutMs: ${idleTimeoutMs}, workspaceBytes: ${workspaceBytes}, agentPath: ${JSON.stringify(agent)} ${extra} });
    const scope = (c) => ({ tenant: 'acme', conversation: c });
    const actor = { tenant: 'acme', id: 'u' };
    const out = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
    const codeOf = (p) => p.then(() => null, (e) => e.code + ': ' + e.message);
    const sh = (s, script, o = {}) => s.exec({ shell: 'bash', script }, { timeoutMs: 20000, ...o });
    (async () => { ${body} })().catch((e) => { out({ failed: String(e.stack ?? e), code: e.code }); process.exitCode = 3; });`;
}

/** The node binary, its arguments and the uid/gid options that run body as a provider. */
function providerProcess(dir, body, options) {
  const asNobody = options.asNobody ?? true;
  const p = prepare();
  const node = asNobody ? p.node : process.execPath;
  const pkg = asNobody ? p.pkg : ROOT;
  const identity = asNobody ? { uid: NOBODY, gid: NOBODY } : {};
  const args = ['-e', `const cordon = require(${JSON.stringify(pkg)});\n${script(dir, body, { ...options, agent: asNobody ? p.agent : undefined })}`];
  return { node, args, identity };
}

/** Runs body as a provider (sync). Returns {status, signal, stdout, stderr, lines}. */
function run(dir, body, options = {}) {
  const { node, args, identity } = providerProcess(dir, body, options);
  const r = spawnSync(node, args,
    { cwd: '/', encoding: 'utf8', timeout: options.timeoutMs ?? 120_000, env: { PATH: process.env.PATH }, ...identity });
  const lines = (r.stdout || '').split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return l; } });
  return { status: r.status, signal: r.signal, stderr: r.stderr, lines, pid: r.pid };
}

/** Starts body as a provider (async child). */
function start(dir, body, options = {}) {
  const { node, args, identity } = providerProcess(dir, body, options);
  return spawn(node, args, { cwd: '/', env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'], ...identity });
}

// The two halves of a kill during acquire() (R7b-3): a provider that marks
// `<dir>/go` as it calls acquire() of session c1 and never ends (it is to be
// SIGKILLed mid-acquire), then a fresh one that recover()s and acquire()s +
// end()s the same session, printing { rec, origin } (an acquire error first).
const ACQUIRE_AND_HANG = `fs.writeFileSync(dir + '/go', '1'); const s = await m.acquire(scope('c1'), actor); out({ acquired: true }); await new Promise(() => {});`;
const RECOVER_AND_REACQUIRE = `
  const rec = await m.recover().then((x) => x, (e) => e.code + ' ' + e.message);
  const s = await m.acquire(scope('c1'), actor).catch((e) => { out({ acquire: e.code + ' ' + e.message }); return null; });
  const origin = s?.origin;
  if (s) await s.end();
  out({ rec, origin });`;

/** Pids whose cmdline contains tag. */
function withTag(tag) {
  return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(tag); } catch { return false; }
  }).filter((p) => Number(p) !== process.pid);
}

/** Processes of a uid (real) range. */
function procsOfUids(lo, hi) {
  const res = [];
  for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const st = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      const uid = Number(/Uid:\s+(\d+)/.exec(st)[1]);
      if (uid >= lo && uid <= hi) res.push({ pid: p, uid, cmd: fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120) });
    } catch { /* gone */ }
  }
  return res;
}

module.exports = { prepare, scratch, run, start, withTag, procsOfUids, NOBODY, ROOT, ACQUIRE_AND_HANG, RECOVER_AND_REACQUIRE };
module.exports.cmdline = (pid) => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 80); } catch { return '(gone)'; } };
