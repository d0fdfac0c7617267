'use strict';
// R12-5 re-test, cost: the audit redaction is claimed linear (docs/sessions.md › Audit). Hostile shapes round 12's
// bench may not cover, at 128 KiB and 512 KiB (the largest command accepted; past 128 KiB the exec itself fails E2BIG, after the audit): time of exec({shell:'bash', script:
// 'true || ' + shape × k}) end to end; ratio near 4 = linear, near 16 = quadratic. Control: plain 'a ' filler.
// Usage (root or uid 65534): node redaction-cost13.js
const { withManager } = require('./h.js');
const shapes = {
  control: 'a ',
  'unclosed header quote': '-H "Authorization: ',
  'wrapper chain sudo': 'sudo ',
  'wrapper timeout -s KILL 5': 'timeout -s KILL 5 ',
  'unclosed $(': '$( ',
  'scheme no @': 'https://x',
  'quoted key no colon': '"password" ',
  'escaped key fragments': '"\\u0070\\u0061',
  'eq chain': 'password=',
  'curl -u repeated': 'curl -u ',
  'backslash-escaped blanks': 'Authorization:\\ ',
  'kw spaced': 'password = ',
};
withManager({}, async (sessions) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'cost' }, { tenant: 't' });
  const time = async (s) => { const t = process.hrtime.bigint(); await a.exec({ shell: 'bash', script: s }).catch(() => {}); return Number(process.hrtime.bigint() - t) / 1e6; };
  await time('true');
  let worst = 0; let worstK = '';
  for (const [k, sh] of Object.entries(shapes)) {
    const mk = (bytes) => 'true || ' + sh.repeat(Math.floor(bytes / sh.length));
    const t1 = Math.min(await time(mk(128 * 1024)), await time(mk(128 * 1024)));
    const t4 = Math.min(await time(mk(500 * 1024)), await time(mk(500 * 1024)));
    const ratio = t4 / t1;
    console.log(k.padEnd(28), `128 KiB ${t1.toFixed(1)} ms, 500 KiB ${t4.toFixed(1)} ms, ×${ratio.toFixed(1)}`);
    if (k !== 'control' && t4 > worst) { worst = t4; worstK = k; }
  }
  console.log(worst > 2000 ? `FINDING: ${worstK} takes ${worst.toFixed(0)} ms at 500 KiB` : `held (worst ${worstK} ${worst.toFixed(0)} ms at 500 KiB)`);
}).catch((e) => { console.error(e); process.exitCode = 1; });
