'use strict';
// Shared helpers for round 16b probes (public API only).
const path = require('path');
const fs = require('fs');
const net = require('net');
const PKG = process.env.CORDON_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
function threads() {
  const out = {};
  for (const t of fs.readdirSync('/proc/self/task')) {
    let n = '?'; try { n = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(); } catch {}
    out[n] = (out[n] || 0) + 1;
  }
  return out;
}
function closerWchans() {
  const w = [];
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      const n = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim();
      if (/closer|passed/.test(n)) w.push(n + ':' + fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8').trim());
    } catch {}
  }
  return w;
}
function nthreads() { return fs.readdirSync('/proc/self/task').length; }
function nfds() { return fs.readdirSync('/proc/self/fd').length; }
function cpuTicks() { const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' '); return +f[11] + +f[12]; }
async function tcpServer() {
  const conns = new Set();
  const s = net.createServer((c) => { conns.add(c); c.on('error', () => {}); c.on('close', () => conns.delete(c)); c.pipe(c); });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return { port: s.address().port, close: () => { for (const c of conns) c.destroy(); s.close(); } };
}
function policyFor(port, extra = {}) {
  return {
    ...cordon.readOnly(),
    network: { mode: 'mediated', frontend: 'fd4', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] },
    ...extra,
  };
}
function collect(stream) { const b = []; stream.on('data', (d) => b.push(d)); return () => Buffer.concat(b).toString(); }
// python prelude: request over fd 4
const PY_PRELUDE = `
import socket, struct, os, sys, time, array
fd4 = socket.socket(fileno=4)
def req(port, host=b'127.0.0.1', anc=None, raw=None):
    m = raw if raw is not None else struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(host)) + host
    if anc: fd4.sendmsg([m], anc)
    else: fd4.send(m)
def reply():
    fds = array.array('i')
    msg, ancdata, flags, addr = fd4.recvmsg(64, socket.CMSG_LEN(16*4))
    for lvl, typ, data in ancdata:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - (len(data) % 4)])
    return msg, list(fds)
def rights(fds):
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))]
`;
module.exports = { cordon, PKG, threads, closerWchans, nthreads, nfds, cpuTicks, tcpServer, policyFor, collect, PY_PRELUDE };
