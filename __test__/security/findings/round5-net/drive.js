'use strict';
// Round 5 (issue 19), black box: drives provider.js (root, and uid 65534 with
// AS=nobody) through one scenario at a time and measures the PROVIDER from
// /proc/<pid>: CPU (ms per s) while every stream is stalled, threads, fds,
// RSS; then stop() → wait() settled. Loopback upstreams only.
// Usage (root, after `npm run build`):
//   node drive.js <scenario>[,<scenario>…] [root|nobody|both]
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const up = require('./upstreams');

const N = Number(process.env.N || 32);
const SAMPLE_MS = Number(process.env.SAMPLE_MS || 3000);
const TICK_MS = 1000 / 100; // USER_HZ

const PRELUDE = `
import socket, struct, os, time, sys, threading
def px(port, host='127.0.0.1', wait=True):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT %s:%d HTTP/1.1\\r\\n\\r\\n' % (host.encode(), port))
    if not wait: return s
    b = b''
    while b'\\r\\n\\r\\n' not in b:
        c = s.recv(1)
        if not c: raise Exception('closed ' + repr(b))
        b += c
    if b' 200 ' not in b.split(b'\\r\\n')[0]: raise Exception(repr(b))
    return s
CH = None
def f4(port, host='127.0.0.1'):
    global CH
    if CH is None: CH = socket.socket(fileno=4)
    h = host.encode()
    CH.send(struct.pack('>IBBHH', 0x4d454351, 1, 1, port, len(h)) + h)
    msg, fds, flags, addr = socket.recv_fds(CH, 8, 1)
    if msg[5] != 0 or not fds: raise Exception('fd4 status %d' % msg[5])
    return socket.socket(fileno=fds[0])
def fill(s):
    s.setblocking(False); n = 0
    try:
        while True: n += s.send(b'x' * 65536)
    except (BlockingIOError, ConnectionError, OSError): pass
    return n
KEEP = []

def linger_pair():
    l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(1)
    snd = socket.create_connection(l.getsockname()); rcv, _ = l.accept()
    fill(snd)
    snd.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    KEEP.append(l)
    return snd, rcv
def park_fd4(n=320):
    # never read the replies: the engine's replies fill our queue and its fd-4 send parks
    global CH
    if CH is None: CH = socket.socket(fileno=4)
    CH.setblocking(False)
    h = b'127.0.0.1'; sent = 0
    for i in range(n):
        try: CH.send(struct.pack('>IBBHH', 0x4d454351, 1, 1, 1, len(h)) + h); sent += 1
        except BlockingIOError: time.sleep(0.01)
    return sent
def hold():
    print('READY', len(KEEP), flush=True)
    while True: time.sleep(100)
`;

// Each scenario: upstream modes it needs (ports substituted as @MODE@) and the program body.
const SCENARIOS = {
  idle: { ups: [], code: 'hold()' },
  'down-stall-proxy': { ups: ['flood'], code: `for i in range(${N}): KEEP.append(px(@flood@))\ntime.sleep(2)\nhold()` },
  'up-stall-proxy': { ups: ['sink'], code: `for i in range(${N}):\n    s = px(@sink@); fill(s); KEEP.append(s)\ntime.sleep(1)\nfor s in KEEP: fill(s)\nhold()` },
  'bidi-stall-proxy': { ups: ['floodsink'], code: `for i in range(${N}):\n    s = px(@floodsink@); fill(s); KEEP.append(s)\ntime.sleep(1)\nfor s in KEEP: fill(s)\nhold()` },
  'rst-while-client-stalled': { ups: ['floodrst'], code: `for i in range(${N}): KEEP.append(px(@floodrst@))\ntime.sleep(2)\nhold()` },
  'shutwr-bidi-stall': { ups: ['floodsink'], code: `for i in range(${N}):\n    s = px(@floodsink@); fill(s); s.shutdown(socket.SHUT_WR); KEEP.append(s)\ntime.sleep(1)\nhold()` },
  'up-halfclose': { ups: ['half'], code: `for i in range(${N}):\n    s = px(@half@); fill(s); KEEP.append(s)\ntime.sleep(1)\nfor s in KEEP: fill(s)\nhold()` },
  'up-rstnow': { ups: ['rstnow'], code: `for i in range(${N}):\n    try:\n        s = px(@rstnow@); fill(s); KEEP.append(s)\n    except Exception as e: KEEP.append(str(e)[:40])\ntime.sleep(1)\nhold()` },
  'fd4-close-with-pending': { ups: ['sink'], code: `for i in range(${N}):\n    s = f4(@sink@); fill(s); s.close()\ntime.sleep(1)\nhold()` },
  'fd4-request-then-close': { ups: ['slow'], code: `for i in range(${N}):\n    s = f4(@slow@); s.sendall(b'GET / HTTP/1.1\\r\\n\\r\\n'); s.close()\ntime.sleep(4)\nhold()` },
  'fd4-bidi-stall': { ups: ['floodsink'], code: `for i in range(${N}):\n    s = f4(@floodsink@); fill(s); KEEP.append(s)\ntime.sleep(1)\nfor s in KEEP: fill(s)\nhold()` },
  'fd4-shutwr-not-reading': { ups: ['floodsink'], code: `for i in range(${N}):\n    s = f4(@floodsink@); fill(s); s.shutdown(socket.SHUT_WR); KEEP.append(s)\ntime.sleep(1)\nhold()` },
  'handshake-stall': { ups: [], code: `for i in range(${N}):\n    s = socket.create_connection(('127.0.0.1', 3128)); s.sendall(b'CONNECT 127.0.0.1:'); KEEP.append(s)\nhold()` },
  'clienthello-stall': { ups: ['echo'], code: `for i in range(${N}):\n    s = px(@echo@, 'localhost'); s.sendall(b'\\x16\\x03\\x01\\x02\\x00\\x01'); KEEP.append(s)\nhold()` },
  'connect-stall-proxy': { ups: ['backlog'], code: `for i in range(${N}): KEEP.append(px(@backlog@, wait=False))\ntime.sleep(0.5)\nhold()` },
  'connect-stall-fd4': { ups: ['backlog'], code: `CH = socket.socket(fileno=4)\nh=b'127.0.0.1'\nCH.send(struct.pack('>IBBHH', 0x4d454351, 1, 1, @backlog@, len(h)) + h)\ntime.sleep(0.5)\nhold()` },
  'linger-queued-fd4': { ups: [], code: `sent = park_fd4(300)\ntime.sleep(1)\nsnd, rcv = linger_pair()\ntry:\n    socket.send_fds(CH, [b'MECQ'], [snd.fileno(), rcv.fileno()]); print('queued sent=%d' % sent, flush=True)\nexcept Exception as e: print('send_fds', e, flush=True)\nsnd.close(); rcv.close()\nhold()` },
  'linger-stream-queued': { ups: ['sink'], code: `s = f4(@sink@)\ns.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)\nfill(s); time.sleep(1); fill(s)\ns.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 200000)\nsnd, rcv = linger_pair()\ntry:\n    socket.send_fds(s, [b'x'], [snd.fileno(), rcv.fileno()]); print('queued on stream', flush=True)\nexcept Exception as e: print('send_fds', e, flush=True)\nsnd.close(); rcv.close(); KEEP.append(s)\nhold()` },
  'linger-stream-read': { ups: ['echo'], code: `s = f4(@echo@)\nsnd, rcv = linger_pair()\nsocket.send_fds(s, [b'x'], [snd.fileno(), rcv.fileno()]); snd.close(); rcv.close(); KEEP.append(s)\ntime.sleep(0.5)\nhold()` },
  'receipt-flood-proxy': { ups: ['echo'], code: `for i in range(4300):\n    try:\n        j = socket.create_connection(('127.0.0.1', 3128)); j.sendall(b'JUNK\\r\\n\\r\\n'); j.recv(100); j.close()\n    except Exception: pass\ns = px(@echo@); s.sendall(b'real'); print('echoed', s.recv(10), flush=True); KEEP.append(s)\nhold()` },
  'refusal-cpu-proxy': { ups: ['echo'], code: `for i in range(8): KEEP.append(px(@echo@))\nprint('READY', flush=True)\nn = 0; end = time.time() + 8\nwhile time.time() < end:\n    try:\n        j = socket.create_connection(('127.0.0.1', 3128)); j.recv(10); j.close(); n += 1\n    except Exception: pass\nprint('attempts', n, flush=True)\nhold()` },
  'refusal-cpu-fd4': { ups: ['echo'], code: `CH = socket.socket(fileno=4)\nprint('READY', flush=True)\nn = 0; end = time.time() + 8\nwhile time.time() < end:\n    CH.send(b'junk'); CH.recv(8); n += 1\nprint('attempts', n, flush=True)\nhold()` },
  'linger-queued-fd4-exit': { ups: [], code: `sent = park_fd4(300)\ntime.sleep(1)\nsnd, rcv = linger_pair()\nsocket.send_fds(CH, [b'MECQ'], [snd.fileno(), rcv.fileno()])\nsnd.close(); rcv.close()\nprint('READY', flush=True)\ntime.sleep(0.3)\nos._exit(0)` },
  'addr-tricks': { ups: ['echo', 'decoy'], code: `
def socks(atyp, addr, port):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=3)
    s.sendall(b'\\x05\\x01\\x00'); s.recv(2)
    s.sendall(b'\\x05\\x01\\x00' + bytes([atyp]) + addr + struct.pack('>H', port))
    r = s.recv(10); s.close(); return r[1] if r else 'closed'
def mecq(host, port, ver=1, proto=1):
    global CH
    if CH is None: CH = socket.socket(fileno=4)
    CH.send(struct.pack('>IBBHH', 0x4d454351, ver, proto, port, len(host)) + host)
    msg, fds, flags, addr = socket.recv_fds(CH, 8, 1)
    for f in fds: os.close(f)
    return msg[5]
D = @decoy@; A = @echo@
tests = {
 'socks-v4-decoy': lambda: socks(1, bytes([127,0,0,1]), D),
 'socks-v6-mapped': lambda: socks(4, bytes(10) + b'\\xff\\xff' + bytes([127,0,0,1]), A),
 'socks-v6-siit': lambda: socks(4, bytes(8) + b'\\xff\\xff\\x00\\x00' + bytes([127,0,0,1]), A),
 'socks-v6-compat': lambda: socks(4, bytes(12) + bytes([127,0,0,1]), A),
 'socks-name-trailing-dot-decoy': lambda: socks(3, bytes([10]) + b'127.0.0.1.', D),
 'socks-name-nul': lambda: socks(3, bytes([14]) + b'127.0.0.1\\x00abcd', A),
 'socks-name-v6-literal': lambda: socks(3, bytes([16]) + b'::ffff:127.0.0.1', A),
 'socks-name-bracket': lambda: socks(3, bytes([18]) + b'[::ffff:127.0.0.1]', A),
 'socks-name-localhost-decoy': lambda: socks(3, bytes([9]) + b'localhost', D),
 'socks-name-upper': lambda: socks(3, bytes([9]) + b'127.0.0.1'.upper(), A),
 'socks-port0': lambda: socks(1, bytes([127,0,0,1]), 0),
 'fd4-decoy': lambda: mecq(b'127.0.0.1', D),
 'fd4-nul': lambda: mecq(b'127.0.0.1\\x00x', A),
 'fd4-mapped': lambda: mecq(b'::ffff:127.0.0.1', A),
 'fd4-mapped-bracket': lambda: mecq(b'[::ffff:7f00:1]', A),
 'fd4-nat64': lambda: mecq(b'64:ff9b::7f00:1', A),
 'fd4-octal': lambda: mecq(b'0177.0.0.1', A),
 'fd4-hex': lambda: mecq(b'0x7f000001', A),
 'fd4-int': lambda: mecq(b'2130706433', A),
 'fd4-trailing-dot': lambda: mecq(b'127.0.0.1.', A),
 'fd4-trailing-dot-decoy': lambda: mecq(b'127.0.0.1.', D),
 'fd4-space': lambda: mecq(b' 127.0.0.1', A),
 'fd4-ver2': lambda: mecq(b'127.0.0.1', A, ver=2),
 'fd4-udp': lambda: mecq(b'127.0.0.1', A, proto=2),
 'fd4-ok': lambda: mecq(b'127.0.0.1', A),
 'fwd-host-decoy': lambda: (lambda s: (s.sendall(('GET http://127.0.0.1:%d/ HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n\\r\\nGET http://127.0.0.1:%d/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' % (A, D, D)).encode()), time.sleep(0.5), s.recv(200)))(socket.create_connection(('127.0.0.1', 3128)))[2][:40],
 'fwd-userinfo-decoy': lambda: (lambda s: (s.sendall(('GET http://127.0.0.1:%d@127.0.0.1:%d/ HTTP/1.1\\r\\n\\r\\n' % (A, D)).encode()), time.sleep(0.5), s.recv(200)))(socket.create_connection(('127.0.0.1', 3128)))[2][:40],
}
for k, f in tests.items():
    try: print('T', k, f(), flush=True)
    except Exception as e: print('T', k, 'EXC', e, flush=True)
hold()` },
  'fd4-tiny-writes': { ups: ['discard'], code: `for i in range(4): KEEP.append(f4(@discard@))\nprint('READY', flush=True)\nt0 = os.times(); n = 0; end = time.time() + 4\nwhile time.time() < end:\n    for s in KEEP: s.send(b'x'); n += 1\nt1 = os.times()\nprint('writes', n, 'program cpu ms', round((t1.user + t1.system - t0.user - t0.system) * 1000), flush=True)\nhold()` },
  'proxy-tiny-writes': { ups: ['discard'], code: `for i in range(4): KEEP.append(px(@discard@))\nprint('READY', flush=True)\nt0 = os.times(); n = 0; end = time.time() + 4\nwhile time.time() < end:\n    for s in KEEP: s.send(b'x'); n += 1\nt1 = os.times()\nprint('writes', n, 'program cpu ms', round((t1.user + t1.system - t0.user - t0.system) * 1000), flush=True)\nhold()` },
  'linger-engine-socket': { ups: [], code: `import glob\npaths = glob.glob('/.cordon/egress/*')\nprint('engine sockets', paths, flush=True)\nfor k in range(int(os.environ.get('K', '1')) if False else 1):\n    snd, rcv = linger_pair()\n    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); u.connect(paths[0])\n    u.sendall(b'JUNK\\r\\n\\r\\n')\n    socket.send_fds(u, [b'x'], [snd.fileno(), rcv.fileno()])\n    snd.close(); rcv.close(); KEEP.append(u)\ntime.sleep(0.5)\nhold()` },
  'linger-engine-quota': { ups: [], code: `import glob\npath = (glob.glob('/.cordon/egress/*') or ['/.cordon/egress/engine.sock'])[0]\nj = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); j.connect(path); j.sendall(b'JUNK\\r\\n\\r\\n'); j.recv(10); j.close()\nfor k in range(2):\n    snd, rcv = linger_pair()\n    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); u.connect(path)\n    socket.send_fds(u, [b'x'], [snd.fileno(), rcv.fileno()])\n    snd.close(); rcv.close(); KEEP.append(u)\ntime.sleep(0.5)\nhold()` },
  'linger-engine-default': { ups: [], code: `import glob\npath = (glob.glob('/.cordon/egress/*') or ['/.cordon/egress/engine.sock'])[0]\nCH = socket.socket(fileno=4)\nfor i in range(256):\n    CH.send(b'junk'); CH.recv(8)\nfor k in range(int(@K@)):\n    snd, rcv = linger_pair()\n    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); u.connect(path)\n    socket.send_fds(u, [b'x'], [snd.fileno(), rcv.fileno()])\n    snd.close(); rcv.close(); KEEP.append(u)\n    time.sleep(0.3)\nhold()` },
  'drip-down': { ups: ['drip'], code: `import select\nfor i in range(${N}): KEEP.append(px(@drip@))\nprint('READY', flush=True)\nwhile True:\n    for s in select.select(KEEP, [], [])[0]: s.recv(65536)` },
};

function proc(pid) {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuTicks: Number(f[11]) + Number(f[12]),
    threads: Number(/^Threads:\s+(\d+)/m.exec(status)[1]),
    rssKiB: Number(/^VmRSS:\s+(\d+)/m.exec(status)[1]),
    fds: fs.readdirSync(`/proc/${pid}/fd`).length,
  };
}

/** Provider threads not sleeping in the usual places: name + wchan. */
function tasks(pid) {
  const out = [];
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
      const wchan = fs.readFileSync(`/proc/${pid}/task/${t}/wchan`, 'utf8').trim();
      let stack = '';
      try { stack = fs.readFileSync(`/proc/${pid}/task/${t}/stack`, 'utf8').split('\n').slice(0, 4).map((l) => l.replace(/^\[<[0-9a-f]+>\] /, '').replace(/\+.*/, '')).join('<'); } catch {}
      out.push(`${comm}:${wchan}${stack ? ' [' + stack + ']' : ''}`);
    } catch {}
  }
  return out;
}

function lines(stream, onLine) {
  let buf = '';
  stream.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) { onLine(buf.slice(0, i)); buf = buf.slice(i + 1); }
  });
}

async function runScenario(name, who) {
  const sc = SCENARIOS[name];
  const servers = {};
  for (const m of sc.ups) servers[m] = m === 'backlog' ? await up.backlog() : await up.start(m === 'decoy' ? 'echo' : m);
  let code = PRELUDE + sc.code.replaceAll('@K@', process.env.K || '2');
  for (const [m, s] of Object.entries(servers)) code = code.replaceAll(`@${m}@`, String(s.port));
  const allow = Object.entries(servers).filter(([m]) => m !== 'decoy').map(([, s]) => s).map((s) => ({ protocol: 'tcp', host: '127.0.0.1', port: s.port, allowPrivateAddresses: true }));
  if (servers.echo) allow.push({ protocol: 'tcp', host: 'localhost', port: servers.echo.port, allowPrivateAddresses: true, requireTlsSni: true });
  if (allow.length === 0) allow.push('example.com:443');
  const scenario = { code, allow, resources: { networkConcurrentStreams: Math.max(32, N + 2), networkStreams: Math.max(256, 4 * N), ...(JSON.parse(process.env.RES || '{}')) }, runs: Number(process.env.RUNS || 1) };
  const env = { PATH: process.env.PATH, R5: JSON.stringify(scenario), R5_AFTER: process.env.R5_AFTER || '', R5_RELAY: process.env.R5_RELAY || '' };
  const ids = who === 'nobody' ? { uid: 65534, gid: 65534 } : {};
  const child = spawn(process.execPath, [path.join(__dirname, 'provider.js')], { cwd: '/', env, stdio: ['pipe', 'pipe', 'inherit'], ...ids });
  const events = [];
  let wake = () => {};
  lines(child.stdout, (l) => { try { events.push(JSON.parse(l)); } catch { events.push({ raw: l }); } wake(); });
  const waitFor = (pred, ms) => new Promise((res) => {
    const t = setTimeout(() => res(null), ms);
    const check = () => { const e = events.find(pred); if (e) { clearTimeout(t); res(e); } };
    wake = check; check();
  });
  const result = { scenario: name, who, N };
  const ready = await waitFor((e) => e.ev === 'ready', Number(process.env.READY_MS || 90_000));
  if (!ready || !ready.ok.every(Boolean)) {
    result.error = 'not ready';
    result.detail = ready;
    child.stdin.write('stop\n');
  } else {
    const a = proc(child.pid);
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
    const b = proc(child.pid);
    const dt = Date.now() - t0;
    result.providerCpuMsPerS = +(((b.cpuTicks - a.cpuTicks) * TICK_MS) / (dt / 1000)).toFixed(1);
    Object.assign(result, { threads: b.threads, fds: b.fds, rssKiB: b.rssKiB });
    result.upstreamConns = Object.fromEntries(Object.entries(servers).map(([m, s]) => [m, s.conns.count]));
    child.stdin.write('stop\n');
  }
  const runs = Number(process.env.RUNS || 1);
  const settledAll = [];
  for (let k = 0; k < runs; k++) {
    const s = await waitFor((e) => e.ev === 'settled' && e.run === k && !settledAll.includes(e), Number(process.env.PATIENCE_MS || 20_000));
    if (!s) { result.settle = `NOT SETTLED within ${process.env.PATIENCE_MS || 20_000} ms of stop()`; try { const p = proc(child.pid); Object.assign(result, { afterThreads: p.threads, afterFds: p.fds, blockedTasks: tasks(child.pid) }); } catch {} break; }
    settledAll.push(s);
  }
  if (settledAll.length) {
    result.stopToSettledMs = settledAll.map((s) => s.stopToSettledMs);
    const s0 = settledAll[0];
    Object.assign(result, { returncode: s0.returncode, signal: s0.signal, receipts: s0.receipts, dropped: s0.dropped, allowed: s0.allowedReceipts });
    if (process.env.TAIL) result.tail = s0.tail;
  }
  if (process.env.R5_AFTER) {
    for (let k = 0; k < Number(process.env.R5_AFTER); k++) {
      const a = await waitFor((e) => e.ev === 'after' && e.k === k, 60_000);
      (result.after ||= []).push(a ? `${a.result} ${a.ms}ms` : 'no answer');
    }
    // Is the provider's JS event loop alive? It answers SIGUSR2 with its 100 ms tick count.
    const before = events.length;
    child.kill('SIGUSR2');
    const b1 = await waitFor((e, i) => e.ev === 'beats', 3000);
    result.eventLoop = b1 ? `answers (ticks ${b1.beats})` : 'NO ANSWER to SIGUSR2 within 3 s (event loop blocked)';
    try { result.mainThread = fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/stack`, 'utf8').split('\n').slice(0, 6).map((l) => l.replace(/^\[<[0-9a-f]+>\] /, '').replace(/\+.*/, '')).join('<'); } catch {}
    try { result.tasksAfter = tasks(child.pid).filter((t) => !/ep_poll|futex|do_epoll|hrtimer|do_sys_poll|pipe_read/.test(t)); } catch {}
  }
  child.kill('SIGKILL');
  for (const s of Object.values(servers)) await s.close();
  return result;
}

(async () => {
  const names = (process.argv[2] || 'idle').split(',');
  const whoArg = process.argv[3] || 'both';
  const whos = whoArg === 'both' ? ['root', 'nobody'] : [whoArg];
  for (const name of names) {
    for (const who of whos) {
      const r = await runScenario(name, who);
      console.log(JSON.stringify(r));
    }
  }
  process.exit(0);
})();
