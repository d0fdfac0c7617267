'use strict';

// cordon/remote without a host: the wire codec, the fail-closed checks made
// before any connection, the presets' copy, and that the client never loads
// the native addon. Runs against a real host: remote-unix.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const frames = require('../lib/remote/frames');

const ROOT = path.join(__dirname, '..');

test('a frame is a u32 big-endian length, a type byte and the payload, and decodes across any split', () => {
  const wire = Buffer.concat([
    frames.encodeControl(frames.TYPE.welcome, { v: 1, tenant: 't' }),
    frames.encodeData(frames.TYPE.data, Buffer.from('abc')),
    frames.encodeEmpty(frames.TYPE.end),
    frames.encodeCredit(frames.STREAM.stderr, 70000),
  ]);
  assert.equal(wire.readUInt32BE(0), 1 + Buffer.byteLength('{"v":1,"tenant":"t"}'));
  assert.equal(wire[4], 0x02);
  for (const step of [1, 2, 3, 7, wire.length]) {
    const decoder = new frames.FrameDecoder();
    const out = [];
    for (let i = 0; i < wire.length; i += step) out.push(...decoder.push(wire.subarray(i, i + step)));
    assert.deepEqual(out.map((f) => f.name), ['welcome', 'data', 'end', 'credit']);
    assert.deepEqual(out[0].json, { v: 1, tenant: 't' });
    assert.equal(out[1].bytes.toString(), 'abc');
    assert.deepEqual([out[3].stream, out[3].credit], [1, 70000]);
  }
});

test('the decoder refuses a zero length, an unknown type, an oversize frame from its header, and non-object JSON', () => {
  const header = (length, type) => {
    const b = Buffer.alloc(5);
    b.writeUInt32BE(length, 0);
    b[4] = type;
    return b;
  };
  const refused = (bytes) => assert.throws(() => new frames.FrameDecoder().push(bytes), { code: 'ERR_CORDON_REMOTE_PROTOCOL' });
  refused(header(0, 0x10));
  refused(header(1, 0x7f));
  refused(header(frames.MAX_DATA_BYTES + 2, 0x10)); // a data frame one byte over, refused before its payload arrives
  refused(header(frames.MAX_CONTROL_BYTES + 2, 0x21));
  refused(Buffer.concat([header(3, 0x21), Buffer.from('[]')]));
  refused(Buffer.concat([header(2, 0x11), Buffer.from('x')])); // end carries nothing
  assert.throws(() => frames.encodeControl(frames.TYPE.upload, { data: 'x'.repeat(frames.MAX_CONTROL_BYTES) }), { code: 'ERR_CORDON_REMOTE_FRAME_TOO_LARGE' });
});

test('connectRemote fails closed: no socket or url, TLS without a CA or a client credential, plain TCP', () => {
  const { connectRemote } = require('../lib/remote');
  const missing = { code: 'ERR_CORDON_REMOTE_CREDENTIALS_MISSING' };
  assert.throws(() => connectRemote(), missing);
  assert.throws(() => connectRemote({}), missing);
  assert.throws(() => connectRemote({ token: 'abc' }), missing);
  assert.throws(() => connectRemote({ url: 'tls://127.0.0.1:7443' }), missing);
  assert.throws(() => connectRemote({ url: 'tls://127.0.0.1:7443', tls: { cert: 'c', key: 'k' } }), missing);
  assert.throws(() => connectRemote({ url: 'tls://127.0.0.1:7443', tls: { ca: 'ca' } }), missing);
  assert.throws(() => connectRemote({ url: 'tcp://127.0.0.1:7443', tls: { ca: 'ca' }, token: 't' }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /never plain TCP/ });
  assert.throws(() => connectRemote({ socket: 'relative.sock' }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.throws(() => connectRemote({ socket: '/tmp/x.sock' }, { slackMs: 0 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  // A TLS target with a CA and a token (no client certificate) is complete.
  assert.equal(typeof connectRemote({ url: 'tls://127.0.0.1:7443', tls: { ca: 'ca' }, token: 't' }).spawnIsolated, 'function');
});

test('options that name a host resource are refused before connecting, with ERR_CORDON_REMOTE_UNSUPPORTED', () => {
  const { connectRemote } = require('../lib/remote');
  // Nothing listens here: any connection attempt would surface as a wait() rejection, not a throw.
  const remote = connectRemote({ socket: '/nonexistent/cordon-host.sock' });
  const policy = remote.readOnly();
  const unsupported = { code: 'ERR_CORDON_REMOTE_UNSUPPORTED' };
  assert.throws(() => remote.spawnIsolated(['true'], { policy, workspace: '/tmp' }), unsupported);
  assert.throws(() => remote.spawnIsolated(['true'], { policy, bwrapPath: '/usr/bin/bwrap' }), unsupported);
  assert.throws(() => remote.spawnIsolated(['true'], { policy, networkRelayPath: '/x' }), unsupported);
  const extra = JSON.parse(JSON.stringify(policy));
  extra.filesystem.extra = [{ path: '/etc', access: 'read' }];
  assert.throws(() => remote.spawnIsolated(['true'], { policy: extra }), unsupported);
  assert.throws(() => remote.spawnIsolated(['true'], { policy, workspace: { files: { '../escape': 'x' } } }), unsupported);
  assert.throws(() => remote.spawnIsolated(['true'], { policy, workspace: { files: { '/abs': 'x' } } }), unsupported);
  assert.throws(() => remote.spawnIsolated(['/bin/true'], { policy }), { code: 'ERR_CORDON_INVALID_COMMAND', message: /program name/ });
  assert.throws(() => remote.spawnIsolated(['true'], { policy, nope: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.throws(() => remote.spawnIsolated(['true'], {}), { code: 'ERR_CORDON_POLICY_INVALID' });
  assert.throws(() => remote.createCodeMode({ tools: [], network: { allow: ['example.com:443'] } }), unsupported);
  assert.throws(() => remote.createCodeMode({ tools: [], runner: { path: '/usr/bin/cordon-runner' } }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /program name/ });
});

test('a host that cannot be reached rejects wait() with ERR_CORDON_REMOTE_UNREACHABLE, and stop() still settles', async () => {
  const { connectRemote } = require('../lib/remote');
  const remote = connectRemote({ socket: '/nonexistent/cordon-host.sock' });
  const execution = remote.spawnIsolated(['true'], { policy: remote.readOnly() });
  await assert.rejects(execution.wait(), { code: 'ERR_CORDON_REMOTE_UNREACHABLE' });
  assert.equal(await execution.stop(), undefined);
  assert.equal(execution.wait(), execution.wait());
});

test('the presets of cordon/remote are the launcher\'s, as the addon exports them', () => {
  const remote = require('../lib/remote').connectRemote({ socket: '/nonexistent.sock' });
  const native = new Map(JSON.parse(require('../binding.js').policyPresets()).map(({ name, policy }) => [name, policy]));
  assert.deepEqual([...native.keys()], ['read-only', 'workspace-write', 'untrusted']);
  assert.deepEqual(remote.readOnly(), native.get('read-only'));
  assert.deepEqual(remote.workspaceWrite(), native.get('workspace-write'));
  assert.deepEqual(remote.profile('untrusted'), native.get('untrusted'));
  assert.throws(() => remote.profile('nope'), { code: 'ERR_CORDON_POLICY_INVALID' });
});

test('require("cordon/remote") loads no native addon, no binding.js, no lib/native.js and no index.js', () => {
  const script = `
    const remote = require('cordon/remote');
    const client = remote.connectRemote({ socket: '/nonexistent.sock' });
    client.createCodeMode({ tools: [] });
    client.createPool; client.readOnly();
    const loaded = Object.keys(require.cache).filter((f) => !f.includes('node_modules'));
    process.stdout.write(JSON.stringify({ loaded, native: process.moduleLoadList?.filter((m) => m.endsWith('.node')) ?? [] }));`;
  // From the checkout, `cordon/remote` resolves by the package's own name (a self-reference, through its exports map).
  const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8'});
  assert.equal(run.status, 0, run.stderr);
  const { loaded } = JSON.parse(run.stdout);
  assert.ok(loaded.some((f) => f.endsWith(path.join('lib', 'remote', 'index.js'))), loaded.join('\n'));
  const forbidden = loaded.filter((f) => /\.node$/.test(f) || [path.join(ROOT, 'binding.js'), path.join(ROOT, 'index.js'), path.join(ROOT, 'lib', 'native.js')].includes(f));
  assert.deepEqual(forbidden, []);
});

test('a Code Mode run against a host that cannot be reached fails with the connection\'s code, not as a runner exit', async () => {
  const { connectRemote } = require('../lib/remote');
  const remote = connectRemote({ socket: '/nonexistent/cordon-host.sock' });
  const result = await remote.createCodeMode({ tools: [] }).run('return 1;');
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'sandbox');
  assert.equal(result.error.code, 'ERR_CORDON_REMOTE_UNREACHABLE');
});

test('off Linux the package installs and loads: a local sandbox is refused naming cordon/remote, and cordon/remote still works', () => {
  // npm refuses to install a package whose `os` excludes the platform, which
  // would keep `cordon/remote` off macOS and Windows.
  assert.equal(require('../package.json').os, undefined);
  // The platform is spoofed before anything loads: binding.js then looks for
  // a darwin addon, as it would on a Mac.
  const script = `
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    const cordon = require('cordon');
    let local;
    try { cordon.spawnIsolated(['/bin/true'], { policy: cordon.readOnly() }); } catch (error) { local = { code: error.code, message: error.message }; }
    const remote = require('cordon/remote').connectRemote({ socket: '/nonexistent.sock' });
    process.stdout.write(JSON.stringify({ local, preset: remote.readOnly().formatVersion }));`;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { local, preset } = JSON.parse(run.stdout);
  assert.equal(local.code, 'ERR_CORDON_BACKEND_UNAVAILABLE');
  assert.match(local.message, /Linux only \(this is darwin\).*cordon\/remote/);
  assert.equal(preset, 1);
});
