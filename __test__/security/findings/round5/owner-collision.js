'use strict';
// Two session managers on one host (two providers, or two roots in one
// provider) each acquire a session: do they get the same owner uid? Sessions
// that share a uid share every per-uid kernel quota (epoll watches, pipe
// pages, message queues) although they are different tenants' conversations.
const { manager } = require('./session-common');
const { execFileSync } = require('node:child_process');
async function main() {
  const a = manager();
  const b = manager();
  const sa = await a.sessions.acquire({ tenant: 'tenant-a', conversation: 'c' }, { id: 'x' });
  const sb = await b.sessions.acquire({ tenant: 'tenant-b', conversation: 'c' }, { id: 'y' });
  const ia = (await sa.exec(['/usr/bin/id', '-u'])).stdout.trim();
  const ib = (await sb.exec(['/usr/bin/id', '-u'])).stdout.trim();
  console.log(`session A (manager 1) ownerUid ${sa.ownerUid} runs as ${ia}; session B (manager 2) ownerUid ${sb.ownerUid} runs as ${ib}`);
  console.log(ia === ib ? 'OPEN: two tenants\' sessions run as one uid' : 'held: distinct uids');
  await sa.end();
  await sb.end();
  a.cleanup();
  b.cleanup();
}
main().catch((e) => { console.error(e); process.exit(1); });
