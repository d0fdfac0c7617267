#!/usr/bin/env python3
"""Round 6b finding 1, second view: while one client uploads deep paths, another tenant's running
sandbox (15 one-second ticks on stderr) has its output and `exit` relayed late.
Usage: python3 upload-stall-victim.py [cordon]; exit 1 = the victim's exit came > 5 s late."""
import os, sys, json, subprocess, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rc import *

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '../../../..'))
CORDON = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'target/release/cordon')
tmp = tempfile.mkdtemp(prefix='atk22b-f1b-')
os.mkdir(tmp + '/run', 0o700)
SOCK = tmp + '/run/host.sock'
json.dump({'listen': {'unix': SOCK}, 'stateDir': tmp + '/state', 'programs': {'sh': '/bin/sh'},
           'handshake': {'uploadPhaseMs': 5000}}, open(tmp + '/host.json', 'w'))
host = subprocess.Popen([CORDON, 'host', '--config', tmp + '/host.json'], stderr=subprocess.DEVNULL)
POL = {'formatVersion': 1, 'filesystem': {'workspace': 'read', 'temp': 'write'}, 'network': {'mode': 'none'},
       'process': {'treeConfinement': 'required'}, 'environment': {'allow': []}}
try:
    for _ in range(100):
        if os.path.exists(SOCK): break
        time.sleep(0.1)
    res = {}
    def victim():
        s = unix(SOCK); hello(s); t = time.time()
        st, err, out, ex = run(s, 'sh', ['-c', 'for i in $(seq 15); do echo tick $i >&2; sleep 1; done'],
                               {'policy': POL}, timeout=90)
        res['wall'] = time.time() - t
        res['stop'] = ex and ex['receipt']['stop'].get('reason')
    def attacker():
        for _ in range(3):
            try:
                s = unix(SOCK); hello(s); s.settimeout(20)
                s.sendall(b''.join(frame(UPLOAD, {'path': '%d/' % i + '/'.join(['d'] * 2000) + '/f', 'data': ''})
                                   for i in range(40)))
                time.sleep(4); s.close()
            except Exception as e:
                print('attacker: host did not answer (%s)' % type(e).__name__)
    v = threading.Thread(target=victim); v.start(); time.sleep(1.5)
    threading.Thread(target=attacker, daemon=True).start()
    v.join()
    print('victim: a 15 s program, exit frame after %.1f s (stop reason %s)' % (res['wall'], res['stop']))
    late = res['wall'] > 20
    print('REPRODUCED' if late else 'not reproduced')
    sys.exit(1 if late else 0)
finally:
    host.terminate(); host.wait()
    subprocess.run(['rm', '-rf', tmp])
