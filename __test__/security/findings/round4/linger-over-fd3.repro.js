'use strict';
// Finding R4-4: a run that does not settle for as long as the sandbox asks.
// In a mediated-network sandbox (AF_INET allowed, own net namespace) the
// program makes a loopback TCP connection whose sender cannot finish (the
// receiver never reads), sets SO_LINGER to N seconds, and passes the sender
// and then the receiver over fd 3 with SCM_RIGHTS. The launcher's pump reads
// fd 3 with read(): the kernel drops the passed descriptors in the pump
// thread, the sender's last close waits in tcp_close for N seconds (its peer
// is still alive, in flight behind it), and until then the protocol stream
// does not end, wait() does not resolve and stop() changes nothing.
// SO_LINGER takes up to 2^31-1 s. Run as root: `node linger-over-fd3.repro.js`
// (`CHANNEL=4 node …`: the same through the fd-4 channel, whose server closes
// smuggled descriptors in crates/egress/src/scm_rights.rs close_all).
const cordon = require('../../../..');
const { build } = require('./run');

const LINGER_S = 3600;
/** fd 3 (the launcher's protocol pump) or, with CHANNEL=4, the egress engine's fd-4 server (same cause). */
const CHANNEL = process.env.CHANNEL === '4' ? '4' : '3';
const PATIENCE_MS = 20_000;

async function main() {
  const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
  const execution = cordon.spawnIsolated([build(), 'linger', CHANNEL, String(LINGER_S)], { policy });
  let text = '';
  execution.stderr.on('data', (c) => { text += c; });
  execution.protocol.resume();
  let settled = false;
  execution.wait().then(() => { settled = true; }, () => { settled = true; });
  while (!/^RESULT /m.test(text) && !settled) await new Promise((r) => setTimeout(r, 50));
  console.log(text.trim());
  await new Promise((r) => setTimeout(r, 1000));
  const stopped = execution.stop();
  const stopSettled = await Promise.race([stopped.then(() => true), new Promise((r) => setTimeout(() => r(false), PATIENCE_MS))]);
  if (!stopSettled && !settled) {
    console.log(`OPEN: ${PATIENCE_MS / 1000} s after stop() the run has not settled (the program exited at once; the pump thread waits up to ${LINGER_S} s)`);
  } else {
    console.log('blocked: the run settled');
  }
  asNobody();
  process.exit(0);
}

/** The same for a provider of uid 65534 (a copy of the relay it can reach). */
function asNobody() {
  const fs = require('node:fs');
  const h = require('../../harness');
  const relay = fs.mkdtempSync('/var/tmp/cordon-r4-relay-');
  fs.chmodSync(relay, 0o755);
  fs.copyFileSync(require('../../../..').runnerPath.replace(/cordon-runner$/, 'cordon-egress-relay'), `${relay}/relay`);
  fs.chmodSync(`${relay}/relay`, 0o755);
  const script = `
const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
const ex = cordon.spawnIsolated([probe, 'linger', '${CHANNEL}', '${LINGER_S}'], { policy, networkRelayPath: '${relay}/relay' });
let text = ''; ex.stderr.on('data', (c) => { text += c; }); ex.protocol.resume();
let settled = false; ex.wait().then(() => { settled = true; }, () => { settled = true; });
setTimeout(() => ex.stop(), 2000);
setTimeout(() => { process.stdout.write(JSON.stringify({ settled, text })); process.exit(0); }, ${PATIENCE_MS});
`;
  const run = h.runProvider(script.replace('[probe,', `[${JSON.stringify(build())},`), { asNobody: true, timeoutMs: PATIENCE_MS + 30_000 });
  fs.rmSync(relay, { recursive: true, force: true });
  if (run.skip || run.error) return console.log(`provider uid 65534: ${run.skip ?? run.error}`);
  console.log(`provider uid 65534: ${run.value.settled ? 'blocked: the run settled' : `OPEN: not settled ${PATIENCE_MS / 1000} s after stop()`}`);
}
main();
