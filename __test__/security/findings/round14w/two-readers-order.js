'use strict';
// R14w: bytes between the two fd 3 readers (the JS loop's, per credit, and the
// teardown's drain_to_end, without credits): lost, duplicated or reordered?
// Each run: the program writes 4 MiB of random data to fd 3 (its sha256 on
// stderr) and exits; the host consumer pauses/resumes at random and busy-loops
// the JS thread at times, so the teardown's drain and the JS reader overlap at
// the end. Checks length, sha256 and receipt bytes.protocolOut == bytes read.
// Control: the same with a plain flowing consumer.
const path = require('node:path');
const crypto = require('node:crypto');
const PKG = process.env.R14W_PKG || path.resolve(__dirname, '../../../..');
const { spawnIsolated, readOnly } = require(PKG);
const BYTES = 4 << 20;
const RUNS = Number(process.env.R14W_ORDER_RUNS || 12);

async function one(jitter, seed) {
  const e = spawnIsolated(['/bin/sh', '-c', `head -c ${BYTES} /dev/urandom > /tmp/d; sha256sum /tmp/d >&2; cat /tmp/d >&3`], { policy: readOnly() });
  const chunks = []; let err = '';
  e.stderr.on('data', (c) => { err += c; });
  let n = seed;
  const rnd = () => { n = (n * 1103515245 + 12345) & 0x7fffffff; return n / 0x7fffffff; };
  e.protocol.on('data', (c) => {
    chunks.push(c);
    if (!jitter) return;
    const r = rnd();
    if (r < 0.15) { e.protocol.pause(); setTimeout(() => e.protocol.resume(), Math.floor(rnd() * 15)); }
    else if (r < 0.2) { const until = Date.now() + Math.floor(rnd() * 40); while (Date.now() < until); }
  });
  const ended = new Promise((res) => e.protocol.on('end', res));
  const [r] = await Promise.all([e.wait(), ended]);
  const data = Buffer.concat(chunks);
  const sha = crypto.createHash('sha256').update(data).digest('hex');
  return { ok: data.length === BYTES && err.startsWith(sha) && r.receipt.bytes.protocolOut === data.length, len: data.length, protocolOut: r.receipt.bytes.protocolOut, shaOk: err.startsWith(sha), rc: r.returncode };
}

(async () => {
  const ctl = await one(false, 1);
  const bad = [];
  for (let i = 0; i < RUNS; i++) { const r = await one(true, i + 7); if (!r.ok) bad.push(r); }
  console.log(JSON.stringify({ control: ctl, badRuns: bad.length, of: RUNS }));
  if (!ctl.ok) console.log('control failed: the probe cannot tell');
  else if (bad.length) console.log(`FINDING: ${bad.length}/${RUNS} runs lost, duplicated or reordered bytes: ${JSON.stringify(bad.slice(0, 3))}`);
  else console.log(`held (${RUNS} jittered runs of ${BYTES} bytes: length, sha256 and protocolOut exact; control ok)`);
})();
