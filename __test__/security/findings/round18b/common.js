'use strict';
// Shared helpers for round 18b probes (black box: public API, real `cordon host`, real sandboxes).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn: cpSpawn } = require('child_process');
const PKG = process.env.CORDON_PKG || path.resolve(__dirname, '../../../..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nthreads = (pid = 'self') => { try { return fs.readdirSync(`/proc/${pid}/task`).length; } catch { return -1; } };
const nfds = (pid = 'self') => { try { return fs.readdirSync(`/proc/${pid}/fd`).length; } catch { return -1; } };
const rssKiB = (pid = 'self') => { try { return +/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]; } catch { return -1; } };
const { tlsMaterial, defaultPrograms, CORDON } = require(path.join(PKG, '__test__/remote-support'));

// A real `cordon host`: transport 'unix' | 'tls'; asNobody: the host process runs as uid 65534 (allowUids [0] so this
// root client may connect). Returns {target, child, pid, dir, log(), stop()}.
async function startHost({ tls = false, asNobody = false, config = {} } = {}) {
  const programs = { ...defaultPrograms(), py: '/usr/bin/python3' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r18b-host-'));
  fs.chmodSync(dir, 0o755);
  const run = path.join(dir, 'run');
  fs.mkdirSync(run, { mode: 0o700 });
  const state = path.join(dir, 'state');
  fs.mkdirSync(state, { mode: 0o711 }); fs.chmodSync(state, 0o711); // the run's uid traverses it to its workspace
  const socket = path.join(run, 'host.sock');
  let listen = { unix: socket }, tlsConf, material = null;
  if (tls) {
    const certs = path.join(dir, 'certs'); fs.mkdirSync(certs, { mode: 0o700 });
    material = tlsMaterial(certs);
    listen = { tcp: '127.0.0.1:0' };
    tlsConf = { cert: material.file('host.pem'), key: material.file('host.key'), clientCa: material.file('ca.pem') };
    if (asNobody) for (const f of fs.readdirSync(certs)) fs.chownSync(path.join(certs, f), 65534, 65534);
    if (asNobody) fs.chownSync(certs, 65534, 65534);
  }
  if (asNobody) { fs.chownSync(run, 65534, 65534); fs.chownSync(state, 65534, 65534); }
  const file = path.join(dir, 'host.json');
  const nodeDir = path.dirname(process.execPath);
  fs.writeFileSync(file, JSON.stringify({
    listen, tls: tlsConf, stateDir: state, ...(asNobody && !tls ? { allowUids: [0] } : {}),
    programs,
    extra: [{ path: nodeDir, access: 'read' }],
    ...config,
  }));
  fs.chmodSync(file, 0o644);
  const logf = path.join(dir, 'host.log');
  const fd = fs.openSync(logf, 'w'); if (asNobody) fs.fchownSync(fd, 65534, 65534);
  const child = cpSpawn(CORDON, ['host', '--config', file], { stdio: ['ignore', fd, fd], cwd: '/', ...(asNobody ? { uid: 65534, gid: 65534 } : {}) });
  fs.closeSync(fd);
  const log = () => fs.readFileSync(logf, 'utf8');
  // a probe killed by timeout(1) still ends its host and removes its files
  const bail = () => { try { child.kill('SIGKILL'); } catch {} try { fs.rmSync(dir, { recursive: true, force: true }); } catch {} };
  process.once('exit', bail);
  for (const sig of ['SIGTERM', 'SIGINT']) process.once(sig, () => { bail(); process.exit(130); });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const ex = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const k = setTimeout(() => child.kill('SIGKILL'), 8000);
      await ex; clearTimeout(k);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const t0 = Date.now();
  let m;
  while (!(m = /listening on (\S+)/.exec(log()))) {
    if (child.exitCode !== null || Date.now() - t0 > 20000) { const l = log(); await stop(); throw new Error('host did not start: ' + l); }
    await sleep(20);
  }
  const target = material ? { url: m[1], tls: { ca: material.ca, ...material.client } } : { socket };
  return { target, child, pid: child.pid, dir, log, stop };
}

// Counts every protocol write's callback outcome.
function counter(ex) {
  const p = ex.protocol; p.on('error', () => {});
  const st = { ok: 0, err: 0, pending: 0, errs: new Set() };
  const w = (n, fill = 97) => new Promise((res) => {
    st.pending++;
    p.write(Buffer.alloc(n, fill), (e) => { st.pending--; if (e) { st.err += n; st.errs.add(e.code || String(e)); } else st.ok += n; res(!e); });
  });
  return { p, st, w };
}
function missing(ex, st, r) {
  const b = r.receipt.bytes;
  return st.ok - b.protocolIn - b.protocolInDiscarded - ex.protocolDroppedBytes;
}
const descendants = (pid) => {
  // every process below pid (bwrap, sandboxes)
  const kids = new Map();
  for (const d of fs.readdirSync('/proc')) { if (!/^\d+$/.test(d)) continue; try { const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); const pp = +s.slice(s.lastIndexOf(')') + 2).split(' ')[1]; if (!kids.has(pp)) kids.set(pp, []); kids.get(pp).push(+d); } catch {} }
  const out = []; const q = [pid];
  while (q.length) { const x = q.pop(); for (const k of kids.get(x) || []) { out.push(k); q.push(k); } }
  return out;
};
module.exports = { PKG, sleep, nthreads, nfds, rssKiB, startHost, counter, missing, descendants };
