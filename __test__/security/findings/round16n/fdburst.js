'use strict';
// R16n probe: the end-of-run drain hands each record's descriptors to a new
// closer thread (cordon_passed_fds::neutralise, lib.rs:169, per message, on
// the runtime worker that drops the channel). How many records with a
// descriptor can the program queue (RLIMIT_NOFILE bounds descriptors in
// flight: raised to the hard limit first), how many threads does the
// provider start, and how long does the run take to settle after the
// program exits? Control: the same number of records without descriptors.
const fs = require('node:fs');
const { py, cordon, sleep, within, snap } = require('./h');
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const relay = process.env.R14_RELAY ? { networkRelayPath: process.env.R14_RELAY } : {};
const CODE = String.raw`
import socket, sys, os, array, resource, time
withfd = sys.argv[1] == 'fd'
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try: resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
except Exception as e: pass
c4 = socket.socket(fileno=4)
c4.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)
dn = os.open('/dev/null', os.O_RDONLY)
anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [dn]))] if withfd else []
n = 0; err = None; t0 = time.time()
while time.time() - t0 < 3:
    try: c4.sendmsg([b''], anc); n += 1
    except OSError as e:
        err = e.errno
        if e.errno in (32, 11): break
        if e.errno == 109: continue
        break
print('nofile', soft, hard, resource.getrlimit(resource.RLIMIT_NOFILE), 'sent', n, 'err', err, file=sys.stderr)
`;
function procThreads() { return fs.readdirSync('/proc/self/task').length; }
(async () => {
  const rows = [];
  for (const mode of ['nofd', 'fd']) {
    let peak = 0; const iv = setInterval(() => { peak = Math.max(peak, procThreads()); }, 2);
    const t0 = Date.now();
    const ex = py(CODE, [mode], { policy, ...relay });
    ex.protocol.resume();
    const ok = await within(ex.wait(), 30000);
    clearInterval(iv);
    await sleep(500);
    rows.push({ mode, ok, ms: Date.now() - t0 - 500, peakThreads: peak, text: ex.text.trim(), ...snap() });
    console.log(JSON.stringify(rows[rows.length - 1]));
  }
  const [c, f] = rows;
  console.log(f.ms > c.ms + 1000 || f.peakThreads > c.peakThreads + 1024 ? `FINDING: records with a descriptor: run ${f.ms} ms, peak ${f.peakThreads} provider threads (control ${c.ms} ms, ${c.peakThreads})` : `held (fd: ${f.ms} ms, peak ${f.peakThreads} threads; control ${c.ms} ms, ${c.peakThreads})`);
  process.exit(0);
})();
