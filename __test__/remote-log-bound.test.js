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
const frames = require('../lib/remote/frames');
const net = require('node:net');

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

  // The test above lost its last session's line now and then under load:
  // that client closed, the host got SIGTERM while the session was still
  // lingering after `refused`, and the host closed its log before the
  // session's task ended (its line, written when the record drops, came
  // too late to be written or counted). Here sessions are still open for
  // certain when the host stops: one welcomed (it ran nothing), one that
  // never sent `hello`. Each must be written or counted.
  test('sessions still open when the host stops are written or counted', { timeout: 60_000 }, async () => {
    const host = await startLogged();
    let lines;
    const sockets = [];
    try {
      // Says nothing; accepted before the next one (one accept loop, in
      // order), so it is a session once the next one is welcomed.
      await connected(host.socket, sockets);
      const welcomed = await connected(host.socket, sockets);
      welcomed.write(frames.encodeControl(frames.TYPE.hello, { v: 1 }));
      assert.equal((await firstFrame(welcomed)).name, 'welcome');
      await host.terminate();
      lines = fs.readFileSync(host.log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    } finally {
      for (const socket of sockets) socket.destroy();
      await host.stop();
    }
    const count = (outcome, summary) => lines.filter((l) => l.event === 'session' && l.outcome === outcome).length
      + lines.filter((l) => l.event === summary).reduce((n, l) => n + l.lines, 0);
    assert.equal(count('closed', 'session-without-run-suppressed'), 1, JSON.stringify(lines));
    assert.equal(count('handshake-failed', 'handshake-failed-suppressed'), 1, JSON.stringify(lines));
  });
});

/** A raw connection to the host's socket (kept in `sockets` to be destroyed). */
function connected(socket, sockets) {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket, () => resolve(conn));
    conn.on('error', reject);
    sockets.push(conn);
  });
}

/** The first frame the host sends on `conn`. */
function firstFrame(conn) {
  const decoder = new frames.FrameDecoder();
  return new Promise((resolve, reject) => {
    conn.on('data', (chunk) => {
      const [frame] = decoder.push(chunk);
      if (frame) resolve(frame);
    });
    conn.on('close', () => reject(new Error('closed before a frame')));
  });
}

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
