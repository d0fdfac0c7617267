'use strict';
// R11-3: the audit redaction documents `password: "…"` and `KEY=value`, but a
// credential under a quoted key or as a quoted keyword argument — the way a
// model writes JSON bodies and Python — is kept in clear. Control: the
// documented forms, with the same secret, are redacted.
// Usage: node redaction-quoted-keys.js (root, or as uid 65534 via setpriv)
const { withManager } = require('./h.js');
const S = 'Hunter2pass';
const leaks = [
  `curl -d '{"password":"${S}"}' https://api.example/login`,
  `curl -d '{"password": "${S}"}' https://api.example/login`,
  `python3 -c 'client.login(user="ada", password="${S}")'`,
  `python3 -c "cfg = {'password': '${S}'}"`,
  `python3 -c 'requests.get(u, auth=("ada", "${S}"))'`,
  `ldapsearch -D cn=admin -w ${S}`,
  `openssl enc -aes256 -pass pass:${S} -in a`,
  `smbclient -U ada%${S} //h/share`,
];
const controls = [`echo password: "${S}"`, `echo password=${S}`, `curl -u ada:${S} https://x/`, `curl -H "Authorization: Bearer ${S}" https://x/`];
withManager({}, async (sessions, audits) => {
  const s = await sessions.acquire({ tenant: 't', conversation: 'c' }, { tenant: 't' });
  const run = async (list) => {
    let kept = 0;
    for (const c of list) {
      await s.exec({ shell: 'bash', script: `true || ${c}` });
      const rec = audits[audits.length - 1];
      const leaked = rec.command.includes(S);
      kept += leaked;
      console.log(leaked ? 'CLEAR   ' : 'redacted', rec.command);
    }
    return kept;
  };
  console.log('-- control (documented forms)');
  const c = await run(controls);
  console.log('-- probe');
  const p = await run(leaks);
  console.log(c === 0 && p > 0 ? `FINDING: ${p}/${leaks.length} common credential forms reach the audit sink in clear` : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
