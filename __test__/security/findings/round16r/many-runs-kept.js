'use strict';
// R16r: per-run leaks and settling of the paths the R15r-1 fix added. N runs
// (default 1000, 4 at a time), rotating through: (a) the sandbox half-closes
// fd 3 and then reads to EOF while the provider's 1 MiB write keeps its rest
// (ProtocolEnd hands it to the writer thread: 84dac55f); (b) the sandbox never
// reads and the provider stop()s it with the rest kept (counted as kept at
// close_writer: 25c51338); (c) the sandbox exits at once with the rest kept;
// (d) control: the sandbox reads everything. Every run must settle, every
// write callback run once, protocolIn + protocolInDiscarded == 1 MiB (and for
// (a)/(d) the sandbox must get all of it), and fds/threads/RSS after N must
// match those after 200 (GC'd).
const path = require('node:path');
const fs = require('node:fs');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const N = Number(process.env.R16R_RUNS || 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const snap = () => ({ fds: fs.readdirSync('/proc/self/fd').length, threads: fs.readdirSync('/proc/self/task').length, rss: Math.round(process.memoryUsage().rss / 1048576) });
const SIZE = 1 << 20;
const big = Buffer.alloc(SIZE, 0x62);
const PROG = {
  half: 'import os,socket\nos.write(3,b"x")\ns=socket.socket(fileno=3);s.shutdown(socket.SHUT_WR);s.detach()\nn=0\nwhile True:\n b=os.read(3,1<<20)\n if not b: break\n n+=len(b)\nos.write(2,b"got %d" % n)\n',
  stop: 'import os,time\nos.write(3,b"x")\ntime.sleep(10)\n',
  exit: 'import os,time\nos.write(3,b"x")\ntime.sleep(0.02)\n',
  all: 'import os\nos.write(3,b"x")\nn=0\nwhile True:\n b=os.read(3,1<<20)\n if not b: break\n n+=len(b)\nos.write(2,b"got %d" % n)\n',
};
const KINDS = Object.keys(PROG);
let callbacks = 0; const bad = []; let unsettled = 0;
async function one(i) {
  const kind = KINDS[i % KINDS.length];
  const e = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG[kind]], { policy: cordon.readOnly(), deadlineMs: 8000 });
  let err = ''; e.stderr.on('data', (d) => { err += d; });
  let cbs = 0;
  e.protocol.once('data', () => {
    e.protocol.write(big, () => { cbs++; callbacks++; });
    e.protocol.end();
    if (kind === 'stop') setTimeout(() => e.stop(), 60);
  });
  e.protocol.resume();
  const t = setTimeout(() => { unsettled++; e.stop(); }, 9000);
  const r = await e.wait().then((v) => v, (x) => ({ err: x.code, receipt: x.details?.receipt }));
  clearTimeout(t);
  await sleep(0);
  const b = r.receipt?.bytes || {};
  const got = Number((err.match(/got (\d+)/) || [])[1]);
  const wantAll = kind === 'half' || kind === 'all';
  if (b.protocolIn + b.protocolInDiscarded !== SIZE || cbs !== 1 || (wantAll && got !== SIZE)) bad.push({ kind, in: b.protocolIn, disc: b.protocolInDiscarded, cbs, got, rc: r.returncode ?? r.err });
}
(async () => {
  let done = 0; let at200 = null; const t0 = Date.now();
  const lane = async () => { while (done < N) { const i = done++; await one(i); if (done >= Math.min(200, N >> 1) && !at200) { at200 = 'pending'; await sleep(500); global.gc?.(); await sleep(100); at200 = snap(); } } };
  await Promise.all([lane(), lane(), lane(), lane()]);
  await sleep(800); global.gc?.(); await sleep(200); global.gc?.();
  const end = snap();
  const s = `${N} runs (${KINDS.join('/')}) in ${Date.now() - t0} ms; write callbacks ${callbacks}/${N}; bad ${bad.length} ${JSON.stringify(bad.slice(0, 4))}; unsettled ${unsettled}; after 200 ${JSON.stringify(at200)}; after ${N} ${JSON.stringify(end)}`;
  const leak = end.fds - at200.fds > 8 || end.threads - at200.threads > 4 || end.rss - at200.rss > 60;
  console.log(leak || callbacks !== N || bad.length || unsettled ? `FINDING: ${s}` : `held (${s})`);
})();
