'use strict';
// What environment does a session command see (the agent's own, which `env` goes over)? Does anything of the
// provider's environment reach it (a marker set in the provider's env), or the sessions root's host path? Also /proc/1/environ and /proc/1/cmdline inside. Control: a marker passed through `env`
// reaches the command. Usage (root or uid 65534): node session-env-leak.js
process.env.R13_PROVIDER_SECRET = 'prov-' + Math.random().toString(36).slice(2);
const { withManager } = require('./h.js');
withManager({}, async (sessions, audits, dir) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'env' }, { tenant: 't' });
  const r = await a.exec({ shell: 'bash', script: 'env; echo ---; for p in /proc/[0-9]*; do echo "$p: $(tr "\\0" " " < $p/cmdline 2>/dev/null | cut -c1-200) | $(tr "\\0" " " < $p/environ 2>/dev/null | cut -c1-300)"; done; echo ---; cat /proc/self/mountinfo | cut -d" " -f4,5 | head -40' }, { env: { CTL: 'ctl-marker' } });
  const out = r.stdout;
  console.log(out.split('\n').filter((l) => l.length).slice(0, 80).join('\n'));
  const leaks = [process.env.R13_PROVIDER_SECRET, dir].filter((m) => m && out.includes(m));
  console.log(!out.includes('ctl-marker') ? 'control failed' : leaks.length ? `FINDING: the session sees ${leaks.join(', ')}` : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
