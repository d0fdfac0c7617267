'use strict';
// Does the argv/env an allow() hook and the audit see equal what the command receives?
// NUL and lone surrogates in exec argv, env values and names, stdin ignored.
const { withManager } = require('./h.js');
withManager({ allow: (op) => { seen.push(JSON.stringify(op)); return true; } }, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'enc' }, { tenant: 't' });
  const cases = {
    control: ['printf', '%s|', 'a', 'b'],
    nul: ['printf', '%s|', '/\u0000safe', 'b'],
    lone: ['printf', '%s|', '\ud800x', 'b'],
    loneLow: ['printf', '%s|', 'x\udc00', 'b'],
  };
  for (const [k, argv] of Object.entries(cases)) {
    seen.length = 0;
    try {
      const r = await a.exec(argv);
      const got = Buffer.from(r.stdout, 'utf8');
      console.log(k, 'ran; hook saw', JSON.stringify(argv.slice(2)), 'command got', JSON.stringify(r.stdout), got.toString('hex'));
    } catch (e) { console.log(k, 'refused', e.code, String(e.message).slice(0, 100)); }
  }
  for (const [k, env] of Object.entries({ envNul: { X: 'a\u0000b' }, envLone: { X: '\ud800' }, envNameLone: { ['\ud800']: '1' }, envNameEq: { 'A=B': '1' } })) {
    try {
      const r = await a.exec(['sh', '-c', 'env | grep -a -v -E "^(PATH|HOME|PWD|SHLVL|_)=" | od -c | head -3'], { env });
      console.log(k, 'ran', JSON.stringify(r.stdout));
    } catch (e) { console.log(k, 'refused', e.code, String(e.message).slice(0, 100)); }
  }
}).catch((e) => { console.error(e); process.exitCode = 1; });
const seen = [];
