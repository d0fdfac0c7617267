'use strict';
// Sessions audit (docs/sessions.md › Audit): the command is redacted; what of the other things a call carries —
// env values, a cwd, a refused exec's env, a file tool's path, an allow() denial? Secret S anywhere in a record = clear.
// Control: `curl -u ada:S` is redacted. Usage (root or uid 65534): node audit-other-fields.js
const { withManager } = require('./h.js');
const S = 'Zq7SeCrEt9';
withManager({ allow: (op) => !(op && JSON.stringify(op).includes('deny-me')) }, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'aud' }, { tenant: 't' });
  const leaks = {};
  const probe = async (name, fn) => { const n0 = audits.length; try { await fn(); } catch (e) { /* refusals expected */ } const recs = audits.slice(n0); const hit = recs.filter((r) => JSON.stringify(r).includes(S)); leaks[name] = { records: recs.length, clear: hit.length, sample: hit[0] ? JSON.stringify(hit[0]).slice(0, 200) : '' }; };
  await probe('control: curl -u ada:S', () => a.exec({ shell: 'bash', script: `true || curl -u ada:${S} http://h/` }));
  await probe('env GITHUB_TOKEN=S', () => a.exec(['true'], { env: { GITHUB_TOKEN: S } }));
  await probe('env PASSWORD=S (refused: bad other env)', () => a.exec(['true'], { env: { PASSWORD: S, 'BAD-NAME': 'x' } }));
  await probe('stdin S', () => a.exec(['cat'], { stdin: `password=${S}\n` }));
  await probe('cwd named password=S (refused)', () => a.exec(['true'], { cwd: `../password=${S}` }));
  await probe('writeFile path .env-S', () => a.writeFile(`token=${S}.txt`, 'x'));
  await probe('argv token=S via argv form', () => a.exec(['true', `--token=${S}`]));
  await probe('argv form curl -u', () => a.exec(['true', '||', 'curl', '-u', `ada:${S}`]));
  await probe('argv form: program curl', () => a.exec(['curl', '-u', `ada:${S}`, '--max-time', '1', 'http://127.0.0.1:9/']));
  await probe('denied by allow(): curl -u', () => a.exec({ shell: 'bash', script: `deny-me; curl -u ada:${S} http://h/` }));
  for (const [k, v] of Object.entries(leaks)) console.log(k.padEnd(44), `records ${v.records}, with S in clear ${v.clear}`, v.sample);
  const ctl = leaks['control: curl -u ada:S'];
  const bad = Object.entries(leaks).filter(([k, v]) => !k.startsWith('control') && !k.startsWith('writeFile') && v.clear);
  console.log('note: a file tool\'s path is kept as written (docs redact only the command):', leaks['writeFile path .env-S'].clear ? 'in clear' : 'redacted');
  console.log(ctl.records !== 1 || ctl.clear ? 'control failed' : bad.length ? `FINDING: secret in clear in audit records of: ${bad.map(([k]) => k).join('; ')}` : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
