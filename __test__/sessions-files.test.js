'use strict';

// Host-side file tools beneath a session workspace: binary-safe, capped,
// atomic, and never following a link or opening a FIFO, socket or device
// the sandbox planted, even while the sandbox races a symlink swap
// (docs/sessions.md).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { sessionsSkipReason, managerFor, scope } = require('./sessions-support');

const skip = sessionsSkipReason();

test('writeFile and readFile round-trip binary data, owned by the session uid and usable by its commands', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('files'), 'u');
  const data = crypto.randomBytes(200_000);
  assert.deepEqual(await session.writeFile('blob.bin', data), { bytes: data.length });
  assert.ok((await session.readFile('blob.bin', { maxBytes: data.length })).equals(data));
  assert.equal(fs.statSync(`${session.workspace}/blob.bin`).uid, session.ownerUid);
  const sum = await session.exec({ shell: 'bash', script: 'sha256sum blob.bin | cut -d" " -f1; echo appended >> blob.bin && echo writable' });
  assert.equal(sum.stdout, `${crypto.createHash('sha256').update(data).digest('hex')}\nwritable\n`);
  await session.exec(['/bin/mkdir', '-p', 'a/b']);
  await session.writeFile('a/b/c.txt', 'deep');
  assert.equal((await session.readFile('./a/b/c.txt')).toString(), 'deep');
  assert.deepEqual((await session.list('a')).map((e) => [e.name, e.type]), [['b', 'directory']]);
  assert.deepEqual(await session.remove('a/b/c.txt'), { removed: 'file' });
  await assert.rejects(session.readFile('a/b/c.txt'), { code: 'ERR_CORDON_SESSION_FILE_NOT_FOUND' });
});

test('paths with .., absolute paths and NUL are refused with ERR_CORDON_SESSION_PATH_REFUSED before anything is opened', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('paths'), 'u');
  for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'a\0b', '', 'a/./b', 42]) {
    await assert.rejects(session.readFile(bad), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' }, String(bad));
    await assert.rejects(session.writeFile(bad, 'x'), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' }, String(bad));
  }
});

test('readFile past maxBytes is refused with ERR_CORDON_SESSION_FILE_TOO_LARGE', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('cap'), 'u');
  await session.exec({ shell: 'bash', script: 'head -c 5000 /dev/zero > five-k' });
  await assert.rejects(session.readFile('five-k', { maxBytes: 4999 }), { code: 'ERR_CORDON_SESSION_FILE_TOO_LARGE' });
  assert.equal((await session.readFile('five-k', { maxBytes: 5000 })).length, 5000);
});

test('the file tools reach what the session\'s commands locked away: a mode-000 file, a 000 directory, a 0500 directory (the provider\'s file permissions; the non-root helper keeps the same three, sessions-nonroot.test.js)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('locked'), 'u');
  await session.exec({ shell: 'bash', script: 'echo secret > f; chmod 000 f; mkdir d; echo in > d/g; chmod 000 d; mkdir ro; echo x > ro/h; chmod 500 ro' });
  const codeOf = (promise) => promise.then(() => null, (error) => error.code);
  const codes = {
    readMode000: await codeOf(session.readFile('f')),
    readIn000Dir: await codeOf(session.readFile('d/g')),
    list000Dir: await codeOf(session.list('d')),
    writeIn500Dir: await codeOf(session.writeFile('ro/new', 'x')),
    removeIn500Dir: await codeOf(session.remove('ro/h')),
    remove000Tree: await codeOf(session.remove('d', { recursive: true })),
  };
  assert.deepEqual(codes, { readMode000: null, readIn000Dir: null, list000Dir: null, writeIn500Dir: null, removeIn500Dir: null, remove000Tree: null });
  assert.equal(String(await session.readFile('f')), 'secret\n');
});

test('symlinks, FIFOs, sockets and hard links a sandbox plants never make the host tools leave the workspace or block', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('planted'), 'u');
  const hostSecret = fs.mkdtempSync('/tmp/cordon-host-secret-');
  fs.writeFileSync(`${hostSecret}/secret`, 'HOST SECRET');
  t.after(() => fs.rmSync(hostSecret, { recursive: true, force: true }));
  const planted = await session.exec({ shell: 'bash', script: [
    `ln -s ${hostSecret}/secret link`, `ln -s ${hostSecret} dirlink`, 'mkfifo fifo',
    'python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\'sock\')"',
    'echo inside > real; ln real hard', `ln /etc/hostname outside-hard 2>/dev/null || echo no-cross-link`,
    'mknod dev c 1 3 2>/dev/null || echo no-mknod',
  ].join('; ') });
  assert.match(planted.stdout, /no-cross-link/);
  assert.match(planted.stdout, /no-mknod/);
  await assert.rejects(session.readFile('link'), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' });
  await assert.rejects(session.readFile('dirlink/secret'), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' });
  await assert.rejects(session.writeFile('dirlink/secret', 'overwritten'), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' });
  await assert.rejects(session.readFile('fifo'), { code: 'ERR_CORDON_SESSION_FILE_TYPE_REFUSED' });
  await assert.rejects(session.readFile('sock'), { code: 'ERR_CORDON_SESSION_FILE_TYPE_REFUSED' });
  assert.equal((await session.readFile('hard')).toString(), 'inside\n', 'a hard link within the workspace is just a file');
  // Writing over a planted link replaces the link, never the host file it names.
  await session.writeFile('link', 'replaced');
  assert.equal(fs.readFileSync(`${hostSecret}/secret`, 'utf8'), 'HOST SECRET');
  assert.equal((await session.readFile('link')).toString(), 'replaced');
  const kinds = Object.fromEntries((await session.list('')).map((e) => [e.name, e.type]));
  assert.deepEqual([kinds.dirlink, kinds.fifo, kinds.sock, kinds.link], ['symlink', 'fifo', 'socket', 'file']);
  assert.deepEqual(await session.remove('dirlink'), { removed: 'symlink' });
  assert.ok(fs.existsSync(`${hostSecret}/secret`), 'removing a link never removes its target');
});

test('a sandbox racing a symlink swap against readFile never gets the host file read', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('race'), 'u');
  const hostSecret = fs.mkdtempSync('/tmp/cordon-host-secret-');
  fs.writeFileSync(`${hostSecret}/f`, 'HOST SECRET');
  t.after(() => fs.rmSync(hostSecret, { recursive: true, force: true }));
  await session.exec(['/bin/mkdir', 'd', 'real']);
  await session.exec({ shell: 'bash', script: 'echo inside > real/f' });
  // The swapper flips `d` between a real directory and a link to the host directory.
  const swapper = await session.start({ shell: 'bash', script: `ln -s ${hostSecret} evil; while :; do mv -T real d; mv -T d real; ln -sfn ${hostSecret} d; rm -f d; done` });
  let inside = 0;
  let refused = 0;
  for (let i = 0; i < 400; i += 1) {
    try {
      const got = (await session.readFile('d/f')).toString();
      assert.equal(got, 'inside\n');
      inside += 1;
    } catch (error) {
      assert.ok(['ERR_CORDON_SESSION_PATH_REFUSED', 'ERR_CORDON_SESSION_FILE_NOT_FOUND'].includes(error.code), `${error.code}: ${error.message}`);
      refused += 1;
    }
  }
  swapper.kill('SIGKILL');
  await swapper.wait();
  assert.equal(inside + refused, 400);
  assert.ok(refused > 0, 'the race was actually run: some reads met the link');
});

test('remove with recursive removes a planted tree (2000 levels, links to host directories, FIFOs, read-only directories) without following a link, and leaves the rest', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('remove-tree'), 'u');
  const host = fs.mkdtempSync('/tmp/cordon-host-tree-');
  fs.writeFileSync(`${host}/keep`, 'HOST');
  t.after(() => fs.rmSync(host, { recursive: true, force: true }));
  const plant = `import os\nos.mkdir('tree')\nos.chdir('tree')\nos.symlink(${JSON.stringify(host)}, 'to-host')\nos.symlink('/', 'to-root')\nos.mkfifo('fifo')\nfor _ in range(2000):\n  os.mkdir('d')\n  os.chdir('d')\nos.symlink(${JSON.stringify(host)}, 'deep-to-host')\nopen('leaf', 'w').write('x')\nos.chdir('..')\nos.chmod('d', 0o500)\nprint('planted')`;
  assert.equal((await session.exec(['/usr/bin/python3', '-c', plant])).stdout, 'planted\n');
  await session.writeFile('other.txt', 'stays');
  await session.exec(['/bin/ln', '-s', host, 'link-to-host-dir']);
  await assert.rejects(session.remove('tree'), (e) => e.code === 'ERR_CORDON_SESSION_DIRECTORY_NOT_EMPTY', 'without recursive a non-empty directory stays');
  await assert.rejects(session.remove('tree', { recursive: 'yes' }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.deepEqual(await session.remove('tree', { recursive: true }), { removed: 'directory' });
  assert.deepEqual(await session.remove('link-to-host-dir', { recursive: true }), { removed: 'symlink' }, 'a link is removed, never walked');
  assert.equal(fs.readFileSync(`${host}/keep`, 'utf8'), 'HOST', 'nothing behind a link was touched');
  assert.deepEqual((await session.list('')).map((e) => e.name), ['other.txt']);
});

test('a name that is not UTF-8, planted by a command, is listed by list() and removed with its tree, not hidden (round 7, R7-3 on the root path)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('bytes'), 'u');
  // printf's octal escapes: names of the bytes 0xff and 0xfe, not valid UTF-8.
  await session.exec({ shell: 'bash', script: 'mkdir -p d/e; : > "d/$(printf "\\377")"; : > "d/e/$(printf "\\376")"' });
  assert.deepEqual((await session.list('d')).map((e) => e.type).sort(), ['directory', 'file'], 'list shows the planted file too');
  assert.deepEqual(await session.remove('d', { recursive: true }), { removed: 'directory' });
  assert.deepEqual((await session.list('')).map((e) => e.name), []);
});

test('list() gives a name that is not valid UTF-8 as name null and its bytes in hex, never as the name of another file (round 9, R9-7)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('lossy'), 'u');
  // The bytes 0xff (not UTF-8) and ef bf bd (U+FFFD, which a lossy decoding makes of 0xff).
  await session.exec({ shell: 'bash', script: 'printf "file 0" > "$(printf "\\377")"; printf "file 1" > "$(printf "\\357\\277\\275")"' });
  const listed = await session.list('');
  assert.deepEqual(listed.map((e) => [e.name, e.nameHex, e.type, e.size]), [['\ufffd', undefined, 'file', 6], [null, 'ff', 'file', 6]]);
  assert.equal(String(await session.readFile('\ufffd')), 'file 1', 'the listed name reaches its own file');
  await assert.rejects(session.readFile(listed[1].name), (error) => typeof error.code === 'string');
  const viaBytes = await session.exec({ shell: 'bash', script: `cat "$(printf '${listed[1].nameHex.replace(/../g, '\\x$&')}')"` });
  assert.equal(viaBytes.stdout, 'file 0', 'the hex names the other file for a command');
  await session.remove('\ufffd');
  assert.deepEqual((await session.list('')).map((e) => e.nameHex), ['ff'], 'removing the listed name removed that file, not the other');
});

test('a path with a lone UTF-16 surrogate is refused with ERR_CORDON_SESSION_PATH_REFUSED by every file tool, never aliased to the file named U+FFFD (round 11, R11-7)', { skip }, async (t) => {
  const records = [];
  const { manager } = managerFor(t, { audit: (r) => records.push(r) });
  const session = await manager.acquire(scope('surrogate'), 'u');
  await session.exec({ shell: 'bash', script: 'printf "the U+FFFD file" > "$(printf "\\357\\277\\275")"' });
  assert.equal(String(await session.readFile('\ufffd')), 'the U+FFFD file', 'control: U+FFFD names that file');
  // What JSON.parse gives for a tool input {"path": "\ud800"}.
  const lone = JSON.parse('"\\ud800"');
  const lonePaths = [lone, `${lone}x`, `d/${lone}`, `\udc00`];
  for (const p of lonePaths) {
    await assert.rejects(session.readFile(p), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' }, JSON.stringify(p));
    await assert.rejects(session.writeFile(p, 'over'), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' }, JSON.stringify(p));
    await assert.rejects(session.list(p), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' }, JSON.stringify(p));
    await assert.rejects(session.remove(p), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' }, JSON.stringify(p));
  }
  await assert.rejects(session.exec(['/bin/true'], { cwd: lone }), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' });
  assert.deepEqual((await session.list('')).map((e) => e.name), ['\ufffd'], 'no "\\ufffdx" was created, the U+FFFD file was not removed');
  assert.equal(String(await session.readFile('\ufffd')), 'the U+FFFD file', 'nor overwritten');
  const refused = records.filter((r) => typeof r.path === 'string' && !r.path.isWellFormed());
  assert.equal(refused.length, lonePaths.length * 4);
  assert.ok(refused.every((r) => r.error === 'ERR_CORDON_SESSION_PATH_REFUSED'), 'each audit record says the path was refused');
});

test('a command that opens its workspace to everyone (chmod 777 /workspace) still shares nothing with another local user (round 7b, R7b-5)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('opened'), 'u');
  const done = await session.exec({ shell: 'bash', script: 'chmod 777 /workspace && echo from-sandbox > out.txt && chmod 666 out.txt && stat -c %a /workspace' });
  assert.equal(done.stdout, '777\n', 'the command did open its workspace root');
  // Another local user (uid 1, daemon) who knows the path (the mount table is world-readable).
  const other = (script) => spawnSync('setpriv', ['--reuid', '1', '--regid', '1', '--clear-groups', 'sh', '-c', script], { encoding: 'utf8', env: {} });
  const read = other(`cat '${session.workspace}/out.txt'`);
  assert.notEqual(read.status, 0, 'uid 1 could not read the sandbox\'s file');
  assert.match(read.stderr, /Permission denied/);
  const wrote = other(`echo from-local-user > '${session.workspace}/in.txt'`);
  assert.notEqual(wrote.status, 0, 'uid 1 could not write into the workspace');
  assert.equal((await session.exec({ shell: 'bash', script: 'ls' })).stdout, 'out.txt\n');
});
