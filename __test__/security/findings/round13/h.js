'use strict';
// shared helper for round-13 probes (round 12's h.js): a session manager on a fresh root, cleaned at the end
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createSessionManager, memorySessionStore } = require(process.env.R13_PKG || '../../../..');
async function withManager(opts, fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13-'));
  fs.chmodSync(dir, 0o711);
  const audits = [];
  let sessions;
  try {
    sessions = createSessionManager({
    secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: memorySessionStore(),
    authorize: (a, s) => a.tenant === s.tenant, audit: (r) => audits.push(r), ...opts,
    });
  } catch (e) { fs.rmSync(dir, { recursive: true, force: true }); throw e; }
  try { return await fn(sessions, audits, dir); }
  finally { await sessions.endAll().catch(() => {}); fs.rmSync(dir, { recursive: true, force: true }); }
}
const rss = () => Math.round(process.memoryUsage().rss / 1048576);
module.exports = { withManager, rss };
