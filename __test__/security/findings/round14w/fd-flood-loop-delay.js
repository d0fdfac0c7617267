'use strict';
// R14w: does a sandbox that sends fd 3 messages carrying SCM_RIGHTS descriptors
// (1 byte + 253 descriptors each, as fast as it can) stall the provider's JS
// event loop now that fd 3 is read — and every passed descriptor neutralised
// (setsockopt + a closer thread per message) — on the JS thread?
// Measures perf_hooks.monitorEventLoopDelay and a setImmediate tick count during
// 4 s of: idle (control), a 1-byte-message flood without descriptors (control),
// and the descriptor flood. Prints FINDING when the descriptor flood's p99 delay
// is > 5x the plain flood's and > 20 ms, or JS-thread CPU is much higher.
const PKG = process.env.R14W_PKG || require('node:path').resolve(__dirname, '../../../..');
const { spawnIsolated, readOnly } = require(PKG);
const { monitorEventLoopDelay } = require('node:perf_hooks');
const fs = require('node:fs');

const SECS = 4;
const t0s = new Map();
const py = (fds) => `
import socket, os, array, time
s = socket.socket(fileno=3)
s.setblocking(True)
fd = os.open('/dev/null', os.O_RDONLY)
anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [fd] * ${fds}))] if ${fds} else []
end = time.time() + ${SECS}
n = 0
refused = 0
while time.time() < end:
    try:
        s.sendmsg([b'x'], anc)
        n += 1
    except OSError as e:
        refused += 1  # ETOOMANYREFS: the in-flight bound; the host has not received them yet
os.write(2, b'sent %d refused %d\\n' % (n, refused))
`;

function jsThreadCpuMs() {
  // utime+stime of the main thread (tid == pid)
  const st = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(st[11]) + Number(st[12])) * 10;
}
function threads() { return fs.readdirSync('/proc/self/task').length; }

async function scenario(name, argv) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  let ticks = 0; let on = true;
  const spin = () => { ticks++; if (on) setImmediate(spin); };
  const cpu0 = jsThreadCpuMs();
  let maxThreads = threads();
  const tw = setInterval(() => { maxThreads = Math.max(maxThreads, threads()); }, 50);
  const started = Date.now();
  h.enable(); setImmediate(spin);
  const e = spawnIsolated(argv, { policy: readOnly() });
  let got = 0; e.protocol.on('data', (c) => { got += c.length; });
  let err = ''; e.stderr.on('data', (c) => { err += c; });
  const r = await e.wait();
  on = false; h.disable(); clearInterval(tw);
  const cpu = jsThreadCpuMs() - cpu0;
  const out = { name, rc: r.returncode, got, protocolOut: r.receipt.bytes.protocolOut, sent: err.trim(),
    p50: +(h.percentile(50) / 1e6).toFixed(2), p99: +(h.percentile(99) / 1e6).toFixed(2), max: +(h.max / 1e6).toFixed(2),
    immediatesPerSec: Math.round(ticks / ((Date.now() - started) / 1000)), jsThreadCpuMs: cpu, maxThreads };
  console.log(JSON.stringify(out));
  return out;
}

(async () => {
  const idle = await scenario('idle', ['/bin/sleep', String(SECS)]);
  const plain = await scenario('bytes-only', ['/usr/bin/python3', '-c', py(0)]);
  const fds = await scenario('bytes+N fds', ['/usr/bin/python3', '-c', py(Number(process.env.R14W_FDS || 64))]);
  await new Promise((r) => setTimeout(r, 500));
  const bad = fds.rc === 0 && (fds.p99 > 5 * Math.max(plain.p99, 1) && fds.p99 > 20) || fds.max > 200 || fds.immediatesPerSec < plain.immediatesPerSec / 4;
  if (bad) console.log(`FINDING: descriptor flood: event-loop p99 ${fds.p99} ms, max ${fds.max} ms, ${fds.immediatesPerSec} immediates/s (bytes-only flood p99 ${plain.p99} ms max ${plain.max} ms ${plain.immediatesPerSec}/s; idle p99 ${idle.p99} ms ${idle.immediatesPerSec}/s); JS thread CPU ${fds.jsThreadCpuMs} ms vs ${plain.jsThreadCpuMs} ms`);
  else console.log(`held (descriptor flood p99 ${fds.p99} ms max ${fds.max} ms, ${fds.immediatesPerSec}/s; bytes-only p99 ${plain.p99} ms ${plain.immediatesPerSec}/s; idle ${idle.immediatesPerSec}/s; JS CPU ${fds.jsThreadCpuMs} vs ${plain.jsThreadCpuMs} ms)`);
})();
