'use strict';
// Round 5: which authorize() verdicts let an acquire through? Documented:
// only true / {allow: true}; anything else (a throw included) denies.
const { manager } = require('./session-common');
async function main() {
  const verdicts = { one: 1, str: 'true', allowStr: { allow: 'yes' }, allowOne: { allow: 1 }, arr: [true], promiseTrue: Promise.resolve(true), thenable: { then: (r) => r(true) }, getter: { get allow() { return true; } }, proxy: new Proxy({}, { get: () => true }), boxed: Object(true) };
  for (const [name, v] of Object.entries(verdicts)) {
    const m = manager({ authorize: () => v });
    const r = await m.sessions.acquire({ tenant: 't', conversation: name }, { id: 'a' }).then(async (s) => { await s.end(); return 'ALLOWED'; }, (e) => e.code);
    console.log(name.padEnd(12), r);
    m.cleanup();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
