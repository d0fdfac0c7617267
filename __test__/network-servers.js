'use strict';

// Loopback upstreams for the mediated-network tests that stall streams
// (network-teardown.test.js, network-splice.test.js).

const net = require('node:net');

/**
 * A server on 127.0.0.1: 'push' writes to each connection until its socket
 * takes no more (and again on each drain), 'echo' echoes, 'silent' never
 * writes. `open` holds its live connections; `close` destroys them.
 */
async function loopbackServer(kind) {
  const open = new Set();
  const srv = net.createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
    if (kind === 'push') {
      const block = Buffer.alloc(65536);
      const pump = () => { while (socket.write(block)); };
      socket.on('drain', pump);
      pump();
    } else if (kind === 'echo') {
      socket.pipe(socket);
    }
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { port: srv.address().port, open, close: () => { for (const s of open) s.destroy(); srv.close(); } };
}

module.exports = { loopbackServer };
