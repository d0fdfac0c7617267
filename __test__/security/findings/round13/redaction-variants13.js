'use strict';
// R12-5 re-test: documented credential shapes (docs/sessions.md › Audit) in spellings round 12 did not try.
// Each command runs as `true || <command>`; the last audit record's `command` is checked for the secret.
const { withManager } = require('./h.js');
const S = 'Zq7SeCrEt9';
const documented = {
  'header -H "Authorization: Bearer X"': `curl -H "Authorization: Bearer ${S}" http://h/`,
  'userinfo https://user:X@host': `curl https://ada:${S}@h/`,
  'curl -u user:X': `curl -u ada:${S} http://h/`,
  '--password X': `tool --password ${S}`,
  'json {"password":"X"}': `curl -d '{"password":"${S}"}' http://h/`,
  'mysql -pX': `mysql -p${S} db`,
  'token userinfo https://X@host': `git clone https://${S}@github.com/o/r`,
};
const variants = {
  'upper-case scheme HTTPS://u:X@': `curl HTTPS://ada:${S}@h/`,
  'redis://:X@ (empty user)': `redis-cli -u redis://:${S}@h:6379`,
  'mongodb+srv://u:X@': `mongosh "mongodb+srv://ada:${S}@h/db"`,
  'curl -u :X (empty user)': `curl -u :${S} http://h/`,
  'curl -u \'ada:X\' single-quoted': `curl -u 'ada:${S}' http://h/`,
  'curl -u "ada":"X" split quotes': `curl -u "ada":"${S}" http://h/`,
  'curl --user=ada:X': `curl --user=ada:${S} http://h/`,
  'form body -d password=X': `curl -d "user=ada&password=${S}" http://h/`,
  'query ?access_token=X': `curl "https://h/api?access_token=${S}"`,
  'header PRIVATE-TOKEN': `curl -H "PRIVATE-TOKEN: ${S}" http://h/`,
  'header X-Auth-Token': `curl -H "X-Auth-Token: ${S}" http://h/`,
  'header Proxy-Authorization Basic': `curl -H "Proxy-Authorization: Basic ${S}" http://h/`,
  'header escaped blanks Authorization:\\ Bearer\\ X': `curl -H Authorization:\\ Bearer\\ ${S} http://h/`,
  'header quote-split "Author""ization: Bearer X"': `curl -H "Author""ization: Bearer ${S}" http://h/`,
  'header value after closing quote "Bearer "X': `curl -H "Authorization: Bearer "${S} http://h/`,
  'git -c http.extraHeader=': `git -c http.extraHeader="Authorization: Bearer ${S}" clone https://h/r`,
  'upper-case flag --PASSWORD X': `tool --PASSWORD ${S}`,
  'wget --http-password=X': `wget --http-password=${S} http://h/`,
  'AWS_SECRET_ACCESS_KEY=X': `AWS_SECRET_ACCESS_KEY=${S} aws s3 ls`,
  'npm _authToken': `npm config set //registry.npmjs.org/:_authToken=${S}`,
  'python kw spaced password = "X"': `python3 -c 'login(password = "${S}")'`,
  'yaml token: X': `printf 'token: ${S}\\n' > c.yml`,
  'json key newline colon': `printf '{"password"\\n:"${S}"}'`,
  'zip -P X': `zip -P ${S} a.zip f`,
  '7z -pX': `7z a -p${S} a.7z f`,
  'eval "curl -u"': `eval "curl -u ada:${S} http://h/"`,
  'header in $(printf)': `curl -H "$(printf 'Authorization: Bearer ${S}')" http://h/`,
  'sudo -u root curl -u': `sudo -u root curl -u ada:${S} http://h/`,
  'env -i curl -u': `env -i PATH=/bin curl -u ada:${S} http://h/`,
  'command curl -u': `command curl -u ada:${S} http://h/`,
  'exec curl -u': `exec curl -u ada:${S} http://h/`,
  '( subshell ) curl -u': `(curl -u ada:${S} http://h/)`,
  '{ group; } curl -u': `{ curl -u ada:${S} http://h/; }`,
  'if then curl -u': `if true; then curl -u ada:${S} http://h/; fi`,
  '! curl -u': `! curl -u ada:${S} http://h/`,
  'curl -su (clustered flags)': `curl -su ada:${S} http://h/`,
  'json key, real newline before colon (heredoc)': `cat <<E\n{"password"\n  : "${S}"}\nE`,
  'timeout -s KILL 5 curl -u': `timeout -s KILL 5 curl -u ada:${S} http://h/`,
  'stdbuf -oL curl -u': `stdbuf -oL curl -u ada:${S} http://h/`,
  'xargs -n 1 curl -u': `echo h | xargs -n 1 curl -u ada:${S}`,
  'env -u VAR curl -u': `env -u HOME curl -u ada:${S} http://h/`,
  'nohup curl -u': `nohup curl -u ada:${S} http://h/`,
  'time curl -u': `time curl -u ada:${S} http://h/`,
  'header text to a file (no -H)': `printf 'Authorization: Bearer ${S}\\n' > hdr && curl -H @hdr http://h/`,
  'python headers={"Authorization": "Bearer X"}': `python3 -c 'requests.get(u, headers={"Authorization": "Bearer ${S}"})'`,
  'curl -H @- <<< header': `curl -H @- http://h/ <<< "Authorization: Bearer ${S}"`,
  'aws configure set aws_secret_access_key (base64 with /)': `aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/${S}bPxRfiCY`,
  'curl -H@ before -u (two args)': `curl -sS -X POST -u ada:${S} http://h/`,
};
// R13-2's forms (Code Mode's source scan, which the sessions' audit runs second) inside a session command:
const codeForms = {
  'node -e Headers.set("Authorization", "Bearer X")': `node -e 'h.set("Authorization", "Bearer ${S}")'`,
  'node -e new Headers([["x-api-key", X]])': `node -e 'fetch(u,{headers:new Headers([["x-api-key","${S}"]])})'`,
};
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'red' }, { tenant: 't' });
  const check = async (set) => {
    const leaks = [];
    for (const [k, cmd] of Object.entries(set)) {
      await a.exec({ shell: 'bash', script: `true || ${cmd}` });
      const rec = audits[audits.length - 1];
      if (String(rec.command).includes(S)) leaks.push(k + '  ⇒  ' + rec.command.slice(0, 140));
    }
    return leaks;
  };
  const dl = await check(documented);
  const vl = await check(variants);
  console.log(`documented shapes (control): ${Object.keys(documented).length - dl.length}/${Object.keys(documented).length} redacted`); dl.forEach((l) => console.log('  CLEAR', l));
  console.log(`variants: ${vl.length}/${Object.keys(variants).length} in clear`); vl.forEach((l) => console.log('  CLEAR', l));
  const cl = await check(codeForms);
  console.log(`R13-2's JavaScript forms in a session command: ${cl.length}/${Object.keys(codeForms).length} in clear`); cl.forEach((l) => console.log('  CLEAR', l));
  console.log(dl.length === 0 && vl.length ? `FINDING: ${vl.length} variants of documented shapes kept in clear` : dl.length ? 'control failed' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
