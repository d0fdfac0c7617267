'use strict';

// createSessionManager: sessions keyed by HMAC(secret, scope), created or
// resumed by acquire(scope, actor). Steps of acquire: check the scope →
// authorize(actor, scope) (every time; a denial returns nothing and touches
// nothing) → the live session, or one being created (concurrent acquires
// share it), or the store's record whose workspace is still mounted (a new
// sandbox over the kept files: origin "restarted"), or a new workspace and
// sandbox (origin "created"). Before any sandbox starts (create or
// restart): the per-tenant session bound, then the budget hook (so a
// denial by the bound never reaches, or charges, the budget).

const fs = require('node:fs');
const path = require('node:path');
const { CordonError } = require('../errors');
const { checkSecret, checkScope, sessionKey } = require('./session-key');
const { memorySessionStore } = require('./memory-store');
const { prepareRoot, createWorkspace, removeWorkspace, isMounted, pickOwnerUid } = require('./workspace');
const { Session, SessionView, DEFAULT_MAX_COMMANDS } = require('./session');
const { auditRecord, emitAudit } = require('./audit');
const { sessionPolicy } = require('./network');

const DEFAULTS = Object.freeze({
  /** A conversation idle this long (ms) is torn down. */
  idleTimeoutMs: 15 * 60 * 1000,
  /** Workspace quota (bytes): the tmpfs size. */
  workspaceBytes: 256 << 20,
  maxCommands: DEFAULT_MAX_COMMANDS,
  /** stdout + stderr retained per command (bytes). */
  outputBytes: 1 << 20,
  /** Per-command timeout (ms) unless the call gives one. */
  timeoutMs: 120_000,
  /** Live sessions one tenant may hold in this manager. */
  maxSessionsPerTenant: 16,
});
const HOOKS = ['allow', 'budget', 'audit'];
const OPTION_KEYS = new Set(['secret', 'root', 'store', 'authorize', 'policy', 'network', 'agentPath', ...HOOKS, ...Object.keys(DEFAULTS)]);

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', `sessions: ${message}`);
}

function checkOptions(options, deps) {
  if (options === null || typeof options !== 'object') throw invalid('options must be an object');
  for (const key of Object.keys(options)) if (!OPTION_KEYS.has(key)) throw invalid(`unknown option "${key}"; known: ${[...OPTION_KEYS].join(', ')}`);
  if (typeof options.authorize !== 'function') throw invalid('authorize(actor, scope) is required: it runs on every acquire');
  const out = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) {
    if (options[key] === undefined) continue;
    if (!Number.isSafeInteger(options[key]) || options[key] < 1) throw invalid(`${key} must be a positive integer`);
    out[key] = options[key];
  }
  out.secret = checkSecret(options.secret);
  out.policy = sessionPolicy(options.policy ?? deps.workspaceWrite(), options.network);
  out.root = options.root;
  prepareRoot(out.root);
  out.authorize = options.authorize;
  for (const hook of HOOKS) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') throw invalid(`${hook} must be a function`);
    out[hook] = options[hook];
  }
  out.agentPath = options.agentPath ?? deps.agentPath;
  if (!fs.existsSync(out.agentPath)) throw invalid(`the exec agent ${out.agentPath} is missing: run \`npm run build\``);
  return Object.freeze(out);
}

/**
 * Runs a decision hook; anything but `true` or `{allow: true}` (a throw
 * included) is a denial with `code`.
 */
async function decide(hook, args, code, what) {
  let decision;
  try {
    decision = await hook(...args);
  } catch (cause) {
    throw new CordonError(code, `${what}: the hook threw, so denied`, { cause });
  }
  if (decision === true || decision?.allow === true) return;
  const reason = typeof decision?.reason === 'string' ? `: ${decision.reason.slice(0, 200)}` : '';
  throw new CordonError(code, `${what}${reason}`);
}

function bindSessionManager(deps) {
  /** @param {object} options see index.d.ts SessionManagerOptions */
  function createSessionManager(options) {
    const checked = checkOptions(options, deps);
    const store = options.store ?? memorySessionStore();
    const live = new Map();
    const pending = new Map();
    const manager = {
      deps,
      options: checked,
      store,
      forget: (session) => live.get(session.id) === session && live.delete(session.id),
      allowOperation: (actor, scope, operation) => (checked.allow === undefined ? undefined
        : decide(checked.allow, [Object.freeze({ ...operation }), actor, scope], 'ERR_CORDON_SESSION_POLICY_DENIED', `${operation.kind} is refused by the session policy`)),
    };
    const audit = (fields) => emitAudit(checked.audit, auditRecord(fields));

    /** Admission before a sandbox starts: the tenant's bound, then the budget. */
    async function admit(scope, actor) {
      const tenantLive = [...live.values()].filter((s) => s.scope.tenant === scope.tenant).length
        + [...starting].filter((t) => t === scope.tenant).length;
      if (tenantLive >= checked.maxSessionsPerTenant) {
        throw new CordonError('ERR_CORDON_SESSION_LIMIT', `tenant already holds ${checked.maxSessionsPerTenant} live sessions (maxSessionsPerTenant)`);
      }
      if (checked.budget !== undefined) await decide(checked.budget, [scope, actor], 'ERR_CORDON_SESSION_BUDGET', 'the budget refused a new session sandbox');
    }

    const starting = [];
    async function open(key, scope, actor) {
      await admit(scope, actor);
      starting.push(scope.tenant);
      try {
        return await openAdmitted(key, scope);
      } finally {
        starting.splice(starting.indexOf(scope.tenant), 1);
      }
    }

    async function openAdmitted(key, scope) {
      const record = await store.get(key);
      if (record !== null && isMounted(record.workspace)) return launch(new Session(manager, record, 'restarted'));
      if (record !== null) await store.delete(key);
      const taken = new Set((await store.list()).map((r) => r.ownerUid));
      const now = Date.now();
      const fresh = { key, scope, ownerUid: pickOwnerUid(deps.ownerRange(), taken), workspace: path.join(checked.root, key), createdAt: now, lastActiveAt: now };
      createWorkspace({ dir: fresh.workspace, ownerUid: fresh.ownerUid, quotaBytes: checked.workspaceBytes });
      try {
        await store.put(fresh);
      } catch (error) {
        removeWorkspace(fresh.workspace);
        throw error;
      }
      return launch(new Session(manager, fresh, 'created'));
    }

    async function launch(session) {
      try {
        await session._startSandbox();
      } catch (error) {
        await session.end('start-failed');
        throw error;
      }
      // The agent may already have failed (and the session ended) right after READY.
      if (!session.ended) live.set(session.id, session);
      return session;
    }

    async function acquire(scope, actor) {
      const checkedScope = checkScope(scope);
      const key = sessionKey(checked.secret, checkedScope);
      try {
        await decide(checked.authorize, [actor, checkedScope], 'ERR_CORDON_SESSION_DENIED', 'the actor may not use this session');
      } catch (error) {
        audit({ session: key, scope: checkedScope, actor, operation: 'acquire', denial: `${error.code}: ${error.message}` });
        throw error;
      }
      const current = live.get(key);
      let origin = 'resumed';
      let session = current !== undefined && !current.ended ? current : null;
      try {
        if (session === null) {
          if (!pending.has(key)) pending.set(key, open(key, checkedScope, actor).finally(() => pending.delete(key)));
          session = await pending.get(key);
          origin = session.origin;
          session.origin = 'resumed';
        }
      } catch (error) {
        audit({ session: key, scope: checkedScope, actor, operation: 'acquire', error: error.code ?? 'ERR_CORDON_SPAWN_FAILED', denial: /DENIED|LIMIT|BUDGET/.test(error.code) ? error.message : null });
        throw error;
      }
      session.touch();
      audit({ session: key, scope: checkedScope, actor, operation: 'acquire', origin });
      return new SessionView(session, actor, origin);
    }

    /**
     * After a restart: every stored session not live here is resumable (its
     * workspace is mounted and it was active within idleTimeoutMs) or reaped
     * (workspace unmounted and record deleted).
     */
    async function recover() {
      const report = { resumable: [], reaped: [] };
      for (const record of await store.list()) {
        if (live.has(record.key)) continue;
        const fresh = Date.now() - record.lastActiveAt < checked.idleTimeoutMs;
        if (fresh && isMounted(record.workspace)) {
          report.resumable.push(record.key);
          continue;
        }
        if (removeWorkspace(record.workspace).removed) await store.delete(record.key);
        report.reaped.push(record.key);
      }
      return report;
    }

    /** Ends every live session here (workspaces removed); resolves with their receipts. */
    async function endAll() {
      return Promise.all([...live.values()].map((s) => s.end('end')));
    }

    return Object.freeze({ acquire, recover, endAll, get size() { return live.size; } });
  }
  return { createSessionManager };
}

module.exports = { bindSessionManager };
