'use strict';

// Black-box round 5 against sessions (issue 21;
// __test__/security/findings/round5/README.md), each attack replayed in a
// real session sandbox: the agent taken over through /proc/<agent>/mem
// (R5-1), the sessions root swapped for a link and raced (R5-2), concurrent
// acquires past the tenant bound (R5-3), acquire during end() (R5-4), and a
// secret kept past its first '/' by the audit (R5-5); list() past its cap
// and remove() of a non-empty directory.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const { createSessionManager } = require('..');
const { sessionsSkipReason, managerFor, mountedAt, scope } = require('./sessions-support');

const skip = sessionsSkipReason();
const FINDINGS = path.join(__dirname, 'security', 'findings', 'round5');
/** A host uid that owns nothing else here: the local user of R5-2. */
const LOCAL_USER = 61235;

/** A round-5 attacker compiled static (the sandbox has no loader), in a dir removed after the test. */
function compile(t, source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-attacker-'));
  fs.chmodSync(dir, 0o755);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const out = path.join(dir, path.basename(source, '.c'));
  execFileSync('cc', ['-static', '-O1', '-o', out, path.join(FINDINGS, source)]);
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('a command cannot write over the exec agent through /proc/<agent>/mem: later commands really run and /bin/false still exits 1', { skip, timeout: 120_000 }, async (t) => {
  const attacker = compile(t, 'agent-hijack.c');
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('hijack'), 'mallory');
  await session.writeFile('agent-hijack', fs.readFileSync(attacker));
  const launched = await session.exec({ shell: 'bash', script: 'chmod +x agent-hijack && ./agent-hijack' });
  assert.equal(launched.exitCode, 0, launched.stderr);
  // It forks, waits 1 s, then logs how far it got: an error, or what it wrote.
  let log = '';
  for (let i = 0; i < 100 && !/open mem:|wrote |syscall: \D/.test(log); i += 1) {
    await sleep(100);
    log = await session.readFile('hijack.log').then(String, () => '');
  }
  assert.match(log, /agent pid [1-9]/, 'the attacker found the agent');
  assert.doesNotMatch(log, /INJECTED/, `the agent's memory was written: ${log}`);
  assert.match(log, /(syscall|open mem): Permission denied/, log);
  const no = await session.exec(['/bin/false'], { timeoutMs: 10_000 });
  assert.deepEqual([no.exitCode, no.stdout], [1, '']);
  const real = await session.exec({ shell: 'bash', script: 'echo REAL > proof.txt' }, { timeoutMs: 10_000 });
  assert.equal(real.exitCode, 0);
  assert.equal(String(await session.readFile('proof.txt')), 'REAL\n');
});

/** A root-owned 0755 top dir with a parent inside it (owned by `parentUid`) and a victim directory. */
function swapLayout(t, parentUid) {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-root-'));
  fs.chmodSync(top, 0o755);
  const parent = path.join(top, 'parent');
  fs.mkdirSync(parent, { mode: 0o755 });
  fs.chownSync(parent, parentUid, parentUid);
  const victim = path.join(top, 'victim');
  fs.mkdirSync(victim, { mode: 0o755 });
  fs.writeFileSync(path.join(victim, 'precious'), 'host data');
  const mountsUnder = () => fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4]).filter((m) => m?.startsWith(top));
  t.after(() => {
    for (const m of mountsUnder().reverse()) spawnSync('/usr/bin/umount', ['-l', m]);
    fs.rmSync(top, { recursive: true, force: true });
  });
  return { top, parent, victim, root: path.join(parent, 'sessions'), mountsUnder };
}

test('a sessions root below a directory another local user owns is refused before anything is created', { skip }, (t) => {
  const { root } = swapLayout(t, LOCAL_USER);
  assert.throws(
    () => createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true }),
    { code: 'ERR_CORDON_INVALID_OPTIONS', message: new RegExp(`ancestor .*parent is owned by uid ${LOCAL_USER}`) },
  );
});

test('a sessions root swapped for a link after creation, and every new workspace raced for a link to a victim, gets no tmpfs mounted anywhere but the held root', { skip, timeout: 120_000 }, async (t) => {
  const racer = compile(t, 'swap-race.c');
  fs.chmodSync(racer, 0o755);
  fs.chmodSync(path.dirname(racer), 0o755);
  // The parent is root's when the manager checks it, then handed to the local user (the precondition of R5-2).
  const { parent, victim, root, mountsUnder } = swapLayout(t, 0);
  const manager = createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true, maxSessionsPerTenant: 100 });
  t.after(() => manager.endAll());
  fs.chownSync(parent, LOCAL_USER, LOCAL_USER);
  const theirs = path.join(parent, 'theirs');
  const swap = spawnSync('/bin/sh', ['-c', `mkdir -m 0777 ${theirs} && mv ${root} ${parent}/old && ln -s ${theirs} ${root}`], { uid: LOCAL_USER, gid: LOCAL_USER });
  assert.equal(swap.status, 0, String(swap.stderr));
  const race = spawn(racer, [theirs, victim], { uid: LOCAL_USER, gid: LOCAL_USER, stdio: 'ignore' });
  t.after(() => race.kill('SIGKILL'));
  const outcomes = [];
  for (let i = 0; i < 10; i += 1) {
    outcomes.push(await manager.acquire(scope(`race-${i}`), 'a').then(async (s) => { await s.end(); return 'acquired'; }, (e) => e.code));
  }
  assert.deepEqual([...new Set(outcomes)], ['ERR_CORDON_SESSION_ROOT_CHANGED']);
  assert.deepEqual(mountsUnder(), [], 'no session tmpfs was mounted (or left) anywhere');
  assert.deepEqual(fs.readdirSync(theirs).filter((n) => !n.startsWith('.')), [], 'nothing was made through the link');
  assert.equal(fs.readFileSync(path.join(victim, 'precious'), 'utf8'), 'host data');
});

test('concurrent acquires of one tenant cannot pass maxSessionsPerTenant, and the budget is asked only for admitted ones', { skip, timeout: 120_000 }, async (t) => {
  let budgetCalls = 0;
  const { manager } = managerFor(t, { maxSessionsPerTenant: 2, budget: () => { budgetCalls += 1; return true; } });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => manager.acquire(scope(`c${i}`), 'a').then((s) => s, (e) => e.code)));
  const live = results.filter((r) => typeof r !== 'string');
  assert.equal(live.length, 2);
  assert.deepEqual(results.filter((r) => typeof r === 'string'), Array(8).fill('ERR_CORDON_SESSION_LIMIT'));
  assert.equal(budgetCalls, 2, 'a refusal by the bound charges nothing');
  assert.equal(manager.size, 2);
  await live[0].end();
  await manager.acquire(scope('after-end'), 'a');
  assert.equal(manager.size, 2, 'an ended session gives its slot back');
});

test('a budget refusal gives the tenant slot back', { skip, timeout: 60_000 }, async (t) => {
  let refuse = true;
  const { manager } = managerFor(t, { maxSessionsPerTenant: 1, budget: () => !refuse });
  await assert.rejects(manager.acquire(scope('first'), 'a'), { code: 'ERR_CORDON_SESSION_BUDGET' });
  refuse = false;
  await manager.acquire(scope('second'), 'a');
  assert.equal(manager.size, 1);
});

test('an acquire during end() waits for the teardown and gets a fresh session, never the workspace being removed', { skip, timeout: 60_000 }, async (t) => {
  const { manager } = managerFor(t);
  const first = await manager.acquire(scope('ending'), 'a');
  await first.writeFile('old.txt', 'from the first session\n');
  const ending = first.end();
  const second = await manager.acquire(scope('ending'), 'a');
  assert.equal((await ending).workspace.removed, true);
  assert.equal(second.origin, 'created');
  assert.equal(second.workspace, first.workspace, 'same key, same path');
  assert.ok(mountedAt(second.workspace), 'the new session has a mounted workspace on the host');
  const run = await second.exec({ shell: 'bash', script: 'echo new > new.txt; ls' });
  assert.equal(run.stdout, 'new.txt\n', 'the old files went with the old workspace');
  assert.equal(String(await second.readFile('new.txt')), 'new\n', 'the host sees what the sandbox wrote');
  assert.equal((await second.end()).workspace.removed, true);
});

test('the audit redacts a secret value whole, through its "/" and "+"', { skip, timeout: 60_000 }, async (t) => {
  const records = [];
  const { manager } = managerFor(t, { audit: (r) => records.push(r) });
  const session = await manager.acquire(scope('redaction'), 'a');
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY+x=';
  await session.exec({ shell: 'bash', script: `export AWS_SECRET_ACCESS_KEY=${secret} && true` });
  const { command } = records.find((r) => r.operation === 'exec');
  assert.equal(command, '/bin/bash -c export AWS_SECRET_ACCESS_KEY=[REDACTED] && true');
  for (const part of secret.split(/[/+=]/).filter((p) => p.length > 3)) assert.ok(!command.includes(part), `${part} kept: ${command}`);
});

test('list() of a directory over 10 000 entries says it is truncated; remove() of a non-empty directory has its own code and no provider path', { skip, timeout: 120_000 }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('files'), 'a');
  const made = await session.exec({ shell: 'bash', script: 'mkdir big small && cd big && seq 1 10001 | xargs touch && touch ../small/a' });
  assert.equal(made.exitCode, 0, made.stderr);
  const big = await session.list('big');
  assert.deepEqual([big.length, big.truncated], [10_000, true]);
  const small = await session.list('small');
  assert.deepEqual([small.map((e) => e.name), small.truncated], [['a'], false]);
  const error = await session.remove('small').then(() => null, (e) => e);
  assert.equal(error?.code, 'ERR_CORDON_SESSION_DIRECTORY_NOT_EMPTY');
  assert.doesNotMatch(error.message, /\/proc\/self\/fd/);
  assert.deepEqual((await session.list('small')).map((e) => e.name), ['a'], 'nothing was removed');
});

// Since egress3 the relay hands its listener to the engine and execs the
// program: no relay process is left in the sandbox to rewrite (R5-1 was a
// command rewriting a long-lived helper through /proc/<pid>/mem). If a relay
// process ever stays again, the second half still tries the attack on it.
test('no egress relay process stays in a session sandbox, and none a command could open through /proc/<pid>/mem or /proc/<pid>/syscall', { skip, timeout: 60_000 }, async (t) => {
  const { manager } = managerFor(t, { network: { allow: [{ host: 'localhost', port: 9, allowPrivateAddresses: true }] } });
  const session = await manager.acquire(scope('relay'), 'mallory');
  const probe = await session.exec({ shell: 'bash', script: [
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = egress-relay ] || continue; echo "relay ${p#/proc/}"',
    '  cat $p/syscall >/dev/null 2>&1 && echo "syscall ${p#/proc/} readable"; (exec 9<>$p/mem) 2>/dev/null && echo "mem ${p#/proc/} opened"; done',
  ].join('\n') });
  assert.equal(probe.exitCode, 0, probe.stderr);
  assert.doesNotMatch(probe.stdout, /^relay \d+$/m, 'the relay has exec\'d the program, not stayed beside it');
  assert.doesNotMatch(probe.stdout, /readable|opened/);
  // The network still works through the engine (the listener was handed over).
  const reach = await session.exec({ shell: 'bash', script: 'exec 3<>/dev/tcp/127.0.0.1/3128 && echo connected' });
  assert.match(reach.stdout, /connected/, reach.stderr);
});
