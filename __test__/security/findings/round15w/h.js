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
      if (/cordon-fd-clo/.test(comm)) out.push(`${comm}@${wchan}`);
    } catch {}
  }
  return out;
}
function stuck() { return closers().filter((c) => /wait_woken|sk_stream_wait_close|wait/.test(c)); }
module.exports = { ...h, closers, stuck };
