'use strict';

// R9-4 (black-box round 9, __test__/security/findings/round9): one peer's
// idle connections must not close every other client out of `cordon host`.
// The handshake slots (`handshake.maxConcurrent`, 32) were one pool taken
// at the accept and held up to `firstFrameMs` (5 s): 32 TCP connections
// that never sent a TLS byte made every mutual-TLS client fail. Now each
// source (an IP, a Unix uid) past its share (`handshake.perSource`) takes
// a slot only while half the pool is free, and a TLS connection silent for
// `handshake.firstByteMs` (1 s) is closed (crates/cli/src/host/
// handshake_slots.rs). Each test floods a real host with 40 idle
// connections from one source and runs real clients from another.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { connectRemote } = require('../lib/remote');
const { startHost, tlsMaterial, terminate } = require('./remote-support');
const { eventually } = require('./spawn-support');

/** Idle connections the attacker holds (more than the 32-slot pool). */
const FLOOD = 40;
/** Runs of the legitimate client while the flood goes on. */
const RUNS = 4;

/**
 * The attacker, as a script for `node -e`: FLOOD connections made by
 * `connect` (its body, given `net`), none sending a byte, each reopened 50
 * ms after the host closes it; prints how many the host has closed so far.
 */
const floodScript = (connect) => `
  const net = require('node:net');
  let closed = 0;
  const open = () => {
    const s = (${connect})(net);
    s.on('error', () => {});
    s.on('close', () => { closed += 1; console.log('closed ' + closed); setTimeout(open, 50); });
  };
  for (let i = 0; i < ${FLOOD}; i++) open();
`;

/**
 * Starts the flood as `uid` (when given, via setpriv) and resolves once the
 * host has closed FLOOD of its connections: the pool has been contended
 * long enough that the flood holds every slot it can get.
 */
async function startFlood(connect, uid) {
  const node = process.execPath;
  const argv = uid === undefined
    ? [node, ['-e', floodScript(connect)]]
    : ['setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', node, '-e', floodScript(connect)]];
  const child = spawn(argv[0], argv[1], { stdio: ['ignore', 'pipe', 'inherit'] });
  let closed = 0;
  child.stdout.on('data', (chunk) => {
    for (const [, n] of String(chunk).matchAll(/closed (\d+)/g)) closed = Math.max(closed, Number(n));
  });
  assert.ok(await eventually(() => closed >= FLOOD || child.exitCode !== null, 60_000),
    `the host closed ${closed} of the flood's connections in 60 s`);
  assert.equal(child.exitCode, null, 'the flood is still running');
  return child;
}

/** RUNS runs of `remote` in turn, each `sh -c 'exit 0'`: their outcomes. */
async function legitRuns(remote) {
  const outcomes = [];
  for (let i = 0; i < RUNS; i++) {
    try {
      const result = await remote.spawnIsolated(['sh', '-c', 'exit 0'], { policy: remote.readOnly() }).wait();
      outcomes.push(`exit ${result.returncode}`);
    } catch (e) {
      outcomes.push(e.code);
    }
  }
  return outcomes;
}

test('40 idle TCP connections from one address (never a TLS byte) do not close a mutual-TLS client of another out', async () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-handshake-share-'));
  const tls = tlsMaterial(scratch);
  const host = await startHost({
    listen: { tcp: '127.0.0.1:0' },
    tls: { cert: tls.file('host.pem'), key: tls.file('host.key'), clientCa: tls.file('ca.pem') },
  });
  let flood;
  try {
    const port = Number(new URL(host.url.replace('tls://', 'http://')).port);
    // The attacker's source is 127.0.0.2 (any 127/8 address is loopback on
    // Linux); the client's is 127.0.0.1.
    flood = await startFlood(`(net) => net.connect({ host: '127.0.0.1', port: ${port}, localAddress: '127.0.0.2' })`);
    const remote = connectRemote({ url: host.url, tls: { ca: tls.ca, ...tls.client } });
    assert.deepEqual(await legitRuns(remote), Array(RUNS).fill('exit 0'));
  } finally {
    if (flood) await terminate(flood);
    await host.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test('an allowed uid\'s 40 connections that never send hello do not close another uid out of the Unix socket', {
  skip: process.getuid() !== 0 && 'needs root to connect as another uid',
}, async () => {
  const nobody = 65534;
  const host = await startHost({ allowUids: [process.getuid(), nobody] });
  let flood;
  try {
    // The socket's directory is the test's (0700): the other uid must reach it.
    fs.chmodSync(path.dirname(host.socket), 0o755);
    flood = await startFlood(`(net) => net.connect(${JSON.stringify(host.socket)})`, nobody);
    const remote = connectRemote({ socket: host.socket });
    assert.deepEqual(await legitRuns(remote), Array(RUNS).fill('exit 0'));
  } finally {
    if (flood) await terminate(flood);
    await host.stop();
  }
});
