'use strict';

// deploy/k8s's pod security, tried on this machine without a cluster: a
// provider in the pod's shape — uid 65534 (the pod runs 65532; both are
// non-root providers with subordinate ids, docs/security.md), no effective
// capabilities, SETUID and SETGID left only in the bounding set, privilege
// escalation allowed, and the image's newuidmap/newgidmap carrying file
// capabilities (cap_setuid / cap_setgid, bound over /usr/bin in a private
// mount namespace) — runs real sandboxes under
// deploy/k8s/seccomp/cordon-host.json, applied the way a container runtime
// applies a `Localhost` profile (fixtures/exec-under-oci-seccomp.py,
// libseccomp): from a Node provider, and from `cordon host` itself serving a
// cordon/remote client (a sandbox, and a Code Mode run). Then each thing the pod adds is taken away in turn and the
// launch must fail: every non-default syscall and both capabilities are
// needed, so the profile and the Deployment grant nothing bwrap does not use.
// Not simulated here: the pod user namespace (hostUsers: false), procMount
// Unmasked, the read-only root and AppArmor (deploy/k8s/README.md).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { cargoTargetDir } = require('../lib/platform-package');
const { connectRemote } = require('../lib/remote');
const { nonRootSkipReason } = require('./security/provider-process');
const { nobodyProvider } = require('./security/nobody-provider');

const { PROFILE, nonDefaultSyscalls } = require('./deploy-k8s-support');
const { terminate } = require('./remote-support');
const LOADER = path.join(__dirname, 'fixtures', 'exec-under-oci-seccomp.py');
const SYSTEM_PYTHON = '/usr/bin/python3';
const SETCAP = '/usr/sbin/setcap';
const NOBODY_UID = 65534;
/**
 * The syscalls the profile adds to a runtime's default for a capability-less
 * container, each with the step that fails without it (as reported).
 */
const NON_DEFAULT = {
  clone: /bwrap: No permissions to create new namespace/,
  unshare: /bwrap: unshare user ns: Operation not permitted/,
  setns: /exec \/usr\/bin\/bwrap: Operation not permitted/,
  mount: /bwrap: Failed to make \/ slave: Operation not permitted/,
  umount2: /bwrap: unmount old root: Operation not permitted/,
  pivot_root: /bwrap: pivot_root: Operation not permitted/,
  sethostname: /bwrap: Can't set hostname to cordon: Operation not permitted/,
};
/** x86_64 numbers of syscalls every profile denies (bpf, keyctl), and EPERM. */
const SYS_BPF = 321;
const SYS_KEYCTL = 250;
const EPERM = 1;

function skipReason() {
  const base = nonRootSkipReason();
  if (base) return base;
  if (process.arch !== 'x64') return 'the denied-syscall probe uses x86_64 syscall numbers';
  const seccomp = spawnSync(SYSTEM_PYTHON, ['-c', 'import seccomp'], { encoding: 'utf8' });
  if (seccomp.status !== 0) return 'python3-seccomp is not installed (scripts/host-deps.sh installs it)';
  if (!fs.existsSync(SETCAP)) return 'setcap is not installed (libcap2-bin; scripts/host-deps.sh installs it)';
  return false;
}
// Under CI a skip is a failure: the tests run and fail on what is missing.
const option = { skip: process.env.CI ? false : skipReason() };

/** The provider: one spawnIsolated run of `/usr/bin/id -u`, printed as JSON. */
function providerScript(pkg) {
  return `
const c = require(${JSON.stringify(pkg)});
let ex;
try { ex = c.spawnIsolated(['/usr/bin/id', '-u'], { policy: c.readOnly() }); }
catch (e) { process.stdout.write(JSON.stringify({ refused: e.code, message: e.message })); process.exit(0); }
let out = '';
ex.protocol.resume();
ex.stderr.on('data', (d) => { out += d; });
ex.wait().then((r) => process.stdout.write(JSON.stringify({ returncode: r.returncode, out })),
  (e) => process.stdout.write(JSON.stringify({ failed: e.code, message: e.message })));
`;
}

/**
 * A copy of the profile whose unconditional rules no longer allow `names`
 * (clone keeps its default rule: without namespace flags).
 */
function profileWithout(scratch, names) {
  const profile = JSON.parse(fs.readFileSync(PROFILE, 'utf8'));
  for (const rule of profile.syscalls.filter((r) => !r.args)) rule.names = rule.names.filter((n) => !names.includes(n));
  profile.syscalls = profile.syscalls.filter((rule) => rule.names.length > 0);
  const file = path.join(scratch, `profile-without-${names.join('-')}.json`);
  fs.writeFileSync(file, JSON.stringify(profile));
  fs.chmodSync(file, 0o644);
  return file;
}

let helpers = null;
/**
 * newuidmap/newgidmap as the image ships them (deploy/k8s/README.md): copies
 * of the system's with file capabilities instead of the set-uid bit. Made
 * once, in a 0755 directory uid 65534 can reach, removed at exit.
 */
function fileCapabilityHelpers() {
  if (helpers) return helpers;
  const dir = fs.mkdtempSync(path.join('/dev/shm', 'cordon-k8s-idmap-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chmodSync(dir, 0o755);
  for (const [name, cap] of [['newuidmap', 'cap_setuid=ep'], ['newgidmap', 'cap_setgid=ep']]) {
    fs.copyFileSync(`/usr/bin/${name}`, path.join(dir, name));
    fs.chmodSync(path.join(dir, name), 0o755);
    const setcap = spawnSync(SETCAP, [cap, path.join(dir, name)], { encoding: 'utf8' });
    assert.equal(setcap.status, 0, `setcap ${cap} ${name}: ${setcap.stderr}`);
  }
  helpers = dir;
  return helpers;
}

/**
 * The command that runs argv as the pod's provider would run: under
 * `profile`, as uid 65534 with bounding set `bounding`, with `idmap`
 * newuidmap/newgidmap: 'file-caps' (the image's) or 'setuid' (this
 * machine's, Debian's). Every step execs the next: argv keeps the pid.
 */
function podCommand(argv, { profile = PROFILE, bounding = '-all,+setuid,+setgid', idmap = 'file-caps' } = {}) {
  const setpriv = ['/usr/bin/setpriv', `--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups',
    `--bounding-set=${bounding}`, '--inh-caps=-all', '--'];
  const confined = [SYSTEM_PYTHON, LOADER, profile, '--', ...setpriv, ...argv];
  if (idmap !== 'file-caps') return confined;
  const bind = 'mount --bind "$1/newuidmap" /usr/bin/newuidmap && mount --bind "$1/newgidmap" /usr/bin/newgidmap && shift && exec "$@"';
  return ['/usr/bin/unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c', bind, 'sh', fileCapabilityHelpers(), ...confined];
}

const POD_ENV = { PATH: '/usr/bin:/bin', HOME: '/' };

function inPod(argv, options) {
  const command = podCommand(argv, options);
  const result = spawnSync(command[0], command.slice(1), { cwd: '/', encoding: 'utf8', timeout: 60_000, env: POD_ENV });
  assert.equal(result.error, undefined);
  return result;
}

/** One sandbox run by the pod-shaped provider: its JSON answer. */
function runSandbox(options) {
  const { node, pkg } = nobodyProvider();
  const result = inPod([node, '-e', providerScript(pkg)], options);
  assert.equal(result.status, 0, `provider exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

function scratchDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-k8s-pod-'));
  fs.chmodSync(dir, 0o755);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('the profile is applied: a syscall it does not list is EPERM for the pod\'s processes', option, () => {
  const probe = `import ctypes; libc = ctypes.CDLL(None, use_errno=True)
for nr in (${SYS_BPF}, ${SYS_KEYCTL}):
    r = libc.syscall(nr, 0, 0, 0); print(r, ctypes.get_errno())`;
  const confined = inPod([SYSTEM_PYTHON, '-c', probe]);
  assert.equal(confined.status, 0, confined.stderr);
  assert.deepEqual(confined.stdout.trim().split('\n'), [`-1 ${EPERM}`, `-1 ${EPERM}`]);
  // Control: the same calls without the profile fail for other reasons (bad arguments), not EPERM.
  const free = spawnSync('/usr/bin/setpriv', [`--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups', '--',
    SYSTEM_PYTHON, '-c', probe], { encoding: 'utf8' });
  assert.notDeepEqual(free.stdout.trim().split('\n'), [`-1 ${EPERM}`, `-1 ${EPERM}`], free.stdout);
});

test('a non-root provider shaped like the pod starts a sandbox under the cordon-host seccomp profile', option, () => {
  const run = runSandbox();
  assert.equal(run.returncode, 0, JSON.stringify(run));
  const uid = Number(run.out.trim());
  assert.ok(Number.isInteger(uid) && uid !== 0 && uid !== NOBODY_UID, `the sandbox runs as a subordinate id, not ${run.out}`);
});

/**
 * `cordon host` as the container runs it (deploy/k8s/deployment.yaml), on a
 * Unix socket the test (uid 0, in allowUids) reaches; stopped by `t.after`.
 */
async function podHost(t) {
  const dir = scratchDir(t);
  for (const name of ['cordon', 'cordon-runner']) {
    fs.copyFileSync(path.join(cargoTargetDir(), 'release', name), path.join(dir, name));
    fs.chmodSync(path.join(dir, name), 0o755);
  }
  const cordon = path.join(dir, 'cordon');
  for (const sub of ['run', 'state']) {
    fs.mkdirSync(path.join(dir, sub), { mode: 0o700 });
    fs.chownSync(path.join(dir, sub), NOBODY_UID, NOBODY_UID);
  }
  const socket = path.join(dir, 'run', 'host.sock');
  const config = path.join(dir, 'host.json');
  fs.writeFileSync(config, JSON.stringify({
    listen: { unix: socket }, stateDir: path.join(dir, 'state'), allowUids: [0], hostId: 'pod', programs: { id: '/usr/bin/id', 'cordon-runner': path.join(dir, 'cordon-runner') },
  }));
  fs.chmodSync(config, 0o644);
  const command = podCommand([cordon, 'host', '--config', config]);
  const child = spawn(command[0], command.slice(1), { cwd: '/', env: POD_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => { output += chunk; });
  t.after(() => terminate(child));
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(socket)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`cordon host did not start in the pod's shape: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { socket, output: () => output };
}

test('cordon host itself, run as the pod runs it, serves a sandbox to a remote client', option, async (t) => {
  const host = await podHost(t);
  const client = connectRemote({ socket: host.socket });
  t.after(() => client.close());
  const execution = client.spawnIsolated(['id', '-u'], { policy: client.readOnly() });
  let out = '';
  execution.stderr.on('data', (chunk) => { out += chunk; });
  execution.protocol.resume();
  const result = await execution.wait();
  assert.equal(result.returncode, 0, `${out} ${host.output()}`);
  assert.equal(execution.remote.host.id, 'pod');
  const uid = Number(out.trim());
  assert.ok(Number.isInteger(uid) && uid !== 0 && uid !== NOBODY_UID, `the sandbox runs as a subordinate id of the host, not ${out}`);
});

test('Code Mode runs through cordon host in the pod\'s shape: the runner under the profile, the tool call in the provider', option, async (t) => {
  const host = await podHost(t);
  const client = connectRemote({ socket: host.socket });
  t.after(() => client.close());
  const calls = [];
  const codeMode = client.createCodeMode({
    tools: [{
      name: 'add', description: 'adds two numbers', effect: 'read',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      handler: async ({ a, b }) => { calls.push([a, b]); return a + b; },
    }],
  });
  const run = await codeMode.run('return await tools.add({ a: 2, b: 3 });', { mode: 'inspect' });
  assert.equal(run.ok, true, `${JSON.stringify(run.error)} ${host.output()}`);
  assert.equal(run.result, 5);
  assert.deepEqual(calls, [[2, 3]]);
});

for (const [missing, bounding] of [['SETUID', '-all,+setgid'], ['SETGID', '-all,+setuid']]) {
  test(`without ${missing} in the bounding set the pod's provider cannot map a sandbox identity`, option, () => {
    const run = runSandbox({ bounding });
    assert.equal(run.refused, 'ERR_CORDON_IDENTITY_UNAVAILABLE', JSON.stringify(run));
  });
}

test('a set-uid newuidmap (Debian\'s) would need more than SETUID and SETGID: the image ships file capabilities', option, () => {
  const run = runSandbox({ idmap: 'setuid' });
  assert.equal(run.refused, 'ERR_CORDON_IDENTITY_UNAVAILABLE', JSON.stringify(run));
  assert.match(run.message, /newuidmap.*uid_map.*(Permission denied|Operation not permitted)/);
  // Measured: it opens and writes the uid_map as euid 0 of the pod, so it needs DAC_OVERRIDE and SYS_ADMIN too.
  const widened = runSandbox({ idmap: 'setuid', bounding: '-all,+setuid,+setgid,+dac_override,+sys_admin' });
  assert.equal(widened.returncode, 0, JSON.stringify(widened));
});

for (const [name, failure] of Object.entries(NON_DEFAULT)) {
  const what = name === 'clone' ? 'clone with namespace flags' : name;
  test(`without ${what} in the seccomp profile no sandbox starts (the profile adds nothing bwrap does not use)`, option, (t) => {
    const run = runSandbox({ profile: profileWithout(scratchDir(t), [name]) });
    assert.equal(run.returncode, undefined, `a sandbox ran without ${name}: ${JSON.stringify(run)}`);
    assert.match(run.message, failure);
  });
}

test('the syscalls this test takes away are exactly the profile\'s unconditional additions to the default', () => {
  assert.deepEqual(Object.keys(NON_DEFAULT).sort(), nonDefaultSyscalls().sort());
});

