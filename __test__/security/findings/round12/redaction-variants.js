'use strict';
// R11-3 re-test: documented credential shapes (docs/sessions.md › Audit) written in other ways.
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
};
const variants = {
  'header no space Authorization:X': `curl -H "Authorization:${S}" http://h/`,
  'header --header=': `curl --header="X-Api-Key: ${S}" http://h/`,
  'wget --header': `wget --header "Authorization: Bearer ${S}" http://h/`,
  'header lower-case': `curl -H "authorization: bearer ${S}" http://h/`,
  'header ANSI-C $\'..\'': `curl -H $'Authorization: Bearer ${S}' http://h/`,
  'header tab sep': `curl -H "X-Api-Key:\t${S}" http://h/`,
  'userinfo token only https://X@host': `git clone https://${S}@github.com/o/r`,
  'userinfo ftp://': `curl ftp://ada:${S}@h/`,
  'userinfo percent-encoded colon %3A': `curl https://ada%3A${S}@h/`,
  'curl -uuser:X attached': `curl -uada:${S} http://h/`,
  '--password=X': `tool --password=${S}`,
  '--api-key X': `tool --api-key ${S}`,
  '--token=X': `tool --token=${S}`,
  'json spaced { "password" : "X" }': `echo '{ "password" : "${S}" }'`,
  'json api_key': `echo '{"api_key":"${S}"}'`,
  'json nested escaped unicode key': `echo '{"pass\\u0077ord":"${S}"}'`,
  'python kw single quotes password=\'X\'': `python3 -c "login(password='${S}')"`,
  'env PGPASSWORD=X psql': `PGPASSWORD=${S} psql -h h`,
  'export TOKEN=X': `export GITHUB_TOKEN=${S}`,
  'yaml unquoted password: X': `printf 'password: ${S}\\n' > c.yml`,
  'mysql -p\'X\' quoted': `mysql -p'${S}' db`,
  'mysql --password X': `mysql --password ${S} db`,
  'sshpass -p\'X\'': `sshpass -p '${S}' ssh h`,
  'redis-cli -a X': `redis-cli -a ${S} ping`,
  'docker login -p X': `docker login -u ada -p ${S}`,
  'psql URI postgres://u:X@h': `psql postgres://ada:${S}@h/db`,
  'after $( )': `echo $(curl -u ada:${S} http://h/)`,
  'after backtick': 'echo `curl -u ada:' + S + ' http://h/`',
  'after ||': `false || curl -u ada:${S} http://h/`,
  'after &': `sleep 1 & curl -u ada:${S} http://h/`,
  'bash -c quoted': `bash -c 'curl -u ada:${S} http://h/'`,
  'xargs wrapper': `echo x | xargs curl -u ada:${S} http://h/`,
  'timeout wrapper': `timeout 5 curl -u ada:${S} http://h/`,
  'path program /usr/bin/curl': `/usr/bin/curl -u ada:${S} http://h/`,
  'Authorization Basic base64 in header': `curl -H "Authorization: Basic ${S}" http://h/`,
  'Cookie header': `curl -H "Cookie: session=${S}" http://h/`,
  'curl -b cookie': `curl -b "session=${S}" http://h/`,
  'curl --oauth2-bearer': `curl --oauth2-bearer ${S} http://h/`,
};
withManager({}, async (sessions, audits) => {
  const a = await sessions.acquire({ tenant: 't', conversation: 'red' }, { tenant: 't' });
  const check = async (set) => {
    const leaks = [];
    for (const [k, cmd] of Object.entries(set)) {
      await a.exec({ shell: 'bash', script: `true || ${cmd}` });
      const rec = audits[audits.length - 1];
      if (String(rec.command).includes(S)) leaks.push(k + '  ⇒  ' + rec.command.slice(0, 120));
    }
    return leaks;
  };
  const dl = await check(documented);
  const vl = await check(variants);
  console.log(`documented shapes (control): ${Object.keys(documented).length - dl.length}/${Object.keys(documented).length} redacted`); dl.forEach((l) => console.log('  CLEAR', l));
  console.log(`variants: ${vl.length}/${Object.keys(variants).length} in clear`); vl.forEach((l) => console.log('  CLEAR', l));
  console.log(dl.length === 0 && vl.length ? `FINDING: ${vl.length} variants of documented shapes kept in clear` : dl.length ? 'control failed' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
