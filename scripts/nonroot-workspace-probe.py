#!/usr/bin/env python3
"""Probe (docs/sessions.md, "Non-root providers"): can a NON-ROOT provider
hold a size- and inode-bounded session workspace that its successive
sandboxes and its file tools reach? Run as root; the probe itself runs as
the provider uid (default 65534) with that uid's subordinate range.

Mechanism (a): a holder process of the provider creates a user namespace
mapping only the session owner uid U (newuidmap/newgidmap, from outside),
then, still holding the creator's capabilities there (no exec yet), a mount
namespace with a tmpfs `size=1m,nr_inodes=64` owned by U. A command's
bwrap is started inside it (nsenter -U -m, setuid U) and binds the tmpfs.
Prints one line per measurement; exit 0 when every bound held.
"""
import os, subprocess, sys, tempfile

PROVIDER = int(os.environ.get('PROBE_UID', '65534'))
SCRIPT = r'''
import ctypes, os, subprocess, sys
U, D = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0: os._exit(7)
    os.write(w, b'u'); os.read(r2, 1)
    if libc.unshare(0x00020000) != 0: os._exit(8)
    libc.mount(None, b'/', None, 0x4000 | 0x40000, None)
    opts = f'size=1m,nr_inodes=64,mode=0700,uid={U},gid={U}'.encode()
    if libc.mount(b'cordon-ws', D.encode(), b'tmpfs', 6, opts) != 0: os._exit(9)
    print('holder', os.getpid(), flush=True)
    sys.stdin.read(); os._exit(0)  # until the probe closes our stdin
os.read(r, 1)
subprocess.run(['newuidmap', str(pid), str(U), str(U), '1'], check=True)
subprocess.run(['newgidmap', str(pid), str(U), str(U), '1'], check=True)
os.write(w2, b'g'); os.waitpid(pid, 0)
'''
FILL = ('head -c 2000000 /dev/zero > big 2>/dev/null; echo bytes=$(stat -c %s big); rm big; '
        'n=0; while touch f$n 2>/dev/null; do n=$((n+1)); done; echo inodes=$n; '
        'echo secret > f0; chmod 600 f0')

def as_provider(argv, **kw):
    return subprocess.run(['runuser', '-u', str(PROVIDER_NAME), '--', *argv], capture_output=True, text=True, **kw)

PROVIDER_NAME = subprocess.run(['id', '-nu', str(PROVIDER)], capture_output=True, text=True).stdout.strip()
sub = next(l for l in open('/etc/subuid') if l.startswith(PROVIDER_NAME + ':')).split(':')
U = int(sub[1]) + 1
work = tempfile.mkdtemp(prefix='cordon-nonroot-probe-')
os.chmod(work, 0o755)
mnt = os.path.join(work, 'ws'); os.mkdir(mnt); os.chown(mnt, PROVIDER, PROVIDER)
holder = subprocess.Popen(['runuser', '-u', PROVIDER_NAME, '--', '/usr/bin/python3', '-c', SCRIPT, str(U), mnt], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
hpid = int(holder.stdout.readline().split()[1])
enter = ['nsenter', '-t', str(hpid), '-U', '-m', '--setuid', str(U), '--setgid', str(U), '--']
bwrap = ['bwrap', '--unshare-user', '--unshare-pid', '--unshare-net', '--disable-userns', '--die-with-parent',
         '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/run',
         '--bind', mnt, '/run/workspace', '--chdir', '/run/workspace']
ok = True
first = as_provider([*enter, *bwrap, '/bin/sh', '-c', FILL])
print('sandbox 1 (bwrap inside the holder):', first.stdout.strip().replace('\n', ' '), first.stderr.strip()[:200])
ok &= 'bytes=1048576' in first.stdout and 'inodes=63' in first.stdout
second = as_provider([*enter, *bwrap, '/bin/sh', '-c', 'cat f0; ls | wc -l'])
print('sandbox 2 sees sandbox 1\'s files:', second.stdout.strip().replace('\n', ' '))
ok &= second.stdout.startswith('secret')
direct = as_provider(['cat', f'/proc/{hpid}/root{mnt}/f0'])
print('provider via /proc/<holder>/root:', (direct.stdout or direct.stderr).strip())
inside = as_provider([*enter, 'cat', f'{mnt}/f0'])
print('provider file op inside the holder as U:', inside.stdout.strip())
ok &= inside.stdout.strip() == 'secret'
print('host directory untouched:', os.listdir(mnt) == [])
ok &= os.listdir(mnt) == []
holder.stdin.close(); holder.wait(timeout=10)
os.rmdir(mnt); os.rmdir(work)
print('every bound held' if ok else 'A BOUND DID NOT HOLD')
sys.exit(0 if ok else 1)
