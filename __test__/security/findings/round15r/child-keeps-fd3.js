'use strict';
// R15r: the program exits while a child it left behind keeps fd 3 (writing a
// flood, or writing late, or reading a kept write rest), with the provider
// pulling. The run must settle promptly (the teardown's bounded drain),
// the bytes delivered must equal protocolOut, and a write rest kept in JS
// must be settled (callback) with the run. Control: the program writes the
// same early frame and exits with no child.
const path = require('node:path');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cases = {
  control: 'echo early >&3; exit 0',
  lateWriter: '(sleep 3; echo late >&3) & echo early >&3; exit 0',
  flooder: '(exec cat /dev/zero >&3) & echo early >&3; sleep 0.2; exit 0',
  keptRest: '(sleep 5; cat <&3 >/dev/null) & echo early >&3; sleep 0.3; exit 0',
};
(async () => {
  const rows = []; let bad = false;
  for (const [name, cmd] of Object.entries(cases)) {
    const ex = cordon.spawnIsolated(['/bin/sh', '-c', cmd], { policy: cordon.readOnly(), deadlineMs: 30000 });
    ex.stderr.resume();
    let got = 0; let cb = false; const t0 = Date.now();
    ex.protocol.on('data', (c) => { got += c.length; });
    if (name === 'keptRest') ex.protocol.write(Buffer.alloc(8 << 20), () => { cb = true; });
    const settled = await Promise.race([ex.wait().then(() => true, () => true), sleep(15000).then(() => false)]);
    if (!settled) { bad = true; await ex.stop(); }
    const r = await ex.wait().then((v) => v, (e) => ({ err: e.code, receipt: e.details?.receipt }));
    await sleep(100);
    const out = r.receipt?.bytes?.protocolOut;
    if (got !== out || (name === 'keptRest' && !cb)) bad = true;
    rows.push(`${name}: settled ${settled} in ${Date.now() - t0} ms, got ${got} out ${out} rc ${r.returncode ?? r.err}${name === 'keptRest' ? ` writeCb ${cb} in ${r.receipt?.bytes?.protocolIn} discarded ${r.receipt?.bytes?.protocolInDiscarded}` : ''}`);
  }
  console.log(bad ? `FINDING: ${rows.join('; ')}` : `held (${rows.join('; ')})`);
})();
