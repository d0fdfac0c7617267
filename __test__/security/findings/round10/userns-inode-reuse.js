'use strict';
// R10-1: the userns-scoped uid sweep (round 8, R8-1: b1ec846, userns_chain.rs) names the
// session holder's user namespace by its INODE alone (holder.js stores
// `holder.userns = stat(/proc/<holder>/ns/user).ino` in the session record). Namespace
// inode numbers come from the kernel's proc_inum IDA, lowest free first: once the holder
// and its sandboxes are gone, the very next namespace created on the host gets that
// number back. A sweep run then with the record's `userns` (recover()/acquire() →
// removeWorkspace(record, {sweep}) → killUid(ownerUid, record.holder.userns), e.g. after
// the holder was killed, or after a reboot with a sqlite store: the inode numbers start
// from the same base every boot) kills the processes of the owner uid in whatever
// namespace now carries that number — a caller's run on a workspace of that uid, the
// very case R8-1 scoped the sweep for.
//
// Run as root (a root provider's owner range is used so the addon's range guard passes;
// the userns test in kill_uid is the same code a non-root provider runs):
//   node userns-inode-reuse.js           the victim's namespace is created after the holder's is freed
//   node userns-inode-reuse.js control   the victim's namespace is created while the holder lives
// Prints VULNERABLE when the sweep scoped to the dead holder's namespace killed the victim.
//
// Fixed (R10-1): the record names the namespace by NS_GET_ID (never reused within a
// boot) with the boot id, and the addon's sweep takes that id (a decimal string),
// not the inode: the probe records what holder.js records now and sweeps with it.
const path = require('node:path');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const pkg = path.resolve(__dirname, '../../../..');
const binding = require(path.join(pkg, 'binding.js'));

const U = binding.WORKSPACE_OWNER_UID_FIRST + 4242; // a session owner uid (not the range's first)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const own = fs.statSync('/proc/self/ns/user').ino;

/** A process of uid U in a user namespace of its own (what a holder, or a caller's run, is). */
async function inFreshUserns() {
  const child = spawn('setpriv', [`--reuid=${U}`, `--regid=${U}`, '--clear-groups', 'unshare', '--user', 'sleep', '120'], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    let ino = null;
    try { ino = fs.statSync(`/proc/${child.pid}/ns/user`).ino; } catch {}
    if (ino !== null && ino !== own) return { child, ino };
    await sleep(10);
  }
  child.kill('SIGKILL');
  throw new Error('unshare --user did not run');
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

async function main() {
  const control = process.argv[2] === 'control';
  const spawned = [];
  try {
    const holder = await inFreshUserns();
    spawned.push(holder.child);
    const recorded = holder.ino; // the record's holder.userns: diagnostics only now
    const recordedId = binding.userNamespaceId(holder.child.pid); // the record's holder.nsId
    if (recordedId === null) { console.log('inconclusive: this kernel has no NS_GET_ID (records carry no id; a dead holder\'s sweep kills nothing)'); return; }
    let victim;
    if (control) victim = await inFreshUserns(); // created while the holder's namespace still exists
    await stop(holder.child); // the holder is gone (killed, or a reboot), no orphan pins its namespace
    if (!control) {
      // The namespace is freed a moment later (RCU); the next one created anywhere takes its number.
      for (let tries = 0; tries < 20; tries++) {
        await sleep(300);
        victim = await inFreshUserns();
        if (victim.ino === recorded) break;
        await stop(victim.child);
        victim = null;
      }
      if (!victim) { console.log('inconclusive: the inode was not reused in 20 tries'); return; }
    }
    spawned.push(victim.child);
    console.log(`holder's userns (recorded) ${recorded}; victim (uid ${U}, pid ${victim.child.pid}) userns ${victim.ino}`);
    const killed = await binding.killUidProcesses(U, recordedId);
    await sleep(200);
    const alive = victim.child.exitCode === null && victim.child.signalCode === null;
    console.log(`killUidProcesses(${U}, '${recordedId}') signalled ${killed}; victim (id ${binding.userNamespaceId(victim.child.pid)}) ${alive ? 'alive' : `killed (${victim.child.signalCode})`}`);
    if (control) console.log(alive ? 'control ok: a namespace that is not the holder\'s is left alone' : 'control FAILED');
    else console.log(alive ? 'held' : 'VULNERABLE: the sweep scoped to a dead holder\'s userns killed a process of the uid in a new namespace that reused its inode number');
  } finally {
    for (const c of spawned) await stop(c);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
