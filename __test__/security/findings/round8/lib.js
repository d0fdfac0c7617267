'use strict';

// Round 8 harness: provider scripts as uid 65534 (a world-readable copy of the package, as
// __test__/security/nobody-provider.js makes it) or as root, in scratch directories
// /var/tmp/atk8w-* that this process creates and removes. Adapted from round7b/lib.js.

const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { FILE_STORE_SCRIPT } = require('../../file-store-script');

const ROOT = path.join(__dirname, '..', '..', '..', '..');
const NOBODY = 65534;
const made = [];
process.on('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

let prepared = null;
function prepare() {
  if (prepared) return prepared;
  const scratch = fs.mkdtempSync('/var/tmp/atk8w-pkg-');
  made.push(scratch);
  fs.chmodSync(scratch, 0o755);
  const { node, pkg } = require(path.join(ROOT, '__test__/security/nobody-provider')).nobodyProvider({ scratch });
  const built = path.join(require(path.join(ROOT, 'lib/platform-package')).cargoTargetDir(), 'release', 'cordon-exec-agent');
  const agent = path.join(scratch, 'cordon-exec-agent');
  fs.copyFileSync(built, agent);
  fs.chmodSync(agent, 0o755);
  prepared = { node, pkg, agent };
  return prepared;
}

/** A scratch dir for one provider (its root + store), 0711, owned by the provider uid; removed at exit. */
function scratch(asNobody = true) {
  const dir = fs.mkdtempSync('/var/tmp/atk8w-s-');
  made.push(dir);
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
    const sh = (s, script, o = {}) => s.exec({ shell: 'bash', script }, { timeoutMs: 20000, ...o });
    const until = async (file) => { while (!fs.existsSync(file)) await new Promise((r) => setTimeout(r, 100)); };
    (async () => { ${body} })().catch((e) => { out({ failed: String(e.stack ?? e), code: e.code, message: e.message }); process.exitCode = 3; });`;
}

function providerProcess(dir, body, options) {
  const asNobody = options.asNobody ?? true;
  const p = prepare();
  const node = asNobody ? p.node : process.execPath;
  const pkg = asNobody ? p.pkg : ROOT;
  const identity = asNobody ? { uid: NOBODY, gid: NOBODY } : {};
  const args = ['-e', `const cordon = require(${JSON.stringify(pkg)});\n${script(dir, body, { ...options, agent: asNobody ? p.agent : undefined })}`];
  return { node, args, identity };
}

const parse = (text) => (text || '').split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return l; } });

/** Runs body as a provider (sync). */
function run(dir, body, options = {}) {
  const { node, args, identity } = providerProcess(dir, body, options);
  const r = spawnSync(node, args, { cwd: '/', encoding: 'utf8', timeout: options.timeoutMs ?? 120_000, env: { PATH: process.env.PATH }, ...identity });
  return { status: r.status, signal: r.signal, stderr: r.stderr, lines: parse(r.stdout) };
}

/** Starts body as a provider (async child); `lines` fills as it prints. */
function start(dir, body, options = {}) {
  const { node, args, identity } = providerProcess(dir, body, options);
  const child = spawn(node, args, { cwd: '/', env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'], ...identity });
  child.lines = [];
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    buf += c;
    const parts = buf.split('\n');
    buf = parts.pop();
    child.lines.push(...parse(parts.join('\n')));
  });
  child.stderr.setEncoding('utf8').on('data', (c) => { child.stderrText = (child.stderrText ?? '') + c; });
  child.done = new Promise((r) => child.once('exit', r));
  return child;
}

/** Waits until `pred()` is truthy (bounded). */
async function until(pred, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = pred();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Pids whose cmdline contains tag (this process excluded). */
function withTag(tag) {
  return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(tag); } catch { return false; }
  }).filter((p) => Number(p) !== process.pid).map(Number);
}

/** Kills (SIGKILL) the processes whose cmdline names `tag` (one of our scratch dirs): our own leftovers only. */
function killTagged(tag) {
  if (!tag.startsWith('/var/tmp/atk8w-')) throw new Error('not our scratch');
  for (const pid of withTag(tag)) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

module.exports = { prepare, scratch, run, start, until, withTag, killTagged, NOBODY, ROOT };
