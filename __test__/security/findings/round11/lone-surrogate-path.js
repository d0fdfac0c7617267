'use strict';
// R11-7: a file tool path holding a lone UTF-16 surrogate (JSON.parse gives
// one from a tool input such as {"path": "\ud800"}) is encoded lossily by a
// root provider: it names the file called U+FFFD, so two different paths (the
// one `allow()` and the audit record see, and U+FFFD) reach one file; a
// uid-65534 provider answers the same path with ERR_CORDON_SESSION_FILE_FAILED.
// Control: the path "\ufffd" itself, which names that file on both.
// Usage: node lone-surrogate-path.js (root) and as uid 65534 via setpriv.
const { withManager } = require('./h.js');

withManager({}, async (sessions, audits) => {
  const s = await sessions.acquire({ tenant: 't', conversation: 'c' }, { tenant: 't' });
  await s.exec({ shell: 'bash', script: "printf 'the U+FFFD file' > $'\\xef\\xbf\\xbd'" });
  const read = async (p) => { try { return (await s.readFile(p)).toString(); } catch (e) { return e.code; } };
  const control = await read('\ufffd');
  const probe = await read(JSON.parse('"\\ud800"'));
  const audited = audits.filter((a) => a.operation === 'readFile').pop().path;
  console.log(`uid ${process.getuid()}: readFile("\\ufffd") → ${control}; readFile("\\ud800") → ${probe} (audited path ${JSON.stringify(audited)})`);
  console.log(probe === control ? 'FINDING: a lone surrogate aliases U+FFFD (the audit names another path than the file read)'
    : probe === 'ERR_CORDON_SESSION_FILE_FAILED' ? 'FINDING: a lone surrogate fails as an internal file failure (not PATH_REFUSED)' : 'held');
}).catch((e) => { console.error(e); process.exitCode = 1; });
