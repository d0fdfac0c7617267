'use strict';
// R12-2's cause in a plain run (root provider, default policy workspaceWrite(), 256 MiB): a program that makes
// hard links in /tmp until its OOM kill leaves a namespace whose teardown outlasts forceMs, and the receipt says
// containmentConfirmed: false (docs/receipts.md: "false when a process of the sandbox outlived that") though
// the last process of the run's uid is gone soon after (printed). Control: /bin/true. Usage (root or uid 65534): node plain-unconfirmed.js
const fs = require('node:fs');
const { spawnIsolated, workspaceWrite } = require('../../../..');
const procsOf = (uid) => fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).filter((n) => { try { return Number(fs.readFileSync(`/proc/${n}/status`, 'utf8').match(/Uid:\s+(\d+)/)[1]) === uid; } catch { return false; } }).length;
(async () => {
  const out = {};
  for (const [k, argv] of Object.entries({
    control: ['/bin/true'],
    probe: ['/usr/bin/timeout', '10', '/usr/bin/python3', '-c', "import os\nos.close(os.open('/tmp/f', os.O_CREAT|os.O_WRONLY))\nn=0\nwhile True:\n  os.link('/tmp/f', '/tmp/%d' % n); n+=1"],
  })) {
    const t = Date.now();
    const ex = spawnIsolated(argv, { policy: workspaceWrite() });
    ex.stderr.resume();
    const r = await ex.wait().catch((e) => ({ err: e.code }));
    const ms = Date.now() - t;
    const uid = r.receipt?.confinement?.planned?.uid;
    let gone = null;
    for (let i = 0; i < 40; i++) { if (procsOf(uid) === 0) { gone = Date.now() - t - ms; break; } await new Promise((res) => setTimeout(res, 500)); }
    out[k] = { confirmed: r.receipt?.stop?.containmentConfirmed, left: gone === null ? 1 : 0 };
    console.log(`${k}: rc ${r.returncode ?? r.err}, oomKills ${r.receipt?.confinement?.cgroupOutcome?.oomKills}, containmentConfirmed ${out[k].confirmed}, wait() after ${ms} ms; last process of its uid ${uid} gone ${gone === null ? 'NOT within 20 s' : gone + ' ms after wait() settled'}`);
  }
  console.log(out.control.confirmed !== true ? 'control failed' : out.probe.confirmed === false ? `FINDING: the program chose containmentConfirmed: false (its namespace's teardown outlasted forceMs${out.probe.left ? '; a process still there after 20 s' : ', every process gone soon after'})` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
