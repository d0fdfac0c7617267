'use strict';
// R10-2: the session network budget notice (round 9, R9-12: 68a6750, network-budget.js)
// reads /proc/<sandbox pid>/net/tcp of a session with a network after EVERY exec, whole
// (fsp.readFile, no bound) and parses it on the provider's event loop (split('\n'), then
// trim + split(/\s+/) per line until the proxy's line). The table is the sandbox's
// network namespace's, so the sandbox decides its size: a background process holding
// N listening sockets on 127.0.0.1 makes every later exec of that session cost the
// provider a read of N × 150 bytes and a parse on its main thread — a stall every other
// tenant's session of the provider shares.
//   node netbudget-tcp-table.js [N]         N (default 20000) listening sockets, then 20 execs
//   node netbudget-tcp-table.js control     the same execs without the sockets
// Prints the provider's event-loop delay (max, p99) over the execs and the table size.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const cordon = require(path.resolve(__dirname, '../../../..'));

const PERL = String.raw`
use Socket; my $n = shift; my @s; my $port = 20000; my $a = 1;
for (1..$n) {
  my $s; socket($s, PF_INET, SOCK_STREAM, 0) or last;
  while (1) { last if bind($s, sockaddr_in($port, inet_aton("127.0.0.$a"))); $port++; if ($port > 60000) { $port = 20000; $a++; } }
  listen($s, 1) or last; push @s, $s; $port++; if ($port > 60000) { $port = 20000; $a++; }
}
open(my $f, ">", "/tmp/ready"); print $f scalar(@s); close $f; sleep 600;`;

async function main() {
  const control = process.argv[2] === 'control';
  const n = control ? 0 : Number(process.argv[2] ?? 20000);
  const server = http.createServer((q, s) => s.end('hello\n')).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r10-nettcp-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {}, { network: { allow: [{ host: 'localhost', port, allowPrivateAddresses: true }] } });
  try {
    const limits = await s.exec({ shell: 'bash', script: 'echo "nofile $(ulimit -n) nproc $(ulimit -u)"' });
    console.log('sandbox limits:', limits.stdout.trim());
    if (n > 0) {
      await s.writeFile('hold.pl', Buffer.from(PERL));
      // Up to nofile sockets per process: as many processes as it takes.
      const nofile = Number(/nofile (\d+)/.exec(limits.stdout)?.[1] ?? 1024) - 16;
      const procs = Math.ceil(n / nofile);
      const script = `for i in $(seq 1 ${procs}); do perl /workspace/hold.pl ${Math.ceil(n / procs)} & sleep 0.2; done; wait`;
      s.start({ shell: 'bash', script }).catch(() => {});
      // Until the count stops growing (the sandbox's memory ceiling or nofile × nproc ends it before N).
      const wait = 'last=-1; for i in $(seq 1 600); do n=$(grep -c " 0A " /proc/net/tcp); [ "$n" -ge ' + n + ' ] && break; [ "$n" -eq "$last" ] && [ "$n" -gt 1 ] && break; last=$n; sleep 2; done; echo "listening sockets: $(grep -c " 0A " /proc/net/tcp); table bytes: $(wc -c < /proc/net/tcp)"';
      const r = await s.exec({ shell: 'bash', script: wait }, { timeoutMs: 600_000 });
      console.log(r.stdout.trim());
    }
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const started = performance.now();
    for (let i = 0; i < 20; i++) await s.exec(['true']);
    const ms = performance.now() - started;
    h.disable();
    console.log(`${control ? 'control (no sockets)' : `${n} sockets`}: 20 execs in ${ms.toFixed(0)} ms; provider event-loop delay max ${(h.max / 1e6).toFixed(1)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, mean ${(h.mean / 1e6).toFixed(1)} ms`);
  } finally {
    await s.end();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
