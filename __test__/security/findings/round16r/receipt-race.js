'use strict';
// R16r: the receipt invariant under races. protocolIn + protocolInDiscarded
// must equal every byte handed to the native writer before the run ended
// (docs/receipts.md; the `kept` counter of 25c51338 for a rest kept in JS).
// Many runs (4 at a time), each with random games: one big write or many
// writes (1 B .. 3 MiB), from a 'data' listener, corked/uncorked, written on
// fd 3's 'end', destroy() mid-way, stop() at a random moment, while the
// sandbox reads a random prefix then exits / close(3)s / half-closes and reads
// to EOF / sleeps until stopped.
// Ground truth: ProtocolStream._write is wrapped; a chunk counts when the
// native writer was still open as it entered (a zero-byte native.write just
// before answers Ended once the writer closed; it cannot clobber a kept rest:
// none is kept while _write runs, the stream calls it only after the last
// write's callback). Control: the same runs with a sandbox that reads all.
const path = require('node:path');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const RUNS = Number(process.env.RUNS || 160);
const SEED = Number(process.env.SEED || 1);
let seed = SEED;
const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
const pick = (a) => a[Math.floor(rnd() * a.length)];
const PROG = `
import os, sys, time, socket
k = int(sys.argv[1]); act = sys.argv[2]; delay = float(sys.argv[3])
os.write(3, b'go')
time.sleep(delay)
got = 0
while got < k:
    b = os.read(3, min(1 << 20, k - got))
    if not b: break
    got += len(b)
if act == 'exit': os._exit(0)
if act == 'close':
    os.close(3); time.sleep(0.3); os._exit(0)
if act == 'shutwr':
    s = socket.socket(fileno=3); s.shutdown(socket.SHUT_WR); s.detach()
    while os.read(3, 1 << 20): pass
    os._exit(0)
if act == 'all':
    while os.read(3, 1 << 20): pass
    os._exit(0)
time.sleep(10)
`;
async function one(control) {
  const sizes = [];
  const many = rnd() < 0.6;
  const n = many ? 1 + Math.floor(rnd() * 12) : 1;
  for (let i = 0; i < n; i++) sizes.push(pick([1, 100, 4096, 65536, 200000, 1 << 20, 3 << 20, 8 << 20].slice(0, many ? 7 : 8)));
  const total = sizes.reduce((a, b) => a + b, 0);
  const k = Math.floor(rnd() * total);
  const act = control ? 'all' : pick(['exit', 'close', 'shutwr', 'sleep']);
  const delay = pick([0, 0.01, 0.05, 0.2]);
  const game = { cork: rnd() < 0.3, onEnd: rnd() < 0.3, destroyAt: !control && rnd() < 0.15 ? Math.floor(rnd() * 400) : null, stopAt: !control && (act === 'sleep' || rnd() < 0.3) ? Math.floor(rnd() * 600) : null, end: act === 'shutwr' || control || rnd() < 0.5 };
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', PROG, String(k), act, String(delay)], { policy: cordon.readOnly(), deadlineMs: 6000 });
  const native = ex._native;
  let counted = 0; let afterEnd = 0; let settled = false;
  const proto = ex.protocol;
  const origWrite = proto._write;
  const trace = []; let ambiguous = 0;
  const ended = () => native.write(Buffer.alloc(0)) === 1; /* WriteResult.Ended */
  proto._write = function (chunk, enc, cb) {
    const before = !settled && !ended();
    const ret = origWrite.call(this, chunk, enc, cb);
    // A rest kept now was accepted by an open writer (a zero-byte write would clobber its count: not asked).
    const after = this._rest !== null ? true : !ended();
    if (before && after) counted += chunk.length;
    else if (before) ambiguous += chunk.length; // the writer closed meanwhile
    else afterEnd += chunk.length;
    trace.push([chunk.length, before, after, this._rest ? this._rest.rest.length : null]);
    return ret;
  };
  const origSettle = ex._settle;
  ex._settle = function () { settled = true; return origSettle.call(this); };
  proto.on('error', () => {});
  proto.on('end', () => { if (game.onEnd) proto.write(Buffer.alloc(70000, 0x65)); });
  proto.once('data', () => {
    if (game.cork) proto.cork();
    for (const s of sizes) proto.write(Buffer.alloc(s, 0x61));
    if (game.cork) process.nextTick(() => proto.uncork());
    if (game.end) proto.end();
  });
  proto.resume();
  ex.stderr.resume();
  if (game.destroyAt !== null) setTimeout(() => proto.destroy(), game.destroyAt);
  if (game.stopAt !== null) setTimeout(() => ex.stop(), game.stopAt);
  const r = await ex.wait().then((v) => v, (e) => ({ err: e.code, receipt: e.details?.receipt }));
  const b = r.receipt?.bytes || {};
  const sum = b.protocolIn + b.protocolInDiscarded;
  return { ok: sum >= counted && sum <= counted + ambiguous, ambiguous, trace, total, counted, afterEnd, in: b.protocolIn, disc: b.protocolInDiscarded, sizes: sizes.length, k, act, delay, game, rc: r.returncode ?? r.err };
}
let ambiguousRuns = 0;
async function batch(control, runs) {
  const bad = []; let done = 0;
  const worker = async () => { while (done < runs) { done++; const x = await one(control); if (x.ambiguous) ambiguousRuns++; if (!x.ok) bad.push(x); } };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return bad;
}
(async () => {
  const t0 = Date.now();
  const c = await batch(true, Math.max(8, RUNS >> 3));
  const bad = await batch(false, RUNS);
  const s = `control ${Math.max(8, RUNS >> 3)} runs: ${c.length} mismatches; ${RUNS} raced runs: ${bad.length} mismatches; runs where a chunk entered _write as the writer closed (either count accepted): ${ambiguousRuns} (${Date.now() - t0} ms)`;
  if (bad.length) { console.log(`FINDING: ${s}`); for (const x of bad.slice(0, 8)) console.log(JSON.stringify(x)); } else console.log(`held (${s})`);
})();
