'use strict';
// Remote client (docs/remote.md): bytes the client sent while the run was live must be in the host's receipt
// (protocolIn / protocolInDiscarded) or in the client's protocolDroppedBytes; only bytes that "reached the host
// after its receipt" may be in no counter. Here every write is made at t=0 to a program that sleeps SLEEP_S without
// reading fd 3, and the bytes already written to the host's socket at AT_MS (before startedAt + SLEEP_S) are checked.
// node remote-held-inbound.js [reps] [control]. Defaults: SLEEP_S=0.4 AT_MS=250.
// FINDING when bytes sent before the program could have exited are in no counter.
const path = require('path');
const { sleep } = require('./common');
const ROOT = process.env.CORDON_PKG || path.resolve(__dirname, '../../../..');
const { startHost } = require(path.join(ROOT, '__test__/remote-support'));
const { connectRemote } = require(path.join(ROOT, 'lib/remote'));
const REPS = +(process.argv[2] || 20);
const SLEEP_S = +(process.env.SLEEP_S || 0.4); // the program's sleep
const AT_MS = +(process.env.AT_MS || 250); // when the bytes sent so far are noted (well before the exit)
const control = process.argv[3] === 'control';
(async () => {
  const host = await startHost();
  const remote = connectRemote({ socket: host.socket });
  let bad = 0, unseen = 0;
  try {
    for (let i = 0; i < REPS; i++) {
      const ex = remote.spawnIsolated(control ? ['sh', '-c', 'exec cat <&3 >/dev/null'] : ['sleep', String(SLEEP_S)], { policy: remote.readOnly() });
      ex.stderr.resume(); ex.protocol.resume(); ex.protocol.on('error', () => {});
      // What the stream handed to the client's queue (Node's Writable holds later writes until a callback).
      let handed = 0; const qw = ex._queueWrite.bind(ex); ex._queueWrite = (buf, cb) => { if (ex._phase !== 'settled') handed += buf.length; return qw(buf, cb); };
      let ok = 0, err = 0;
      const sizes = [300000, 65536, 1000, 200000, 1 << 20, 10];
      const cbs = sizes.map((n) => new Promise((res) => ex.protocol.write(Buffer.alloc(n, 98), (e) => { if (e) err += n; else ok += n; res(); })));
      if (control) ex.protocol.end();
      // Bytes this client had written to the host's socket 500 ms after spawn (the program sleeps 1 s after start-up).
      let sentByAt = null, atWall = 0;
      const timer = setTimeout(() => { atWall = Date.now(); sentByAt = handed - ex._writes.reduce((a, w) => a + (w.buffer?.length ?? 0), 0); }, AT_MS);
      const r = await ex.wait();
      await Promise.all(cbs);
      clearTimeout(timer);
      await sleep(20);
      const b = r.receipt.bytes;
      const missing = ok - b.protocolIn - b.protocolInDiscarded - ex.protocolDroppedBytes;
      // sentByAt reached the host at least 0.5 s before the program exited: by docs/remote.md
      // they must all be in the receipt.
      const lostEarly = sentByAt === null ? 0 : sentByAt - b.protocolIn - b.protocolInDiscarded;
      // The program cannot exit before startedAt + its sleep: a positive margin proves the noted bytes were sent before.
      const marginMs = Date.parse(r.receipt.startedAt) + SLEEP_S * 1000 - atWall;
      if (lostEarly > 0 && marginMs > 0) bad++;
      if (missing !== 0) unseen++;
      console.log(missing ? 'BAD' : 'ok ', JSON.stringify({ i, ok, err, in: b.protocolIn, disc: b.protocolInDiscarded, clientDropped: ex.protocolDroppedBytes, missing, sentByAt, lostEarly, marginMs }));
    }
  } finally { await remote.close(); await host.stop(); }
  console.log(`runs with bytes in no counter the client sees: ${unseen}/${REPS}`);
  // After the fix (exit.inbound, docs/remote.md): every byte of a successful callback is in one of the three counters.
  console.log(bad && unseen ? `FINDING: ${bad}/${REPS} remote runs: bytes the client had sent before the program could have exited (marginMs > 0) are in neither receipt counter nor protocolDroppedBytes` : unseen ? `FINDING: ${unseen}/${REPS} runs with bytes in no counter` : 'held');
})();
