'use strict';

// Raw cordon-remote-v1 frames to a host's Unix socket, for the round 6
// reproductions: connect, send hello, keep everything the host answers.

const net = require('node:net');

function frame(type, object) {
  const payload = Buffer.from(JSON.stringify(object));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length + 1, 0);
  head[4] = type;
  return Buffer.concat([head, payload]);
}

/** A connected socket that has sent hello; `received()` is what the host sent so far. */
async function rawSession(socketPath) {
  const socket = net.createConnection(socketPath);
  let received = Buffer.alloc(0);
  socket.on('data', (chunk) => { received = Buffer.concat([received, chunk]); });
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(frame(0x01, { v: 1 }));
  return { socket, received: () => received };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

module.exports = { frame, rawSession, sleep, UPLOAD: 0x03, SPAWN: 0x04 };
