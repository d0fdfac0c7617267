'use strict';
// R18b: docs/remote.md § Flow control: the host stops reading the sandbox's fd 3 while the client's window is spent,
// "so a client that stops reading costs the host a constant amount of memory"; and the client never has more than
// the 256 KiB window in flight toward the host. (a) the program writes 64 KiB chunks to fd 3 for 3 s while the
// client's protocol is paused; (b) the client writes 256 MiB fire-and-forget to a program that never reads.
// Host RSS growth is measured (bound: 16 MiB, the doc's own test bound); then (a) resumes and reads to the end.
// Usage: node remote-flow.js [tls|nobody|control]   (control: the program writes nothing / the client writes 1 MiB)
const { startHost, sleep, PKG, descendants, rssKiB, counter, missing } = require('./common');
const { connectRemote } = require(PKG + '/lib/remote');
const mode = process.argv[2] || '';
const control = mode === 'control';
(async () => {
  const h = await startHost({ tls: mode === 'tls', asNobody: mode === 'nobody' });
  const c = connectRemote(h.target);
  let bad = 0;
  try {
    { const ex = c.spawnIsolated(['true'], { policy: c.readOnly() }); ex.stderr.resume(); ex.protocol.resume(); await ex.wait(); }
    await sleep(200);
    const r0 = rssKiB(h.pid);
    // (a)
    const prog = control ? 'import time\ntime.sleep(3)' : 'import os,time\nb=b"y"*65536\nt=time.time()+3\nn=0\nwhile time.time()<t:\n  n+=os.write(3,b)\nos.close(3)';
    const ex = c.spawnIsolated(['py', '-c', prog], { policy: c.readOnly(), deadlineMs: 20000 });
    ex.stderr.resume(); ex.protocol.pause();
    let got = 0;
    let peak = r0;
    for (let k = 0; k < 30; k++) { await sleep(100); peak = Math.max(peak, rssKiB(h.pid)); }
    ex.protocol.on('data', (d) => { got += d.length; }); ex.protocol.resume();
    const r = await ex.wait();
    await new Promise((res) => (ex.protocol.readableEnded ? res() : ex.protocol.once('end', res)));
    const growA = peak - r0;
    console.log(`(a) paused reader: host RSS ${r0} -> peak ${peak} KiB (+${growA}); protocolOut ${r.receipt.bytes.protocolOut}, client got ${got}`);
    if (growA > 16384 || got !== r.receipt.bytes.protocolOut) bad++;
    // (b)
    await sleep(200);
    const r1 = rssKiB(h.pid);
    const ex2 = c.spawnIsolated(['py', '-c', 'import time\ntime.sleep(2.5)'], { policy: c.readOnly(), deadlineMs: 20000 });
    ex2.stderr.resume(); ex2.protocol.resume();
    const x = counter(ex2);
    const total = control ? 1 << 20 : 256 << 20;
    for (let off = 0; off < total; off += 1 << 20) x.w(1 << 20);
    let peak2 = r1;
    const t = setInterval(() => { peak2 = Math.max(peak2, rssKiB(h.pid)); }, 50);
    const rr = await ex2.wait();
    clearInterval(t);
    for (let k = 0; k < 400 && x.st.pending; k++) await sleep(5);
    const m = missing(ex2, x.st, rr);
    console.log(`(b) ${total} bytes to a non-reader: host RSS ${r1} -> peak ${peak2} KiB (+${peak2 - r1}); in ${rr.receipt.bytes.protocolIn}, discarded ${rr.receipt.bytes.protocolInDiscarded}, dropped ${ex2.protocolDroppedBytes}, missing ${m}, pending ${x.st.pending}`);
    if (peak2 - r1 > 16384 || m !== 0 || x.st.pending) bad++;
  } finally { await sleep(200); console.log('processes left', descendants(h.pid).length); await c.close(); await h.stop(); }
  console.log(bad ? `FINDING: ${bad} flow-control checks failed` : 'held');
})();
