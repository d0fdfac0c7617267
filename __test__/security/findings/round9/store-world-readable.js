'use strict';
// R9 (low): `sqliteSessionStore(file)` creates the database (and its -wal/-shm) with the
// process umask: 0644 here. docs/sessions.md's own setup makes the directory 0711 ("the
// sessions' own uids must traverse it") and names the file `sessions.db`, so any local
// user opens it by name and reads every session's record: tenant, conversation id,
// network allowlist, workspace path, lease.
//   node store-world-readable.js           uid 1 reads the store: VULNERABLE when it saw the scope
//   node store-world-readable.js control   the same after `chmod 600` of the three files: refused
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const cordon = require(path.resolve(__dirname, '../../../..'));

async function main() {
  const control = process.argv[2] === 'control';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-store-'));
  fs.chmodSync(dir, 0o711);                                   // as docs/sessions.md does
  const db = path.join(dir, 'sessions.db');
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.sqliteSessionStore(db), authorize: () => true });
  const s = await m.acquire({ tenant: 'acme', conversation: 'conv-of-ada-4711' }, { user: 'ada' });
  try {
    const files = fs.readdirSync(dir).filter((f) => f.startsWith('sessions.db'));
    console.log(files.map((f) => `${f} ${(fs.statSync(path.join(dir, f)).mode & 0o777).toString(8)}`).join(', '));
    if (control) for (const f of files) fs.chmodSync(path.join(dir, f), 0o600);
    const reader = `const { DatabaseSync } = require('node:sqlite');
      try { const d = new DatabaseSync(${JSON.stringify(db)}, { readOnly: true });
        console.log(JSON.stringify(d.prepare('select record from cordon_sessions').all().map((r) => JSON.parse(r.record).scope)));
      } catch (e) { console.log('refused: ' + e.message); }`;
    const r = spawnSync('setpriv', ['--reuid=1', '--regid=1', '--clear-groups', process.execPath, '--no-warnings', '-e', reader], { encoding: 'utf8', cwd: '/' });
    const out = (r.stdout + r.stderr).trim();
    console.log('uid 1 reading the store:', out);
    const read = out.includes('conv-of-ada-4711');
    console.log(control ? (read ? 'control FAILED' : 'control ok') : (read ? 'VULNERABLE: another local user reads every session\'s scope from the store' : 'held'));
  } finally {
    await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
