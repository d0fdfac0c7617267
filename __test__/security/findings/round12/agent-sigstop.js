'use strict';
// docs/sessions.md: "a command can still kill or stop [the agent], which ends the session with
// ERR_CORDON_SESSION_AGENT_FAILED". A command SIGSTOPs the agent (kill -STOP on its pid): does the next
// exec (with timeoutMs 2000) settle, does the session end? Control: kill -KILL (documented: AGENT_FAILED).
const { withManager } = require('./h.js');
const race = (p, ms) => Promise.race([p.then((r) => ({ r }), (e) => ({ e })), new Promise((res) => setTimeout(() => res({ hung: true }), ms))]);
async function scenario(sessions, sig) {
  const s = await sessions.acquire({ tenant: 't', conversation: 'stop-' + sig }, { tenant: 't' });
  const who = await s.exec({ shell: 'bash', script: 'for p in /proc/[0-9]*; do c=$(cat $p/comm 2>/dev/null); case "$c" in cordon-exec*) echo ${p#/proc/};; esac; done' });
  const pid = who.stdout.trim().split('\n')[0];
  const t0 = Date.now();
  const k = await race(s.exec({ shell: 'bash', script: `kill -${sig} ${pid}; echo sent` }, { timeoutMs: 2000 }), 8000);
  const n = await race(s.exec(['echo', 'next'], { timeoutMs: 2000 }), 8000);
  const f = await race(s.readFile('nope').catch((e) => { throw e; }), 3000);
  const show = (x) => x.hung ? 'HUNG (no settle in 8 s)' : x.e ? x.e.code : `exit ${x.r.exitCode} ${JSON.stringify(x.r.stdout.trim())}`;
  const t1 = Date.now();
  const end = await race(s.end(), 20000);
  const line = `${sig}: agent pid ${pid}; the kill exec → ${show(k)}; next exec (timeoutMs 2000) → ${show(n)}; readFile → ${f.hung ? 'HUNG' : f.e ? f.e.code : 'ok'}; end() → ${end.hung ? 'HUNG' : (end.r && end.r.endReason) + ' in ' + (Date.now() - t1) + ' ms'} (${Date.now() - t0} ms in all)`;
  console.log(line);
  return { k, n };
}
withManager({}, async (sessions) => {
  console.log(`uid ${process.getuid()}`);
  const c = await scenario(sessions, 'KILL');
  const p = await scenario(sessions, 'STOP');
  const ctl = !c.n.hung;
  console.log(!ctl ? 'control failed' : (p.n.hung || p.k.hung) ? 'FINDING: a stopped agent leaves exec (with timeoutMs) unsettled' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
