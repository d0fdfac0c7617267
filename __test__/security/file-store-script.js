'use strict';

// The source of a durable session store in `<dir>/sessions.json`, for the
// provider scripts the security suites run as another process (a uid-65534
// provider, or one they SIGKILL): sqliteSessionStore needs Node >= 22.5 or
// better-sqlite3, not in the copied package, and what these tests exercise
// is the workspace, not the store. Crash-safe like a real store (a
// SIGKILL in the middle of a write once emptied the file, and a holder the
// lost record named then looked leaked: round 7b, R7b-3). The script defines
// `fs` and `dir` before it; this defines `store`.

const FILE_STORE_SCRIPT = `
    const file = dir + '/sessions.json';
    const load = () => { try { return JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return {}; } };
    // Written aside and renamed over: a provider SIGKILLed mid-write must leave the old records, not an empty file.
    const save = (all) => { fs.writeFileSync(file + '.next', JSON.stringify(all)); fs.renameSync(file + '.next', file); };
    const copy = (r) => JSON.parse(JSON.stringify(r));
    const store = {
      async get(key) { return load()[key] ?? null; },
      async put(r) { const all = load(); all[r.key] = copy(r); save(all); },
      async delete(key) { const all = load(); delete all[key]; save(all); },
      async list() { return Object.values(load()); },
      async claim(key, lease, create, heldByOther) {
        const all = load(); const found = all[key] ?? null;
        if (found !== null && heldByOther(found.lease)) return { record: found, created: false, held: true };
        all[key] = { ...(found ?? create()), lease }; save(all);
        return { record: copy(all[key]), created: found === null, held: false };
      },
      async close() {},
    };`;

module.exports = { FILE_STORE_SCRIPT };
