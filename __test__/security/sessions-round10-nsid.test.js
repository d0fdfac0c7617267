'use strict';

// Round 10, R10-1 (docs/sessions.md › Crashes): a non-root provider's sweep
// after a dead session holder is scoped to the holder's user namespace, and
// that namespace was named by its nsfs inode, which the kernel hands out
// again (lowest free first) once the namespace is freed: the sweep then
// killed a run of the owner uid in whatever namespace had the number now.
// It is named by NS_GET_ID (unique within a boot) with the boot id beside
// it. Real processes in real user namespaces (setpriv + unshare, as
// findings/round10/userns-inode-reuse.js), the addon's sweep as
// owner-sweep.js calls it. Root only: only root starts processes of a
// session owner uid without a holder (the sweep's code is the same for a
// non-root provider; sessions-nonroot.test.js runs the provider's path).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { eventually } = require('../spawn-support');
const { sweepScope } = require('../../lib/sessions/owner-sweep');
const { sqliteSessionStore } = require('../../lib/sessions/sqlite-store');

const binding = require('../../binding.js');
const rootOnly = process.geteuid() === 0 ? false : 'needs root (processes of a session owner uid without a holder)';
const hasNsId = binding.userNamespaceId(process.pid) !== null;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const own = fs.statSync('/proc/self/ns/user').ino;

/** Real uid of `pid` (status), or null once it is gone or a zombie. */
function liveUid(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    if (/^State:\s+Z/m.test(status)) return null;
    return Number(/^Uid:\s+(\d+)/m.exec(status)[1]);
  } catch {
    return null;
  }
}

/** A session owner uid near the top of the range that nothing runs as (the Rust sweep test's choice). */
function unusedOwnerUid() {
  const uids = new Set(fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(liveUid));
  const last = binding.WORKSPACE_OWNER_UID_FIRST + binding.WORKSPACE_OWNER_UIDS - 1;
  for (let uid = last - 128; uid < last; uid++) if (!uids.has(uid)) return uid;
  throw new Error('no unused owner uid');
}

/**
 * A process of `uid` in a user namespace of its own below ours (what a
 * holder or a caller's run is); `nested`: it also starts one more, a
 * namespace further down (a session sandbox's). Resolves with
 * `{child, ino, nsId, inner}` once it has unshared.
 */
async function inFreshUserns(t, uid, { nested = false } = {}) {
  // `U U 1`, a holder's and a launcher run's shape; mapped, so a namespace can be made below it.
  const body = nested ? ['bash', '-c', 'unshare --user --map-current-user sleep 300 & exec sleep 300'] : ['sleep', '300'];
  const child = spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'unshare', '--user', '--map-current-user', ...body], { stdio: 'ignore' });
  child.gone = new Promise((resolve) => child.once('exit', resolve));
  t.after(() => stop(child));
  const unshared = () => {
    try {
      return fs.statSync(`/proc/${child.pid}/ns/user`).ino !== own && fs.readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim() === 'sleep';
    } catch {
      return false;
    }
  };
  assert.ok(await eventually(unshared, 30_000), 'unshare --user ran');
  const ino = fs.statSync(`/proc/${child.pid}/ns/user`).ino;
  let inner = null;
  if (nested) {
    // The nested sleep: a child of `child` whose namespace is another, below it.
    const below = () => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(child.pid) && fs.statSync(`/proc/${p}/ns/user`).ino !== ino && fs.statSync(`/proc/${p}/ns/user`).ino !== own;
      } catch {
        return false;
      }
    });
    assert.ok(await eventually(() => below() !== undefined, 30_000), 'the nested namespace is made');
    inner = Number(below());
  }
  return { child, ino, nsId: binding.userNamespaceId(child.pid), inner };
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await child.gone;
}

test('what a sweep may kill follows the record: a root provider\'s whole uid; a non-root provider\'s holder namespace by id, this boot only, else nothing', () => {
  const boot = 'b4f7';
  const holder = { pid: 10, start: 1, userns: 4026532178, nsId: '692902', bootId: boot };
  assert.deepEqual(sweepScope(null, { nonRoot: false, bootId: null }), { nsId: undefined }, 'root: the uid, guarded by its claim');
  assert.deepEqual(sweepScope(holder, { nonRoot: true, bootId: boot }), { nsId: '692902' });
  assert.deepEqual(sweepScope({ ...holder, bootId: 'other' }, { nonRoot: true, bootId: boot }), { skip: 'another-boot' }, 'ids restart at boot; nothing survived it');
  // The previous version's record (an inode only), a kernel without NS_GET_ID, no holder recorded yet: never the inode, never the whole uid.
  for (const old of [{ pid: 10, start: 1, userns: 4026532178 }, { ...holder, nsId: null }, { ...holder, nsId: 692902 }, { ...holder, bootId: undefined }, null]) {
    assert.deepEqual(sweepScope(old, { nonRoot: true, bootId: boot }), { skip: 'no-namespace-id' }, JSON.stringify(old));
  }
});

test('a namespace id above 2^53 round-trips the sqlite store as the decimal string it was recorded as', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-nsid-store-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = sqliteSessionStore(path.join(dir, 'sessions.db'));
  const holder = { pid: 10, start: 1, userns: 4026532178, nsId: '18446744073709551615', bootId: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() };
  await store.put({ key: 'k', ownerUid: 1, workspace: '/w', holder });
  assert.deepEqual((await store.get('k')).holder, holder);
  assert.equal(Number(holder.nsId).toString() === holder.nsId, false, 'as a JSON number it would not have');
});

test('the addon refuses a namespace id that is not a plain decimal before it looks at a process, never reading it as "the whole uid"', () => {
  for (const bad of ['', '0', '01', '-1', '1e3', '0x10', '18446744073709551616']) {
    assert.throws(() => binding.killUidProcesses(binding.WORKSPACE_OWNER_UID_FIRST + 1, bad), /ERR_CORDON_SESSION_SWEEP_FAILED: not a namespace id/, bad);
  }
});

test('a sweep scoped to a dead holder\'s namespace id kills nothing in a new namespace of the owner uid, even one that got the holder\'s inode number back; scoped to a live one it kills the processes in it and below it (round 10, R10-1)', { skip: rootOnly || (hasNsId ? false : 'a kernel without NS_GET_ID (before 6.18): records have no id and a dead holder\'s sweep kills nothing') }, async (t) => {
  const uid = unusedOwnerUid();
  // The "holder": a namespace of its own, a "sandbox" namespace below it.
  const holder = await inFreshUserns(t, uid, { nested: true });
  assert.match(holder.nsId, /^[1-9]\d*$/, 'a decimal id');
  // A run of the uid elsewhere while the holder lives: another namespace, another id.
  const bystander = await inFreshUserns(t, uid);
  assert.notEqual(bystander.nsId, holder.nsId);
  // Control: scoped to the live holder's id, the sweep takes it and the namespace below it, and only those.
  const killed = await binding.killUidProcesses(uid, holder.nsId);
  assert.ok(killed >= 2, `the holder and its nested process: ${killed}`);
  await holder.child.gone;
  assert.ok(await eventually(() => liveUid(holder.inner) === null, 30_000), 'the nested process is gone');
  assert.equal(liveUid(bystander.child.pid), uid, 'the run in another namespace survived');
  // The holder's namespace is freed (after an RCU grace period) and its number is
  // the kernel's again, lowest free first: namespaces of the uid are made, and kept
  // (each fills a lower free number), until one gets it. Not asserted: under load
  // another namespace on the host may take it first; the id check holds either way.
  const runs = [];
  for (let tries = 0; tries < 64 && !runs.some((run) => run.ino === holder.ino); tries++) {
    await sleep(100);
    runs.push(await inFreshUserns(t, uid));
  }
  const victim = runs.find((run) => run.ino === holder.ino) ?? runs[runs.length - 1];
  t.diagnostic(`holder's namespace: inode ${holder.ino}, id ${holder.nsId}; a new run's: inode ${victim.ino}${victim.ino === holder.ino ? ' (reused)' : ' (not reused)'}, id ${victim.nsId}; ${runs.length} runs made`);
  for (const run of runs) assert.notEqual(run.nsId, holder.nsId, 'an id is never handed out again within a boot');
  // The sweep a dead holder's record makes (owner-sweep.js): every run survives.
  assert.equal(await binding.killUidProcesses(uid, holder.nsId), 0, 'nothing is in the dead holder\'s namespace');
  for (const run of runs) assert.equal(liveUid(run.child.pid), uid, `the run in namespace ${run.ino} survived`);
  assert.equal(liveUid(bystander.child.pid), uid, 'the other run survived');
});
