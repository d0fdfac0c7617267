'use strict';

// The in-memory session store: the store interface without durability, for
// tests and for providers that accept losing their sessions on restart.
// Every store holds records `{key, scope, ownerUid, workspace, createdAt,
// lastActiveAt, network, lease}` (plain JSON) and offers async
// get/put/delete/list and an atomic claim (lease.js).

function memorySessionStore() {
  const records = new Map();
  const copy = (record) => (record === undefined ? null : JSON.parse(JSON.stringify(record)));
  return Object.freeze({
    kind: 'memory',
    async get(key) {
      return copy(records.get(key));
    },
    async put(record) {
      records.set(record.key, copy(record));
    },
    async delete(key) {
      records.delete(key);
    },
    async list() {
      return [...records.values()].map(copy);
    },
    /** See sqliteSessionStore's claim: synchronous here, so atomic within this process. */
    async claim(key, lease, create, heldByOther) {
      const existing = copy(records.get(key));
      if (existing !== null && heldByOther(existing.lease)) return { record: existing, created: false, held: true };
      const record = { ...(existing ?? create()), lease };
      records.set(key, copy(record));
      return { record: copy(record), created: existing === null, held: false };
    },
    async close() {},
  });
}

module.exports = { memorySessionStore };
