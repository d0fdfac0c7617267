'use strict';
// R11-7 follow-up: a lone UTF-16 surrogate in a command's argv, shell script or env value (what JSON.parse gives
// for "\ud800" in a tool input). Control: the same in `cwd`, refused since R11-7 (PATH_REFUSED, a refusal).
// Probe: argv / script / env reach the exec agent, whose JSON parser fails: ERR_CORDON_SESSION_COMMAND_FAILED
// (an internal failure) while the audit record says the command was given with "\ud800". stdin is encoded lossily.
const { withManager } = require('./h.js');
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'enc' }, { tenant: 't' });
  const t = (p, ms) => Promise.race([p, new Promise((_, j) => setTimeout(() => j(Object.assign(new Error('no settle in ' + ms), { code: 'HUNG' })), ms))]);
  const codes = {};
  for (const [k, fn] of Object.entries({
    envLone: () => a.exec(['true'], { env: { X: '\ud800' } }),
    startLone: () => a.start(['printf', '\ud800']).then((h) => t(h.wait(), 5000)),
    shellLone: () => a.exec({ shell: 'bash', script: 'echo \ud800' }),
    cwdCtl: () => a.exec(['true'], { cwd: '\ud800' }),
    stdinLone: () => a.exec(['cat'], { stdin: '\ud800' }),
    after: () => a.exec(['echo', 'alive']),
  })) {
    try { const r = await t(fn(), 8000); codes[k] = 'ok'; console.log(k, 'ok', JSON.stringify(r.stdout), r.exitCode); }
    catch (e) { codes[k] = e.code; console.log(k, 'err', e.code, String(e.message).slice(0, 90)); }
  }
  const internal = ['startLone', 'shellLone', 'envLone'].filter((k) => codes[k] === 'ERR_CORDON_SESSION_COMMAND_FAILED');
  console.log(codes.cwdCtl !== 'ERR_CORDON_SESSION_PATH_REFUSED' || codes.after !== 'ok' ? 'control failed' : internal.length ? `FINDING: a lone surrogate in ${internal.join(', ')} fails inside the agent (COMMAND_FAILED), not refused by the host` : 'held');
  if (process.env.V) console.log('audits', audits.slice(-5).map((r) => JSON.stringify(r).slice(0, 300)).join('\n'));
}).catch((e) => { console.error(e); process.exitCode = 1; });
