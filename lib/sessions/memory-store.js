'use strict';

// The in-memory session store: the store interface without durability, for
// tests and for providers that accept losing their sessions on restart.
// Every store holds records `{key, scope, ownerUid, workspace, createdAt,
// lastActiveAt}` (plain JSON) and offers async get/put/delete/list.

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
    async close() {},
  });
}

module.exports = { memorySessionStore };
