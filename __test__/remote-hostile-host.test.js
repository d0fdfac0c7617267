'use strict';

// cordon/remote against a hostile host: a real Unix-socket server that
// speaks cordon-remote-v1 but breaks its bounds (no cordon host would; the
// real host is exercised by remote-unix.test.js). The client must bound
// what such a host can make the provider buffer.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const frames = require('../lib/remote/frames');
const { connectRemote } = require('../lib/remote');

/** A server on a Unix socket that answers hello (with `ceilings`) and spawn, then runs `flood(socket)`. */
async function hostileHost(flood, ceilings = { deadlineMs: 300_000 }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-hostile-'));
  const socket = path.join(dir, 'h.sock');
  const server = net.createServer((conn) => {
    conn.on('error', () => {});
    const decoder = new frames.FrameDecoder();
    conn.on('data', (chunk) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.type === frames.TYPE.hello) {
          conn.write(frames.encodeControl(frames.TYPE.welcome, { v: 1, host: { id: 'evil', version: '0', transport: 'unix', auth: 'peercred' }, tenant: 't', ceilings, programs: ['sh'] }));
        } else if (frame.type === frames.TYPE.spawn) {
          conn.write(frames.encodeControl(frames.TYPE.started, { pid: 1, invocationId: 'x', clamped: {} }));
          flood(conn);
        }
      }
    });
  });
  await new Promise((resolve) => server.listen(socket, resolve));
  return {
    socket,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a host that sends fd 3 bytes past the window the client granted is a protocol error, not unbounded buffering', async () => {
  let sent = 0;
  const host = await hostileHost((conn) => {
    const chunk = frames.encodeData(frames.TYPE.data, Buffer.alloc(frames.MAX_DATA_BYTES, 0x61));
    const more = () => {
      // 64 MiB without ever waiting for a credit.
      while (sent < 1024 && !conn.destroyed) {
        sent += 1;
        if (!conn.write(chunk)) return conn.once('drain', more);
      }
      return undefined;
    };
    more();
  });
  const remote = connectRemote({ socket: host.socket }, { slackMs: 5000 });
  try {
    const execution = remote.spawnIsolated(['sh'], { policy: remote.readOnly(), deadlineMs: 60_000 });
    // Nobody reads fd 3: a bounded client holds at most its window.
    await assert.rejects(execution.wait(), (error) => {
      assert.equal(error.code, 'ERR_CORDON_REMOTE_PROTOCOL', error.message);
      assert.match(error.message, /past the \d+-byte window/);
      return true;
    });
    assert.ok(execution.protocol.readableLength <= frames.INITIAL_WINDOW_BYTES, `buffered ${execution.protocol.readableLength} bytes`);
  } finally {
    await remote.close();
    await host.close();
  }
});

test('a host that keeps pinging but never exits cannot hold wait() past its deadline ceiling and slackMs', { timeout: 30_000 }, async () => {
  let pinger;
  const host = await hostileHost((conn) => {
    pinger = setInterval(() => conn.write(frames.encodeData(frames.TYPE.ping, Buffer.alloc(frames.PING_BYTES))), 100);
    conn.on('close', () => clearInterval(pinger));
  }, { deadlineMs: 500 });
  const remote = connectRemote({ socket: host.socket }, { slackMs: 1000 });
  try {
    // No deadlineMs: the host's ceiling (welcome.ceilings.deadlineMs) is the run's deadline.
    const execution = remote.spawnIsolated(['sh'], { policy: remote.readOnly() });
    await assert.rejects(execution.wait(), { code: 'ERR_CORDON_REMOTE_TIMEOUT' });
  } finally {
    clearInterval(pinger);
    await remote.close();
    await host.close();
  }
});

test('a host that pings before started is a protocol error, so the handshake cannot be held open by pings', { timeout: 30_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-hostile-'));
  const socket = path.join(dir, 'h.sock');
  const timers = new Set();
  const server = net.createServer((conn) => {
    conn.on('error', () => {});
    const timer = setInterval(() => conn.write(frames.encodeData(frames.TYPE.ping, Buffer.alloc(frames.PING_BYTES))), 100);
    timers.add(timer);
    conn.on('close', () => clearInterval(timer));
  });
  await new Promise((resolve) => server.listen(socket, resolve));
  const remote = connectRemote({ socket }, { slackMs: 1000 });
  try {
    const execution = remote.spawnIsolated(['sh'], { policy: remote.readOnly(), deadlineMs: 600_000 });
    await assert.rejects(execution.wait(), { code: 'ERR_CORDON_REMOTE_PROTOCOL' });
  } finally {
    await remote.close();
    await new Promise((resolve) => server.close(resolve));
    for (const timer of timers) clearInterval(timer);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a deadlineMs of 2^31-1 with slackMs is not a timer overflow that times the run out at once', async () => {
  const host = await hostileHost((conn) => {
    conn.write(frames.encodeControl(frames.TYPE.exit, { returncode: 0, signal: null, receipt: {}, networkReceipts: [] }));
  });
  const remote = connectRemote({ socket: host.socket }, { slackMs: 1000 });
  try {
    const result = await remote.spawnIsolated(['sh'], { policy: remote.readOnly(), deadlineMs: 2 ** 31 - 1 }).wait();
    assert.equal(result.returncode, 0);
  } finally {
    await remote.close();
    await host.close();
  }
});
