'use strict';
// Shared helpers for round 17w probes.
const path = require('path');
const fs = require('fs');
const PKG = process.env.CORDON_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function nthreads() { return fs.readdirSync('/proc/self/task').length; }
function nfds() { return fs.readdirSync('/proc/self/fd').length; }
// Spawns `prog` (python) and returns helpers that count every write's callback outcome.
function spawn(prog, opts = {}) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', prog], { policy: cordon.readOnly(), deadlineMs: 10000, ...opts });
  ex.stderr.resume();
  const p = ex.protocol; p.on('error', () => {});
  const st = { written: 0, okBytes: 0, errBytes: 0, cbOk: 0, cbErr: 0, pending: 0, errs: [] };
  const w = (n, fill = 97) => new Promise((res) => {
    st.written += n; st.pending++;
    const ok = p.write(Buffer.alloc(n, fill), (e) => {
      st.pending--;
      if (e) { st.cbErr++; st.errBytes += n; st.errs.push(e.code || String(e)); } else { st.cbOk++; st.okBytes += n; }
      res(!e);
    });
    void ok;
  });
  return { ex, p, st, w };
}
function account(ex, st, r) {
  const b = r.receipt.bytes;
  const dropped = ex.protocolDroppedBytes;
  return { ok: st.okBytes, err: st.errBytes, in: b.protocolIn, disc: b.protocolInDiscarded, dropped, missing: st.okBytes - b.protocolIn - b.protocolInDiscarded - dropped, pending: st.pending };
}
module.exports = { cordon, PKG, sleep, nthreads, nfds, spawn, account };
