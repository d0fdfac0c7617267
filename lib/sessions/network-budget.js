'use strict';

// A session's network budget. A session's sandbox is one run, so the
// mediated network's per-run quotas (docs/network.md) are the whole
// conversation's (round 9, R9-12): the session raises their defaults to a
// per-session budget, and tells the caller (and through the session tools
// the model) when the stream budget is spent, instead of leaving it to read
// `curl: (7) Failed to connect to 127.0.0.1 port 3128`. Spent is seen from
// the host: once `networkStreams` is spent the engine closes the sandbox's
// proxy listener (docs/network.md, "Quotas"), so 127.0.0.1:3128 is no longer
// listening in the sandbox's network namespace, read through
// /proc/<pid>/net/tcp of the sandbox's observed program (the launcher's
// receipt head). Nothing else closes that listener while the run lives.

const fsp = require('node:fs/promises');

/** Per-session defaults of the network quotas (a caller's policy.resources wins): 16x the per-run ones. */
const SESSION_NETWORK_QUOTAS = Object.freeze({
  networkStreams: 4096,
  networkBytesOut: 1 << 30,
  networkBytesIn: 16 * 2 ** 30,
});
/** The sandbox's proxy, as /proc/net/tcp spells it: 127.0.0.1:3128, state LISTEN (0A). */
const PROXY_LOCAL = '0100007F:0C38';
const LISTEN = '0A';

/** `policy` with the session's network quotas under its own resources. */
function withSessionQuotas(policy) {
  return { ...policy, resources: { ...SESSION_NETWORK_QUOTAS, ...policy.resources } };
}

/**
 * Bytes of the sandbox's socket table read at most (~1 700 lines). The
 * table is the sandbox's to grow (13 000 listening sockets made it 2 MB,
 * read after every exec: round 10, R10-2); past this the answer is unknown
 * (no notice), never a false "spent".
 */
const MAX_TABLE_BYTES = 256 * 1024;

/** Whether the proxy listens in the network namespace of `pid`: null when that cannot be read or the table is too large. */
async function proxyListening(pid) {
  let table;
  try {
    const file = await fsp.open(`/proc/${pid}/net/tcp`, 'r');
    try {
      const buffer = Buffer.allocUnsafe(MAX_TABLE_BYTES + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await file.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length > MAX_TABLE_BYTES) return null;
      }
      table = buffer.toString('latin1', 0, length);
    } finally {
      await file.close();
    }
  } catch {
    return null;
  }
  return table.split('\n').some((line) => {
    const fields = line.trim().split(/\s+/);
    return fields[1] === PROXY_LOCAL && fields[3] === LISTEN;
  });
}

/** What the caller and the model are told once the stream budget is spent. */
function spentNotice(streams) {
  return `this session's network budget is spent (networkStreams: ${streams} connections per session, docs/sessions.md): no later request of this session reaches the network, whatever its destination`;
}

module.exports = { SESSION_NETWORK_QUOTAS, MAX_TABLE_BYTES, withSessionQuotas, proxyListening, spentNotice };
