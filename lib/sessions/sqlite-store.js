'use strict';

// The durable session store: one SQLite database file. Node >= 22.5 ships
// SQLite as `node:sqlite`; on Node 20 the optional peer `better-sqlite3` is
// used (compiled from source by npm where no prebuilt binary can be fetched;
// it needs a C compiler). Both are synchronous: each statement is one short
// local transaction, and WAL journaling keeps a crash from tearing a write.

const fs = require('node:fs');
const { CordonError } = require('../errors');

/**
 * The database and its -wal/-shm are the provider's alone (0600): they name
 * every session's tenant, conversation, allowlist and workspace, and the
 * documented setup puts them in a 0711 directory any local user can open
 * them by name in (round 9, R9-10). The database is created 0600 before
 * SQLite opens it (SQLite makes -wal and -shm with the database's mode); an
 * existing one (and its -wal/-shm) that group or others may read is made
 * 0600: what it held was exposed, it must not stay so.
 */
function makePrivate(file) {
  for (const [name, create] of [[file, true], [`${file}-wal`, false], [`${file}-shm`, false]]) {
    let fd;
    try {
      fd = fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_CLOEXEC | (create ? fs.constants.O_CREAT : 0), 0o600);
    } catch (cause) {
      if (!create && cause.code === 'ENOENT') continue;
      throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `sqliteSessionStore: cannot open ${name} (${cause.code ?? cause.message})`, { cause });
    }
    try {
      const { mode } = fs.fstatSync(fd);
      if ((mode & 0o077) !== 0) fs.fchmodSync(fd, mode & 0o700);
    } catch (cause) {
      throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `sqliteSessionStore: ${name} may be read by other users and cannot be made 0600 (${cause.code ?? cause.message}): chmod 600 it`, { cause });
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** A SQLite binding: node:sqlite's DatabaseSync if present, else better-sqlite3. */
function openDatabase(file) {
  try {
    const { DatabaseSync } = require('node:sqlite');
    return new DatabaseSync(file);
  } catch (error) {
    if (error?.code !== 'ERR_UNKNOWN_BUILTIN_MODULE' && error?.code !== 'MODULE_NOT_FOUND') throw error;
  }
  let Database;
  try {
    Database = require('better-sqlite3');
  } catch (cause) {
    throw new CordonError('ERR_CORDON_PEER_MISSING', 'sqliteSessionStore needs SQLite: Node >= 22.5 (node:sqlite), or npm install better-sqlite3', { cause });
  }
  return new Database(file);
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS cordon_sessions (
  key TEXT PRIMARY KEY NOT NULL,
  record TEXT NOT NULL
)`;

/**
 * @param {string} file the database file (created if missing)
 */
function sqliteSessionStore(file) {
  if (typeof file !== 'string' || file.length === 0) throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'sqliteSessionStore(file): file must be a path');
  // ":memory:" and "" are SQLite's names for a database without a file.
  if (file !== ':memory:') makePrivate(file);
  const db = openDatabase(file);
  db.exec('PRAGMA journal_mode = WAL');
  // Two providers on one file: a claim waits for the other's transaction (bounded) instead of failing SQLITE_BUSY.
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec(SCHEMA);
  const statements = {
    get: db.prepare('SELECT record FROM cordon_sessions WHERE key = ?'),
    put: db.prepare('INSERT INTO cordon_sessions (key, record) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET record = excluded.record'),
    delete: db.prepare('DELETE FROM cordon_sessions WHERE key = ?'),
    list: db.prepare('SELECT record FROM cordon_sessions ORDER BY key'),
  };
  let open = true;
  return Object.freeze({
    kind: 'sqlite',
    file,
    async get(key) {
      const row = statements.get.get(key);
      return row === undefined ? null : JSON.parse(row.record);
    },
    async put(record) {
      statements.put.run(record.key, JSON.stringify(record));
    },
    async delete(key) {
      statements.delete.run(key);
    },
    async list() {
      return statements.list.all().map((row) => JSON.parse(row.record));
    },
    /**
     * Atomically (one IMMEDIATE transaction, which excludes every other
     * writer of the file): the record of `key` claimed under `lease`, or
     * `create()`'s record inserted under it, or `{held: true}` when
     * `heldByOther(record.lease)`. Returns `{record, created, held}`.
     */
    async claim(key, lease, create, heldByOther) {
      db.exec('BEGIN IMMEDIATE');
      let outcome;
      try {
        const row = statements.get.get(key);
        const existing = row === undefined ? null : JSON.parse(row.record);
        if (existing !== null && heldByOther(existing.lease)) {
          outcome = { record: existing, created: false, held: true };
        } else {
          const record = { ...(existing ?? create()), lease };
          statements.put.run(key, JSON.stringify(record));
          outcome = { record, created: existing === null, held: false };
        }
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
      db.exec(outcome.held ? 'ROLLBACK' : 'COMMIT');
      return outcome;
    },
    async close() {
      if (open) db.close();
      open = false;
    },
  });
}

module.exports = { sqliteSessionStore };
