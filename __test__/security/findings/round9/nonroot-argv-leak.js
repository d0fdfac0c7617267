'use strict';
// R9 (low): a non-root provider runs each file operation as a process whose argv carries
// the operation and the workspace path the actor/model named (`cordon-exec-agent
// session-files <holder pid> <start> <uid> <sessions root>/<key> read <path> <maxBytes>`),
// and the holder's argv carries the sessions root and session key. /proc/<pid>/cmdline is
// world-readable here (no hidepid), so ANY local user (uid 1 below) sees which files of
// which session are read or written, as they happen.
//   node nonroot-argv-leak.js            run as root: starts a uid-65534 provider that reads
//                                        `customer-4711-medical.pdf` in a loop, and a uid-1
//                                        watcher of /proc; VULNERABLE when uid 1 saw the name
//   node nonroot-argv-leak.js control    the same with a root provider (file tools in-process)
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const pkg = path.resolve(__dirname, '../../../..');
const NAME = 'customer-4711-medical.pdf';

async function provider(dir) {
  const cordon = require(pkg);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true, workspaceBytes: 4 << 20 });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  try {
    await s.writeFile(NAME, 'x');
    const until = Date.now() + 4000;
    while (Date.now() < until) await s.readFile(NAME);
  } finally { await s.end(); }
}

const WATCH = `
const fs = require('fs'); const seen = new Set(); const until = Date.now() + 6000;
(function scan() {
  for (const p of fs.readdirSync('/proc')) { if (!/^\\d+$/.test(p)) continue;
    try { const c = fs.readFileSync('/proc/' + p + '/cmdline', 'utf8'); if (c.includes('${NAME}') && Number(p) !== process.pid) seen.add(c.split('\\0').join(' ')); } catch {} }
  if (Date.now() < until) setImmediate(scan); else { console.log(JSON.stringify([...seen].slice(0, 3))); }
})();`;

async function main() {
  if (process.argv[2] === '--provider') return provider(process.argv[3]);
  const control = process.argv[2] === 'control';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-argv-'));
  fs.chmodSync(dir, 0o711);
  if (!control) fs.chownSync(dir, 65534, 65534);
  const watcher = spawn('setpriv', ['--reuid=1', '--regid=1', '--clear-groups', process.execPath, '-e', WATCH], { stdio: ['ignore', 'pipe', 'inherit'], cwd: '/' });
  let out = ''; watcher.stdout.on('data', (d) => { out += d; });
  const args = [__filename, '--provider', dir];
  const prov = control ? spawn(process.execPath, args, { stdio: 'inherit' })
    : spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...args], { stdio: ['ignore', 'inherit', 'pipe'], cwd: '/' });
  await new Promise((r) => prov.on('exit', r));
  await new Promise((r) => watcher.on('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
  const seen = JSON.parse(out || '[]');
  console.log(`${control ? 'root' : 'uid-65534'} provider; uid 1 saw ${seen.length ? seen.length + ' distinct command lines, e.g.: ' + seen[0] : 'nothing'}`);
  console.log(control ? (seen.length ? 'control FAILED' : 'control ok') : (seen.length ? 'VULNERABLE: another local user reads the session\'s file names from /proc' : 'held'));
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
