'use strict';

// R6-2: `spawn.options.stop {graceMs, forceMs}` was not clamped (the
// launcher allows 600 000 ms each). A client asks for a 10-minute grace,
// runs a program that ignores SIGTERM and disconnects: the host's
// disconnect stop waits out the grace, so the sandbox keeps running (and
// holds its session slot) long after the client left; the same grace made a
// clamped deadline ceiling meaningless. Run after `npm run build`:
//   node __test__/security/findings/round6/stop-grace.repro.js
// Prints OPEN (the sandbox outlived the disconnect by 8 s) or FIXED.

const { startHost } = require('../../../remote-support');
const { frame, rawSession, sleep, SPAWN } = require('./raw');


function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

async function main() {
  const host = await startHost();
  const { socket, received } = await rawSession(host.socket);
  const policy = { formatVersion: 1, filesystem: { workspace: 'read', temp: 'write' }, network: { mode: 'none' }, process: { treeConfinement: 'required' } };
  socket.write(frame(SPAWN, {
    program: 'sh',
    args: ['-c', "trap '' TERM; sleep 60"],
    options: { policy, stop: { graceMs: 600000, forceMs: 600000 } },
  }));
  await sleep(3000);
  const match = /"pid":(\d+)/.exec(received().toString('latin1'));
  if (!match) throw new Error(`no started frame: ${received().toString('latin1').slice(0, 300)}`);
  const pid = Number(match[1]);
  socket.destroy(); // the client disconnects
  await sleep(8000);
  const still = alive(pid);
  await host.stop();
  console.log(still
    ? `OPEN: sandbox pid ${pid} still running 8 s after its client disconnected`
    : `FIXED: sandbox pid ${pid} gone within 8 s of the disconnect`);
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
