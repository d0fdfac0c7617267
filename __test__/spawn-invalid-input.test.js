'use strict';

// Every invalid command, option and policy is refused with its documented
// code (docs/errors.md) before anything is created on disk.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly, profile } = require('..');
const crypto = require('node:crypto');
const { fixture, ownControlRoots, controlRootBase } = require('./spawn-support');

// A private copy of /bin/true with unique trailing bytes: its content hash
// is ours alone, so a staged copy of it could only come from these tests.
const uniqueTrue = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-invalid-')), 'true');
fs.writeFileSync(uniqueTrue, Buffer.concat([fs.readFileSync('/bin/true'), crypto.randomBytes(32)]), { mode: 0o755 });
const uniqueSha = crypto.createHash('sha256').update(fs.readFileSync(uniqueTrue)).digest('hex');
test.after(() => fs.rmSync(path.dirname(uniqueTrue), { recursive: true, force: true }));

/** What cordon could have created for this process: control roots, a staged copy. */
function footprint() {
  const staged = path.join(controlRootBase(), 'exec', uniqueSha);
  return JSON.stringify({ roots: ownControlRoots(), staged: fs.existsSync(staged) });
}

function refuses(code, command, options) {
  const before = footprint();
  assert.throws(() => spawnIsolated(command, options), (error) => {
    assert.equal(error.name, 'CordonError');
    assert.equal(error.code, code, `${error.code}: ${error.message}`);
    return true;
  });
  assert.equal(footprint(), before, 'nothing was created on disk');
}

const policy = readOnly();
const missing = path.join(os.tmpdir(), 'cordon-no-such-file');
const notExecutable = path.join(__dirname, 'spawn-support.js');

test('invalid commands are ERR_CORDON_INVALID_COMMAND', () => {
  const cases = [
    undefined, null, 'ls', [], [42], ['/bin/true', 7], ['relative/path'], ['true'],
    ['/bin/../bin/true'], ['/bin//true'], [missing], [notExecutable], ['/tmp'], ['/bin/tr\u0000ue'],
    [uniqueTrue, 'a\u0000--bind'],
  ];
  for (const command of cases) refuses('ERR_CORDON_INVALID_COMMAND', command, { policy });
});

test('invalid options are ERR_CORDON_INVALID_OPTIONS', () => {
  const cmd = [uniqueTrue];
  const cases = [
    { policy, unknownOption: true },
    { policy, deadlineMs: 0 },
    { policy, deadlineMs: 1.5 },
    { policy, deadlineMs: 2 ** 31 },
    { policy, signal: {} },
    { policy, invocationId: '' },
    { policy, invocationId: 'has space' },
    { policy, invocationId: 'x'.repeat(129) },
    { policy, workspace: 'relative' },
    { policy, workspace: missing },
    { policy, workspace: notExecutable },
    { policy, env: { PATH: '/usr/bin' } },
    { policy, env: { '1BAD': 'x' } },
    { policy, env: ['PATH'] },
    { policy, env: { LANG: 42 } },
    { policy, launcherEnvironment: { 'A=B': 'x' } },
    { policy, launcherEnvironment: {} },
    { policy, launcherEnvironment: { LANG: 'C' } },
    { policy, stop: { graceMs: -1 } },
    { policy, stop: { graceMs: 600001 } },
    { policy, stop: { unknown: 1 } },
    { policy, bwrapPath: 'bwrap' },
    { policy: profile('untrusted'), workspace: os.tmpdir() },
    { policy, env: { get LANG() { return 'C'; } } },
    // A NUL would end the value at exec, or split bwrap's --args options.
    { policy: { ...policy, environment: { allow: ['LANG'] } }, env: { LANG: 'C\u0000--bind' } },
  ];
  for (const options of cases) refuses('ERR_CORDON_INVALID_OPTIONS', cmd, options);
  refuses('ERR_CORDON_INVALID_OPTIONS', cmd, null);
  // The launcher owns the option keys and names the unknown one; the command is not an option.
  assert.throws(() => spawnIsolated(cmd, { policy, unknownOption: true }), /options\.unknownOption: unknown key/);
  refuses('ERR_CORDON_INVALID_OPTIONS', cmd, { policy, command: cmd });
  // An option set to undefined is left out, as before.
  refuses('ERR_CORDON_INVALID_COMMAND', ['/nonexistent/x'], { policy, workspace: undefined, deadlineMs: undefined });
  refuses('ERR_CORDON_INVALID_OPTIONS', cmd, new (class Options { constructor() { this.policy = policy; } })());
});

test('invalid policies are ERR_CORDON_POLICY_INVALID', () => {
  const base = JSON.parse(JSON.stringify(readOnly()));
  const edit = (fn) => { const p = JSON.parse(JSON.stringify(base)); fn(p); return p; };
  const cases = [
    undefined,
    null,
    'readOnly',
    edit((p) => { p.formatVersion = 2; }),
    edit((p) => { p.extra = true; }),
    edit((p) => { p.filesystem.workspace = 'rw'; }),
    edit((p) => { p.filesystem.temp = 'read'; }),
    edit((p) => { p.filesystem.extra = [{ path: 'rel', access: 'read' }]; }),
    edit((p) => { p.filesystem.extra = [{ path: '/usr/lib', access: 'read' }]; }),
    edit((p) => { p.network.mode = 'host'; }),
    edit((p) => { delete p.network; }),
    edit((p) => { p.process.treeConfinement = 'optional'; }),
    edit((p) => { p.process.identity = 'provider'; }),
    edit((p) => { p.process.identity = true; }),
    edit((p) => { p.resources.memoryBytes = 0; }),
    edit((p) => { p.resources.memoryBytes = '1'; }),
    edit((p) => { p.environment.allow = ['bad name']; }),
    Object.create(base), // every key inherited, none own
    { ...base, filesystem: Object.create(base.filesystem) },
    { ...base, get network() { return { mode: 'none' }; } },
    { ...base, [Symbol('x')]: 1 },
    { ...base, resources: { memoryBytes: Infinity } },
    // An own "__proto__" key is an unknown key, not a prototype to drop.
    { ...base, filesystem: JSON.parse('{"workspace":"read","temp":"write","__proto__":{"x":1}}') },
  ];
  for (const bad of cases) refuses('ERR_CORDON_POLICY_INVALID', [uniqueTrue], { policy: bad });
  assert.throws(() => profile('no-such-profile'), { code: 'ERR_CORDON_POLICY_INVALID' });
});

test('a mediated network with a malformed destination is ERR_CORDON_POLICY_INVALID; without its relay ERR_CORDON_NETWORK_UNAVAILABLE (fail closed)', () => {
  for (const allow of [['API.example.com:443'], ['api.example.com'], [{ protocol: 'udp', host: 'a.example', port: 1 }]]) {
    refuses('ERR_CORDON_POLICY_INVALID', [uniqueTrue], { policy: { ...readOnly(), network: { mode: 'mediated', allow } } });
  }
  const mediated = { ...readOnly(), network: { mode: 'mediated', allow: ['api.example.com:443'] } };
  refuses('ERR_CORDON_NETWORK_UNAVAILABLE', [uniqueTrue], { policy: mediated, networkRelayPath: missing });
});

test('a starter (networkRelayPath) named for a run without mediated network must be an executable file: else ERR_CORDON_INVALID_OPTIONS, nothing created', () => {
  for (const relay of [missing, notExecutable]) {
    refuses('ERR_CORDON_INVALID_OPTIONS', [uniqueTrue], { policy, networkRelayPath: relay });
    assert.throws(() => spawnIsolated([uniqueTrue], { policy, networkRelayPath: relay }), /options\.networkRelayPath: the sandbox starter/);
  }
});

test('a missing or unusable bwrap is ERR_CORDON_BACKEND_UNAVAILABLE with a fix in the message', () => {
  refuses('ERR_CORDON_BACKEND_UNAVAILABLE', [uniqueTrue], { policy, bwrapPath: missing });
  refuses('ERR_CORDON_BACKEND_UNAVAILABLE', [uniqueTrue], { policy, bwrapPath: fixture('echo-fd3') });
  assert.throws(() => spawnIsolated([uniqueTrue], { policy, bwrapPath: missing }), /install Bubblewrap|bwrapPath/);
  // bwrap is probed as the sandbox identity, which may not reach the checkout
  // (a clone under /root): a world-readable copy keeps this about userns.
  const refusedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-fake-bwrap-'));
  fs.chmodSync(refusedDir, 0o755);
  const refused = path.join(refusedDir, 'bwrap');
  fs.copyFileSync(fixture('fake-bwrap-userns-refused'), refused);
  fs.chmodSync(refused, 0o755);
  test.after(() => fs.rmSync(refusedDir, { recursive: true, force: true }));
  refuses('ERR_CORDON_BACKEND_UNAVAILABLE', [uniqueTrue], { policy, bwrapPath: refused });
  assert.throws(
    () => spawnIsolated([uniqueTrue], { policy, bwrapPath: refused }),
    /non-privileged user namespaces.*unprivileged_userns_clone|max_user_namespaces/s,
  );
});

test('the unique executable itself launches, so the refusals above were about the input alone', async () => {
  const execution = spawnIsolated([uniqueTrue], { policy });
  execution.protocol.resume();
  execution.stderr.resume();
  assert.equal((await execution.wait()).returncode, 0);
});

test('presets are deeply frozen and independent', () => {
  const a = readOnly();
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.filesystem) && Object.isFrozen(a.resources));
  assert.throws(() => { 'use strict'; a.network.mode = 'mediated'; }, TypeError);
  assert.notEqual(readOnly(), a);
  assert.equal(profile('untrusted').filesystem.workspace, 'none');
  assert.equal(profile('workspace-write').filesystem.workspace, 'write');
});
