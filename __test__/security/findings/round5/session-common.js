'use strict';
// Shared by the round-5 session repros: a manager over a fresh root, as root.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../../..');

function manager(extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-'));
  fs.chmodSync(dir, 0o711);
  const audits = [];
  const sessions = cordon.createSessionManager({
    secret: crypto.randomBytes(32),
    root: path.join(dir, 'sessions'),
    authorize: () => true,
    audit: (r) => audits.push(r),
    ...(process.env.R5_AGENT ? { agentPath: process.env.R5_AGENT } : {}),
    ...extra,
  });
  return { sessions, dir, audits, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

function withTimeout(promise, ms, label) {
  let timer;
  return Promise.race([
    promise.then((v) => ({ settled: true, value: v }), (e) => ({ settled: true, error: e })),
    new Promise((resolve) => { timer = setTimeout(() => resolve({ settled: false, label }), ms); }),
  ]).finally(() => clearTimeout(timer));
}

module.exports = { manager, withTimeout, cordon };
