'use strict';
// Round 5: 10 concurrent acquires of distinct conversations of one tenant
// with maxSessionsPerTenant 2 (and 10 concurrent acquires of ONE
// conversation): how many sandboxes start?
const { manager } = require('./session-common');
async function main() {
  const seq = manager({ maxSessionsPerTenant: 2 });
  const seqResults = [];
  for (let i = 0; i < 3; i++) seqResults.push(await seq.sessions.acquire({ tenant: 't', conversation: `s${i}` }, { id: 'a' }).then(() => 'acquired', (e) => e.code));
  console.log('sequential, bound 2:', JSON.stringify(seqResults));
  await seq.sessions.endAll();
  seq.cleanup();
  let budgetCalls = 0;
  const m = manager({ maxSessionsPerTenant: 2, budget: () => { budgetCalls += 1; return true; } });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => m.sessions.acquire({ tenant: 't', conversation: `c${i}` }, { id: 'a' }).then((s) => s, (e) => e.code)));
  const live = results.filter((r) => typeof r !== 'string');
  const running = await Promise.all(live.map((s) => s.exec(['/bin/true']).then(() => 1, () => 0)));
  console.log('sandboxes that ran a command:', running.reduce((a, b) => a + b, 0), 'budget calls', budgetCalls);
  console.log('distinct conversations:', live.length, 'acquired;', JSON.stringify(results.filter((r) => typeof r === 'string')), 'manager.size', m.sessions.size);
  const same = await Promise.all(Array.from({ length: 6 }, () => m.sessions.acquire({ tenant: 'u', conversation: 'same' }, { id: 'a' }).then((s) => s, (e) => e.code)));
  const ids = new Set(same.filter((s) => typeof s !== 'string').map((s) => s.id));
  const uids = new Set(same.filter((s) => typeof s !== 'string').map((s) => s.ownerUid));
  console.log('one conversation x6:', same.filter((s) => typeof s !== 'string').length, 'handles,', ids.size, 'distinct ids,', uids.size, 'distinct owner uids; errors', JSON.stringify(same.filter((s) => typeof s === 'string')));
  console.log(live.length > 2 ? 'OPEN: tenant bound exceeded' : 'held: tenant bound');
  await m.sessions.endAll();
  m.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
