'use strict';
const { withManager } = require('./h.js');
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'enc' }, { tenant: 't' });
  const t = (p, ms) => Promise.race([p, new Promise((_, j) => setTimeout(() => j(Object.assign(new Error('no settle in ' + ms), { code: 'HUNG' })), ms))]);
  for (const [k, fn] of Object.entries({
    startLone: () => a.start(['printf', '\ud800']).then((h) => t(h.wait(), 5000)),
    shellLone: () => a.exec({ shell: 'bash', script: 'echo \ud800' }),
    cwdCtl: () => a.exec(['true'], { cwd: '\ud800' }),
    stdinLone: () => a.exec(['cat'], { stdin: '\ud800' }),
    after: () => a.exec(['echo', 'alive']),
  })) {
    try { const r = await t(fn(), 8000); console.log(k, 'ok', JSON.stringify(r.stdout), r.exitCode); }
    catch (e) { console.log(k, 'err', e.code, String(e.message).slice(0, 90)); }
  }
  console.log('audits', audits.slice(-5).map((r) => JSON.stringify(r).slice(0, 300)).join('\n'));
}).catch((e) => { console.error(e); process.exitCode = 1; });
