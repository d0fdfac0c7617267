'use strict';

// One sandbox run in a provider process of another uid (identity.test.js,
// quotas.test.js): the provider runs from the world-readable copy of the
// package (nobody-provider.js) under util-linux's setpriv, so it keeps a
// supplementary group (Node's own `uid` option drops every group), and
// prints the run's stderr, receipt and what it saw of its own quotas as
// JSON. A provider crash is then a test failure, not the test's death.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

const h = require('./harness');

const { nobodyProvider } = require('./nobody-provider');

/** nobody's first subordinate range (`first`, `count`) of `file`, or null. */
function range(file) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  for (const line of text.split('\n')) {
    const [who, first, count] = line.trim().split(':');
    if ((who === 'nobody' || who === String(h.NOBODY_UID)) && Number(count) >= 2) return { first: Number(first), count: Number(count) };
  }
  return null;
}

/** Why a uid-65534 provider with subordinate ids cannot be run here, or null. */
function nonRootSkipReason() {
  const base = h.skipReason();
  if (base) return base;
  if (process.geteuid() !== 0) return 'needs root to run providers as uid 65534';
  if (!fs.existsSync('/usr/bin/newuidmap')) return 'newuidmap is not installed (apt-get install uidmap; .ci/run does)';
  if (!fs.existsSync('/usr/bin/setpriv')) return 'setpriv (util-linux) is not installed';
  if (!range('/etc/subuid') || !range('/etc/subgid')) return 'uid 65534 has no /etc/subuid and /etc/subgid range (.ci/run adds one)';
  return null;
}

// The provider: one run of argv (or a refusal), as JSON. Once the sandbox
// prints HOLDING the provider touches one of its own quotas:
// `touch: 'epoll'` registers new descriptors with its event loop (a
// listening socket, a child's pipes): libuv's epoll_ctl(ADD) — which
// aborts the process on ENOSPC; `touch: {exec: [...args]}` runs the
// sandbox's program (argv[0]) outside any sandbox, as the provider, with
// those arguments, and keeps what follows its `TOUCH ` line.
function providerScript(pkg) {
  return `
const c = require(${JSON.stringify(pkg)});
const [argv, options] = JSON.parse(process.argv[1]);
const base = structuredClone(c[options.policy ?? 'readOnly']());
const withResources = { ...base, resources: { ...base.resources, ...options.resources } };
const withNetwork = options.allow ? { ...withResources, network: { mode: 'mediated', allow: options.allow } } : withResources;
const policy = options.identity ? { ...withNetwork, process: { ...base.process, identity: options.identity } } : withNetwork;
let ex = null;
try { ex = c.spawnIsolated(argv, { policy, workspace: options.workspace, networkRelayPath: options.relay }); }
catch (e) { process.stdout.write(JSON.stringify({ refused: e.code, message: e.message })); }
if (ex) {
  let text = '';
  let touched = null;
  ex.protocol.resume();
  ex.stderr.on('data', (d) => {
    text += d;
    if (options.touch && touched === null && text.includes('HOLDING')) {
      touched = new Promise((resolve) => {
        if (options.touch.exec) {
          const out = require('node:child_process').execFileSync(argv[0], options.touch.exec, { encoding: 'utf8' });
          resolve(/^TOUCH (.*)$/m.exec(out)?.[1] ?? out);
          return;
        }
        const server = require('node:net').createServer().listen(0, '127.0.0.1', () => {
          require('node:child_process').execFile('/bin/true', (err) => { server.close(); resolve(err ? String(err) : 'ok'); });
        });
      });
    }
  });
  ex.wait().then(async (r) => process.stdout.write(JSON.stringify({
    text, providerTouch: touched ? await touched : null, receipt: r.receipt })));
}
`;
}

/**
 * A supplementary group the provider runs with (100, "users" on Debian),
 * besides its own gid: a sandbox must carry neither.
 */
const PROVIDER_GROUP = 100;

/**
 * Runs one sandbox in a provider of `uid` (gid `uid`, supplementary groups
 * `uid` and PROVIDER_GROUP); its JSON, status and signal.
 */
function provider(uid, argv, options = {}, timeout = 120_000) {
  const { node, pkg } = nobodyProvider();
  const identity = ['--reuid', String(uid), '--regid', String(uid), '--groups', `${uid},${PROVIDER_GROUP}`, '--'];
  const run = spawnSync('/usr/bin/setpriv', [...identity, node, '-e', providerScript(pkg), JSON.stringify([argv, options])], {
    cwd: '/', encoding: 'utf8', timeout, env: { PATH: process.env.PATH },
  });
  let value = null;
  try { value = JSON.parse(run.stdout); } catch { /* the provider died: see status/signal */ }
  return { value, status: run.status, signal: run.signal, stderr: run.stderr };
}

module.exports = { nonRootSkipReason, provider, range, PROVIDER_GROUP };
