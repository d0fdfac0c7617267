'use strict';
// Round 15w helper: the round-14 helper (R14_PKG / R14_RELAY select a package
// copy and relay, e.g. a uid-65534 provider's), plus closer-thread census.
const fs = require('node:fs');
const h = require('../round14/h');
/** Threads of this process waiting in a TCP close or otherwise blocked, by comm and wchan. */
function closers() {
  const out = [];
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      const comm = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim();
      const wchan = fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8').trim();
      if (/cordon-fd-(clo|exi)/.test(comm)) out.push(`${comm}@${wchan}`);
    } catch {}
  }
  return out;
}
/**
 * Closer threads blocked in a close (a linger, a lock held elsewhere). The
 * closer itself idles in a futex between batches (one per process since
 * 2026-12-06): that is not stuck, and counting it made these probes wait out
 * their whole bound (R15w-1 flood 2 → 37 s, R15w-2 3.5 → 64 s in CI).
 */
function stuck() { return closers().filter((c) => !/@futex/.test(c) && /wait|release|lock/.test(c)); }
module.exports = { ...h, closers, stuck };
