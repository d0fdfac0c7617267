'use strict';
// R12-2 on `cordon host` (root, default ceilings): a tenant's run makes hard links in /tmp until its OOM kill, so
// its receipt reads containmentConfirmed: false. What does the client get, and what does the host keep
// (stateDir/workspaces, runs/ markers, admission)? Control: `true`.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-host-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { python3: '/usr/bin/python3', true: '/bin/true' }, admission: { maxSessions: 2 } }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = ''; host.stderr.on('data', (d) => { log += d; });
  const ls = (d) => { try { return fs.readdirSync(path.join(state, d)).length; } catch { return 'n/a'; } };
  const out = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const go = async (k, argv, files) => {
      const t = Date.now();
      try { const r = await remote.spawnIsolated(argv, { policy: remote.readOnly(), deadlineMs: 20000, workspace: files ? { files } : undefined }).wait(); out[k] = `rc ${r.returncode}, containmentConfirmed ${r.receipt.stop.containmentConfirmed}`; }
      catch (e) { out[k] = `${e.code} ${String(e.message).slice(0, 100)}`; }
      await new Promise((r) => setTimeout(r, 2000));
      console.log(`${k}: ${out[k]} (${Date.now() - t - 2000} ms); 2 s later workspaces/ ${ls('workspaces')}, runs/ ${ls('runs')}`);
    };
    await go('control', ['true']);
    await go('probe', ['python3', '-c', "import os\nos.close(os.open('/tmp/f', os.O_CREAT|os.O_WRONLY))\nn=0\nwhile True:\n  os.link('/tmp/f', '/tmp/%d' % n); n+=1"]);
    await go('after 1', ['true']); await go('after 2', ['true']); await go('after 3', ['true']);
    await remote.close();
    console.log(log.split('\n').filter((l) => /"event":"run"/.test(l)).map((l) => { const j = JSON.parse(l); return `host log run: ${j.program} ${j.outcome} error ${JSON.stringify(j.error)} stopReason ${j.stopReason}`; }).join('\n'));
    console.log(/containmentConfirmed false|UNCONFIRMED/.test(out.probe) && /^rc 0/.test(out.control) ? 'FINDING: the tenant chose an unconfirmed containment on the host' : 'held');
  } finally { host.kill('SIGTERM'); await new Promise((r) => host.once('exit', r)); fs.rmSync(dir, { recursive: true, force: true }); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
