'use strict';
// Round 15 helper: the package (R15_PKG or this tree), a python program in a sandbox with a
// mediated policy to a provider-side TCP server, provider thread/fd/RSS counts, stuck threads.
const path = require('node:path');
const fs = require('node:fs');
const net = require('node:net');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const PKG = process.env.R15_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const relay = process.env.R15_RELAY ? { networkRelayPath: process.env.R15_RELAY } : {};

/** A TCP server on 127.0.0.1 that accepts and reads everything (sink) or never reads (stall). */
async function server(kind = 'sink') {
  const socks = new Set();
  const s = net.createServer((c) => { socks.add(c); c.on('error', () => {}); c.on('close', () => socks.delete(c)); if (kind === 'sink') c.resume(); else if (kind === 'echo') c.pipe(c); else c.pause(); });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  s.port = s.address().port;
  s.shut = () => { for (const c of socks) c.destroy(); s.close(); };
  return s;
}
function policyFor(port, extra = {}) {
  return { ...cordon.readOnly(), network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }], ...extra } };
}
/** spawnIsolated of `python3 -c CODE args…`; stderr collected into ex.text. */
function py(code, args = [], opts = {}) {
  const ex = cordon.spawnIsolated(['/usr/bin/python3', '-c', code, ...args.map(String)], { policy: cordon.readOnly(), ...relay, ...opts });
  ex.text = '';
  ex.stderr.on('data', (d) => { ex.text += d; });
  ex.protocol.resume();
  return ex;
}
// -1: the provider itself is out of descriptors (EMFILE) at that moment
function fds() { try { return fs.readdirSync('/proc/self/fd').length; } catch (e) { if (e.code === 'EMFILE') return -1; throw e; } }
function threads() { try { return fs.readdirSync('/proc/self/task').length; } catch (e) { if (e.code === 'EMFILE') return -1; throw e; } }
function rssMiB() { try { return Math.round(process.memoryUsage().rss / 1048576); } catch (e) { if (e.code === 'EMFILE') return -1; throw e; } }
function snap() { return { fds: fds(), threads: threads(), rssMiB: rssMiB() }; }
/** Provider threads waiting in the kernel on something that is not their usual idle wait. */
function stuck(re = /wait_woken|sk_stream_wait_close|tcp_close|unix_|inet_/) {
  const out = [];
  for (const t of fs.readdirSync('/proc/self/task')) {
    try { const w = fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8'); if (re.test(w)) out.push(`${fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim()}:${w}`); } catch {}
  }
  return out;
}
function taskTable() { const out = {}; for (const t of fs.readdirSync('/proc/self/task')) { try { const c = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(); const w = fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8'); const k = `${c}:${w}`; out[k] = (out[k] || 0) + 1; } catch {} } return out; }
function delayMonitor() { const h = monitorEventLoopDelay({ resolution: 5 }); h.enable(); return { stop() { h.disable(); return { maxMs: Math.round(h.max / 1e6), p99Ms: Math.round(h.percentile(99) / 1e6) }; } }; }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function within(p, ms) { return Promise.race([Promise.resolve(p).then(() => true, () => true), sleep(ms).then(() => false)]); }
/** Time a fresh run to settle: plain (no network) or mediated to port. */
async function next(port) {
  const ex = py('import time; time.sleep(0.1)', [], port ? { policy: policyFor(port) } : {});
  const t0 = Date.now(); const ok = await within(ex.wait(), 10000);
  if (!ok) await within(ex.stop(), 5000);
  return ok ? Date.now() - t0 : 'UNSETTLED';
}
// Python prelude: fd-4 request, lingering TCP socket pair, send with rights.
const PY = String.raw`
import socket, struct, sys, array, os, time
def send(s, data, fds, flags=0): return s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else [], flags)
def mecq(c4, host, port):
    h = host.encode(); c4.send(struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(h)) + h)
    msg, anc, fl, _ = c4.recvmsg(64, socket.CMSG_SPACE(4 * 4))
    fds = []
    for lvl, typ, data in anc:
        a = array.array('i'); a.frombytes(data[:len(data) - len(data) % 4]); fds += list(a)
    return msg, fds
def linger_pair(secs=3600, fam=socket.AF_INET, proto=0, addr='127.0.0.1'):
    # fam/proto: AF_INET6 with '::1', or proto 262 (IPPROTO_MPTCP)
    L = socket.socket(fam, socket.SOCK_STREAM, proto); L.bind((addr, 0)); L.listen(1)
    X = socket.socket(fam, socket.SOCK_STREAM, proto); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    X.connect(L.getsockname()[:2]); P, _ = L.accept(); L.close()
    P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    X.setblocking(False)
    try:
        while True: X.send(b'x' * 65536)
    except BlockingIOError: pass
    X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, secs))
    return X, P
def log(*a): print(*a, file=sys.stderr, flush=True)
`;
module.exports = { PKG, cordon, relay, server, policyFor, py, fds, threads, rssMiB, snap, stuck, taskTable, delayMonitor, sleep, within, next, PY };
