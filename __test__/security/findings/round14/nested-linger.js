'use strict';
// Probe: a TCP socket with unsendable data and SO_LINGER 3600 s is not passed
// over fd 3 itself but sits *in flight inside a Unix socket* (with its peer)
// that is passed over fd 3. The host neutralises what it receives (R4-4:
// SO_LINGER {1,0} on received sockets, closed on a detached thread), but the
// nested TCP socket is never seen: its last reference goes when the host
// closes the Unix socket, in that close(). Measures: wait() time, provider
// threads stuck in the close (wchan), provider fds (pipes passed in the same
// message after the Unix socket stay open behind the blocked close), and
// whether the provider can still spawn afterwards, across N runs. Control:
// the same TCP socket passed directly (R4-4's shape): neutralised.
// Usage: node nested-linger.js [N=3]; R14_EXTRA=120 R14_TRIES=8 node nested-linger.js 12
// exhausts a provider with RLIMIT_NOFILE 20000 (ERR_CORDON_SPAWN_FAILED "Too many open files").
// uid 65534: R14_PKG=<world-readable copy> R14_RELAY=<copy of cordon-egress-relay>.
const fs = require('node:fs');
const { py, cordon, snap, sleep, within } = require('./h');
// AF_INET needs a mediated policy (network none refuses socket(AF_INET)).
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const N = Number(process.argv[2] || 3);
/** Pipes passed in the same message after the nested socket (R14_EXTRA, default 0). */
const EXTRA = Number(process.env.R14_EXTRA || 0);
/** Attempts per run, each in a forked child (R14_TRIES, default 1). */
const TRIES = Number(process.env.R14_TRIES || 1);

const CODE = String.raw`
import socket, struct, sys, array, os, time, signal
mode = sys.argv[1]; extra_n = int(sys.argv[2]); tries = int(sys.argv[3])
ch = socket.socket(fileno=3)
def send(s, fds): s.sendmsg([b'z'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))])
def lingering():
    # X: loopback TCP socket with unsendable data and SO_LINGER 3600 s; P: its peer, never reading
    L = socket.socket(); L.bind(('127.0.0.1', 0)); L.listen(1)
    X = socket.socket(); X.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    X.connect(L.getsockname()); P, _ = L.accept(); L.close()
    P.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    X.setblocking(False)
    try:
        while True: X.send(b'x' * 65536)
    except BlockingIOError: pass
    X.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    return X, P
if mode == 'direct':                      # control: R4-4's shape, the TCP socket itself over fd 3
    X, P = lingering()
    send(ch, [X.fileno(), P.fileno()]); X.close(); P.close()
    ch.sendall(b'done\n'); sys.exit(0)
kids = []
for t in range(tries):
    pid = os.fork()
    if pid == 0:
        # each attempt in a child: if the child's own close turns out to be the last one, only it waits
        X, P = lingering()
        U1, U2 = socket.socketpair()
        send(U1, [X.fileno(), P.fileno()])   # X and P now live only in flight, inside U2's queue
        U1.close(); X.close(); P.close()
        fd = U2.detach()
        ch.setblocking(False)                # fill fd 3 first, so the host reads ~200 KiB before the descriptor message
        try:
            while True: ch.send(b'.' * 65536)
        except BlockingIOError: pass
        ch.setblocking(True)
        extra = [os.pipe() for _ in range(extra_n)]
        fl = [p[0] for p in extra] + [p[1] for p in extra]
        send(ch, (fl + [fd]) if sys.argv[4] == 'last' else ([fd] + fl))
        os.close(fd)                         # before the host has taken the message: the host's close is the last
        for p in extra: os.close(p[0]); os.close(p[1])
        os._exit(0)
    kids.append(pid)
    end = time.time() + 1
    while time.time() < end:                 # a child blocked in its own close: leave it
        if os.waitpid(pid, os.WNOHANG)[0]: break
        time.sleep(0.01)
ch.sendall(b'done\n')
os._exit(0)
`;

function stuck() {
  const out = [];
  for (const t of fs.readdirSync('/proc/self/task')) {
    let w = ''; try { w = fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8'); } catch {}
    let comm = ''; try { comm = fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(); } catch {}
    if (/sk_stream_wait_close|tcp_close|inet_release|wait_woken/.test(w)) out.push(`${t}:${comm}:wchan=${w}`);
    else { try { const st = fs.readFileSync(`/proc/self/task/${t}/stack`, 'utf8'); if (/sk_stream_wait_close/.test(st)) out.push(`${t}:${fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim()}:${st.split('\n').slice(0, 6).map((l) => l.replace(/^\[<0>\] /, '').replace(/\+.*/, '')).join(',')}`); } catch {} }
  }
  return out;
}

async function one(mode) {
  const ex = py(CODE, [mode, EXTRA, TRIES, process.env.R14_LAST ? 'last' : 'first'], { policy, ...relay });
  const failed = await Promise.race([ex.wait().then(() => null, (e) => e), sleep(15000).then(() => null)]);
  if (failed) return { mode, settled: true, ms: 0, spawnFailed: `${failed.code}: ${failed.message}`.slice(0, 160) };
  let got = '';
  ex.protocol.on('data', (d) => { got += d; });
  const t0 = Date.now();
  const ok = await within(ex.wait(), 15000);
  const ms = Date.now() - t0;
  let stopSettled = null, waitAfterStop = null;
  if (!ok) { stopSettled = await within(ex.stop(), 10000); waitAfterStop = await within(ex.wait(), 1000); }
  return { mode, settled: ok, ms, stopSettled, waitAfterStop, got: JSON.stringify(got.slice(-20)), rc: ok ? (await ex.wait()).returncode : null, stopReason: ok ? (await ex.wait()).receipt.stop.reason : null, err: ex.text.slice(-300) };
}

// Watchdog on a worker thread: if the JS (main) thread sits in tcp_close's wait, say so (fd 1 directly) and end the process.
const { Worker } = require('node:worker_threads');
const dog = new Worker(`
const fs = require('node:fs'); let since = 0;
setInterval(() => {
  let w = ''; let st = ''; try { w = fs.readFileSync('/proc/self/task/${process.pid}/wchan', 'utf8'); st = fs.readFileSync('/proc/self/task/${process.pid}/stack', 'utf8'); } catch {}
  if (/wait_woken|sk_stream_wait_close/.test(w) || /sk_stream_wait_close/.test(st)) {
    if (!since) since = Date.now();
    if (Date.now() - since > 3000) {
      fs.writeSync(1, 'FINDING: the provider JS thread has been blocked in tcp_close for ' + (Date.now() - since) + ' ms (wchan ' + w + '; ' + (fs.readdirSync('/proc/self/fd').length) + ' fds); stack: ' + st.split('\\n').slice(0, 9).map((l) => l.replace(/^\\[<0>\\] /, '').replace(/\\+.*/, '')).join(',') + '\\n');
      process.kill(${process.pid}, 'SIGKILL');
    }
  } else since = 0;
}, 250);
`, { eval: true });
dog.unref();
(async () => {
  const before = snap();
  const r = [];
  r.push(await one('direct'));            // control
  await sleep(500);
  const afterControl = { ...snap(), stuck: stuck().length };
  for (let i = 0; i < N; i++) {
    r.push(await one('nested'));
    const x = r[r.length - 1];
    console.error(`run ${i + 1}: ${x.spawnFailed ? 'SPAWN FAILED ' + x.spawnFailed : (x.settled ? 'settled' : 'unsettled')}; provider fds ${snap().fds}, threads ${snap().threads}`);
    if (x.spawnFailed) break;
  }
  await sleep(2000);
  const after = { ...snap(), stuck: stuck() };
  const brief = (x) => x.spawnFailed ? `${x.mode}:SPAWN-FAILED(${x.spawnFailed})` : `${x.mode}:${x.settled ? x.ms + 'ms' : 'UNSETTLED stop=' + x.stopSettled}${x.rc ? ' rc=' + x.rc : ''}`;
  console.log(JSON.stringify({ uid: process.getuid(), before, afterControl, runs: r.length > 12 ? r.slice(0, 6).map(brief).join(' ') + ' … ' + r.slice(-5).map(brief).join(' ') + ` (${r.filter((x) => x.settled && !x.spawnFailed).length}/${r.length} settled, ${r.filter((x) => x.spawnFailed).length} spawn failures)` : r.map(brief).join(' '), after: { ...after, stuck: after.stuck.length, example: after.stuck[0] } }, null, 1));
  // After the runs: can the provider still start a sandbox and open a file?
  let fresh = 'ok';
  try { const ex = py('print(1)'); ex.stderr.resume(); const rr = await ex.wait(); fresh = `rc ${rr.returncode}`; } catch (e) { fresh = `${e.code || ''} ${e.message}`.slice(0, 200); }
  let cm = 'ok';
  try { const c = cordon.createCodeMode({ tools: [] }); const run = await c.run('return 1', { mode: 'inspect' }); cm = run.ok ? 'ok' : `${run.error.kind}: ${run.error.message}`.slice(0, 160); await c.close(); } catch (e) { cm = `${e.code} ${e.message}`.slice(0, 160); }
  let open = 'ok'; try { fs.closeSync(fs.openSync('/dev/null', 'r')); } catch (e) { open = e.code; }
  console.log(JSON.stringify({ afterRuns: { fds: after.fds, threads: after.threads }, freshSpawn: fresh, codeModeRun: cm, openDevNull: open }));
  const leaked = after.stuck.length - afterControl.stuck;
  if (leaked > 0 || r.some((x) => !x.settled)) console.log(`FINDING: ${leaked} provider thread(s) blocked in tcp_close (SO_LINGER 3600 s) after ${N} nested-socket runs of ${TRIES} attempt(s); threads ${before.threads} -> ${after.threads}, fds ${afterControl.fds} -> ${after.fds}; a fresh spawn then: ${fresh}; a Code Mode run: ${cm}`);
  else console.log('held');
  process.exit(0);
})();
