#!/usr/bin/env python3
"""Round 6b finding 2 (LOW): upload refusals quote the host's absolute stateDir and the session's
private workspace name to the remote client.  Usage: python3 refusal-leaks-host-path.py [cordon]
Exit status 1 = reproduced (a refused.message contains the host's stateDir)."""
import os, sys, json, subprocess, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rc import *

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '../../../..'))
CORDON = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'target/release/cordon')
tmp = tempfile.mkdtemp(prefix='atk22b-f2-')
os.mkdir(tmp + '/run', 0o700)
SOCK = tmp + '/run/host.sock'
json.dump({'listen': {'unix': SOCK}, 'stateDir': tmp + '/state', 'programs': {'sh': '/bin/sh'}},
          open(tmp + '/host.json', 'w'))
host = subprocess.Popen([CORDON, 'host', '--config', tmp + '/host.json'], stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        if os.path.exists(SOCK): break
        time.sleep(0.1)
    leaked = []
    for ups in ([('a', b'1'), ('a', b'2')], [('a/b', b'1'), ('a', b'2')], [('n' * 300, b'1')]):
        s = unix(SOCK); hello(s)
        st, _, _, _ = run(s, 'sh', ['-c', 'true'], {}, uploads=ups, timeout=20)
        print(st[1])
        if st[0] == REFUSED and tmp in st[1].get('message', ''): leaked.append(st[1]['message'])
    print('REPRODUCED: host paths in refusals' if leaked else 'not reproduced')
    sys.exit(1 if leaked else 0)
finally:
    host.terminate(); host.wait()
    subprocess.run(['rm', '-rf', tmp])
