'use strict';
// Recon + workspace-bound probes as commands inside a uid-65534 provider's session.
const L = require('./lib');
const dir = L.scratch();
const body = `
  const s = await m.acquire(scope('c1'), actor);
  const r = async (name, script, o) => { const x = await sh(s, script, o).catch((e) => ({ err: e.code + ' ' + e.message })); out({ name, ...x }); };
  await r('id', 'id; cat /proc/self/uid_map /proc/self/gid_map; mount | grep -E "workspace|tmp|shm"; df -i /workspace; df /workspace; ls -la /workspace; ps -eo pid,ppid,uid,comm 2>/dev/null || ls /proc');
  await r('sparse', 'truncate -s 100G sparse; ls -ls sparse; dd if=/dev/zero of=seek bs=1 count=1 seek=10G 2>&1; df /workspace');
  await r('fallocate', 'fallocate -l 2M fa 2>&1; fallocate -l 600K fb 2>&1; ls -ls; df /workspace');
  await r('hardlink-inodes', 'rm -f fa fb seek sparse; touch base; i=0; while ln base l$i 2>/dev/null; do i=$((i+1)); [ $i -gt 200000 ] && break; done; echo links $i; df -i /workspace; rm -f l*');
  await r('inodes-dirs', 'i=0; while mkdir d$i 2>/dev/null; do i=$((i+1)); [ $i -gt 200000 ] && break; done; echo dirs $i; df -i /workspace; rm -rf d*; df -i /workspace');
  await r('xattr', 'touch x; for i in $(seq 1 2000); do setfattr -n user.a$i -v $(head -c 2000 /dev/zero | tr "\\\\0" a) x 2>&1 | head -1 && break; done; echo done; getfattr -d x 2>&1 | wc -c');
  await r('longnames', 'i=0; n=$(head -c 250 /dev/zero | tr "\\\\0" n); while touch $n$i 2>/dev/null; do i=$((i+1)); [ $i -gt 200000 ] && break; done; echo files $i; df -i /workspace; ');
  await r('tmp', 'df /tmp /dev/shm; mount | grep -E " /tmp | /dev/shm "');
  out({ list: await s.list('.').then((l) => ({ n: l.length, truncated: l.truncated })).catch((e) => e.code) });
  out({ end: (await s.end()).endReason });
`;
const res = L.run(dir, body, { workspaceBytes: 1 << 20 });
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 3000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 2000));
