'use strict';

// R11-2 through a real `cordon host` with a logFile: the session lines of an
// authenticated peer that runs nothing (here: `spawn` of a program the host
// does not serve, `refused`) pass the same bound as failed handshakes — a
// burst, then so many a minute, the rest counted in one
// `session-without-run-suppressed` line. Before, each wrote a line (~2 MB/s
// of log from one client that connects, reads `welcome` and closes).

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const h = require('./security/harness');
const os = require('node:os');
const { startHost, terminate } = require('./remote-support');
const { connectRemote } = require('../lib/remote');

const skip = h.skipReason() || false;
const SESSIONS = 60;
const BURST = 5;

describe('log lines of sessions that run nothing (R11-2)', { skip }, () => {
  test(`${SESSIONS} refused spawns write the burst and a suppressed count`, { timeout: 180_000 }, async () => {
    const began = Date.now();
    const host = await startLogged();
    let lines;
    try {
      const remote = connectRemote({ socket: host.socket });
      for (let i = 0; i < SESSIONS; i++) {
        await assert.rejects(remote.spawnIsolated(['no-such-program'], { policy: remote.readOnly() }).wait());
      }
      await remote.close();
      await host.terminate(); // the summary is written when the host stops
      lines = fs.readFileSync(host.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    } finally {
      await host.stop();
    }
    const refused = lines.filter((l) => l.event === 'session' && l.outcome === 'refused').length;
    const suppressed = lines.filter((l) => l.event === 'session-without-run-suppressed').reduce((n, l) => n + l.lines, 0);
    const minutes = Math.ceil((Date.now() - began) / 60_000);
    assert.ok(refused <= BURST + minutes, `${refused} refused lines written`);
    assert.equal(refused + suppressed, SESSIONS);
  });
});

/** A host with a logFile in its own temp directory. */
async function startLogged() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-log-bound-'));
  const log = path.join(dir, 'host.log');
  const host = await startHost({ logFile: log, handshake: { failureLogBurst: BURST, failureLogPerMinute: 1 } });
  const stop = async () => {
    await host.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { ...host, log, terminate: () => terminate(host.child), stop };
}
