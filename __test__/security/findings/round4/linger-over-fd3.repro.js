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
// SO_LINGER takes up to 2^31-1 s. Run as root: `node linger-over-fd3.repro.js`.
const cordon = require('../../../..');
const { build } = require('./run');

const LINGER_S = 3600;
const PATIENCE_MS = 20_000;

async function main() {
  const policy = { ...cordon.readOnly(), network: { mode: 'mediated', allow: ['example.com:443'] } };
  const execution = cordon.spawnIsolated([build(), 'linger', '3', String(LINGER_S)], { policy });
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
  process.exit(0);
}
main();
