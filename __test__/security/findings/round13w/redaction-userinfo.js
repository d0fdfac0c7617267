'use strict';
// Round 13w: the new colon-less http(s) userinfo rule and \uXXXX keys (lib/sessions/redact-command.js).
// Each command runs through a real session as `true || <command>`; the last audit record's `command`
// is checked for the secret. Also times 384 KiB hostile shapes through the module (linear?).
const { withManager } = require('./h.js');
const { redactShellCredentials } = require('../../../../lib/sessions/redact-command.js');
const S = 'Zq7SeCrEt9';
const controls = {
  'https://TOKEN@host (fixed R12-5)': `git clone https://${S}@github.com/o/r`,
  'https://user:TOKEN@host': `git clone https://ada:${S}@github.com/o/r`,
  '{"pass\\u0077ord":"X"}': `echo '{"pass\\u0077ord":"${S}"}'`,
};
const probes = {
  // GitHub's token-as-user forms: the token is the *user* part and a colon follows.
  'https://TOKEN:x-oauth-basic@github.com': `git clone https://${S}:x-oauth-basic@github.com/o/r`,
  'https://TOKEN:@host (empty password)': `git clone https://${S}:@github.com/o/r`,
  'https://TOKEN%3A@host': `curl https://${S}%3A@h/`,
  // '@' inside the password (curl/git split at the last '@')
  'https://user:p@TOKEN@host': `curl https://ada:p@${S}@h/`,
  // short token over ws(s) (not in TOKEN_USERINFO_SCHEMES, < 16 chars)
  'wss://SHORT@host': `websocat wss://Zq7SeCrEt9@h/`,
  // \u escapes in an unquoted name / header
  '"\\u0070assword" : "X"': `echo '{"\\u0070assword" : "${S}"}'`,
  'pass\\u0077ord="X" kwarg': `python3 -c 'f(pass\\u0077ord="${S}")'`,
};
function timing() {
  const K = 384 * 1024;
  const shapes = {
    schemeRuns: ('a'.repeat(60) + '://x@').repeat(K / 65),
    httpsShort: 'https://x@'.repeat(K / 10),
    longNameThenScheme: 'a'.repeat(K - 20) + 'https://x@h',
    escapes: '\\u0041'.repeat(K / 6),
    escapesQuoted: '"\\u0041\\u0041\\u0041\\u0041\\u0041\\u0041\\u0041\\u0041\\u0041\\u0041\\u0041":'.repeat(K / 70),
    pctColon: 'https://a%3A%3A%3A'.repeat(K / 18),
    spacedKeys: '"password"      '.repeat(K / 16),
    subst: '$( `'.repeat(K / 4),
    wrapperArgs: 'timeout 5 '.repeat(K / 10),
  };
  const out = {};
  const time = (x) => { const r = []; for (let k = 0; k < 3; k += 1) { const t0 = performance.now(); redactShellCredentials(x); r.push(performance.now() - t0); } return r.sort((p, q) => p - q)[1]; };
  for (const [n, s] of Object.entries(shapes)) {
    time(s.slice(0, 4096)); // warm up
    const qms = time(s.slice(0, s.length / 4));
    const ms = time(s);
    out[n] = { ms: +ms.toFixed(1), quarterMs: +qms.toFixed(1) };
  }
  return out;
}
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'red13' }, { tenant: 't' });
  const check = async (set) => {
    const leaks = [];
    for (const [k, cmd] of Object.entries(set)) {
      await a.exec({ shell: 'bash', script: `true || ${cmd}` });
      const rec = audits[audits.length - 1];
      const secret = S;
      if (String(rec.command).includes(secret)) leaks.push(k + '  =>  ' + rec.command.slice(0, 140));
    }
    return leaks;
  };
  const cl = await check(controls);
  const pl = await check(probes);
  console.log(`controls: ${Object.keys(controls).length - cl.length}/${Object.keys(controls).length} redacted`); cl.forEach((l) => console.log('  CLEAR', l));
  console.log(`probes: ${pl.length}/${Object.keys(probes).length} in clear`); pl.forEach((l) => console.log('  CLEAR', l));
  // 384 KiB through the session too (the audit path's cut is 512 KiB)
  const big = Array.from({ length: 384 * 1024 / 11 }, () => 'https://x@');
  const t0 = performance.now();
  await a.exec(['true', ...big]);
  if (audits.at(-1).command.length < 1000) console.log('  (audit record of the big exec is short: ' + audits.at(-1).command.length + ')');
  console.log(`384 KiB https://x@ through a session: ${(performance.now() - t0).toFixed(0)} ms`);
  const t = timing();
  let slow = [];
  for (const [n, v] of Object.entries(t)) { console.log(`  ${n}: ${v.ms} ms (a quarter: ${v.quarterMs} ms)`); if (v.ms > 1000 || (v.ms > 50 && v.ms > 8 * v.quarterMs)) slow.push(n); }
  if (cl.length) console.log('control failed');
  else if (pl.length || slow.length) console.log(`FINDING: ${pl.length} userinfo/escape variants kept in clear${slow.length ? `; slow: ${slow}` : ''}`);
  else console.log('held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
