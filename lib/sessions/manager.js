'use strict';

// createSessionManager: sessions keyed by HMAC(secret, scope), created or
// resumed by acquire(scope, actor). Steps of acquire: check the scope →
// authorize(actor, scope) (every time; a denial returns nothing and touches
// nothing) → the live session, or one being created (concurrent acquires
// share it), or the store's record whose workspace is still mounted (a new
// sandbox over the kept files: origin "restarted"), or a new workspace and
// sandbox (origin "created"); a session whose end() is under way is waited
// for, then replaced by a new one. Before any sandbox starts (create or
// restart): a slot of the per-tenant bound, taken before any await, then
// the budget hook (so a denial by the bound never reaches, or charges, the
// budget).

const fs = require('node:fs');
const path = require('node:path');
const { CordonError } = require('../errors');
const { checkSecret, checkScope, sessionKey } = require('./session-key');
const { memorySessionStore } = require('./memory-store');
const { prepareRoot, createWorkspace, removeWorkspace, workspaceLive, workspacePath, viaHolder } = require('./workspace');
const { subordinateOwners, mappedByLiveHolder } = require('./holder');
const { claimOwnerUid, releaseOwnerUid, confirmOwnerUid, isSessionOwner, notAnOwner, defaultClaimsDir } = require('./owner-claims');
const { sweepOwner, uidHasProcesses } = require('./owner-sweep');
const { leaseHolder, heldError } = require('./lease');
const { Session, SessionView, DEFAULT_MAX_COMMANDS, DEFAULT_MAX_FILE_OPERATIONS } = require('./session');
const { auditRecord, emitAudit } = require('./audit');
const { sessionPolicy, canonicalNetwork, checkAcquireOptions } = require('./network');

const DEFAULTS = Object.freeze({
  /** A conversation idle this long (ms) is torn down. */
  idleTimeoutMs: 15 * 60 * 1000,
  /** Workspace quota (bytes): the tmpfs size; at most half the policy's memory ceiling (workspaceQuota). */
  workspaceBytes: undefined,
  maxCommands: DEFAULT_MAX_COMMANDS,
  maxFileOperations: DEFAULT_MAX_FILE_OPERATIONS,
  /** stdout + stderr retained per command (bytes). */
  outputBytes: 1 << 20,
  /** Per-command timeout (ms) unless the call gives one. */
  timeoutMs: 120_000,
  /** Live sessions one tenant may hold in this manager. */
  maxSessionsPerTenant: 16,
});
const HOOKS = ['allow', 'budget', 'audit'];
const OPTION_KEYS = new Set(['secret', 'root', 'store', 'authorize', 'policy', 'network', 'agentPath', 'claimsDir', ...HOOKS, ...Object.keys(DEFAULTS)]);

/**
 * Whether `record`'s owner uid is (now) claimed for its workspace by this
 * provider, and so may be swept; false when it is another's or the claims
 * cannot be read. A non-root provider's claim in its own directory does not
 * see a provider of its uid on another sessions root: a live holder other
 * than the record's own that maps the uid means another workspace has it,
 * and sweeping it would kill that session (round 8, R8-2).
 */
function ownsUid(record, claimsDir, range) {
  try {
    if (viaHolder() && mappedByLiveHolder(record.ownerUid, record.holder?.pid ?? null)) return false;
    return confirmOwnerUid(record.ownerUid, record.workspace, claimsDir, range);
  } catch {
    return false;
  }
}

/**
 * The uids this provider's sessions may own: a root provider's
 * workspace-owner range, a non-root provider's owner half of its
 * subordinate uids (holder.js).
 */
function ownerRange(deps) {
  return viaHolder() ? subordinateOwners() : deps.ownerRange();
}

/**
 * Whether a stored record's owner uid is one of this provider's session
 * owners; a record naming another (a host account's uid: a corrupt or
 * planted store) is neither swept, claimed, resumed nor removed (round 8,
 * R8-7). Without a range (no subordinate ids) nothing is.
 */
function validOwner(record, deps) {
  try {
    return isSessionOwner(record.ownerUid, ownerRange(deps));
  } catch {
    return false;
  }
}

function closedError() {
  return new CordonError('ERR_CORDON_SESSION_MANAGER_CLOSED', 'the session manager was closed by endAll(): it opens no session any more');
}

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', `sessions: ${message}`);
}

/**
 * `claimsDir`: where a non-root provider claims owner uids (owner-claims.js;
 * every provider of its uid must give the same one). A root provider's
 * claims are host-wide in /run, so it may not move them.
 */
function checkClaimsDir(claimsDir) {
  if (claimsDir === undefined) return undefined;
  if (process.geteuid() === 0) throw invalid('claimsDir is for a non-root provider: a root provider claims owner uids host-wide in /run/cordon-session-owners');
  if (typeof claimsDir !== 'string' || !path.isAbsolute(claimsDir) || claimsDir.includes('\0')) throw invalid('claimsDir must be an absolute path');
  return path.normalize(claimsDir);
}

/** The workspace tmpfs's ceiling when the caller gives none (bytes); half the memory ceiling if less. */
const MAX_DEFAULT_WORKSPACE_BYTES = 256 << 20;

/**
 * The workspace quota against the sandbox's memory ceiling. A session's
 * workspace is a tmpfs whose pages are charged to the sandbox's memory
 * cgroup and cannot be reclaimed: a workspace as large as the ceiling fills
 * into an OOM kill of whatever runs, not ENOSPC (round 9, R9-3). As for a
 * plain run's tmpfs mounts (docs/security.md), it gets at most half the
 * ceiling: the default is half (at most 256 MiB), a larger one is refused.
 */
function workspaceQuota(requested, policy, deps) {
  const given = policy?.resources?.memoryBytes;
  // Not a valid ceiling: the launcher refuses the policy at the first start; judge by the preset's until then.
  const memoryBytes = Number.isSafeInteger(given) && given > 0 ? given : deps.workspaceWrite().resources.memoryBytes;
  const most = Math.floor(memoryBytes / 2);
  if (requested === undefined) return Math.min(MAX_DEFAULT_WORKSPACE_BYTES, most);
  if (requested > most) {
    throw invalid(`workspaceBytes ${requested} is more than half the sandbox's memory ceiling (policy.resources.memoryBytes ${memoryBytes}): a full workspace would leave its commands no memory (its pages count against the ceiling); give at most ${most} or raise the ceiling`);
  }
  return requested;
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
  out.basePolicy = options.policy ?? deps.workspaceWrite();
  out.policy = sessionPolicy(out.basePolicy, options.network);
  out.workspaceBytes = workspaceQuota(options.workspaceBytes, out.basePolicy, deps);
  out.network = options.network === undefined ? undefined : JSON.parse(JSON.stringify(options.network));
  out.root = options.root;
  out.rootDir = prepareRoot(out.root); // held by a descriptor: workspaces are made through it
  out.claimsDir = checkClaimsDir(options.claimsDir) ?? defaultClaimsDir(out.rootDir.path);
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

/**
 * A failure of acquire that is not already coded (a system call's: EMFILE
 * opening an owner claim) → ERR_CORDON_SESSION_OPEN_FAILED naming its code
 * and call; its message, which names host paths (/run/cordon-session-
 * owners/<uid>, the sessions root), stays in `cause` (round 9, R9-2).
 */
function coded(error) {
  if (typeof error?.code === 'string' && error.code.startsWith('ERR_CORDON_')) return error;
  const what = typeof error?.syscall === 'string' ? `${error.code} (${error.syscall})` : (error?.code ?? 'an unexpected error');
  return new CordonError('ERR_CORDON_SESSION_OPEN_FAILED', `the session could not be opened: ${what}`, { cause: error });
}

/** The operation as allow() gets it: frozen, its env frozen, its stdin bytes a copy (the hook cannot change what runs). */
function hookView(operation) {
  const view = { ...operation };
  if (operation.env !== undefined) view.env = Object.freeze({ ...operation.env });
  if (Buffer.isBuffer(operation.stdin)) view.stdin = Buffer.from(operation.stdin);
  return Object.freeze(view);
}

/** The live sessions of one provider process over one store. */
class SessionManager {
  constructor(deps, options) {
    this._options = checkOptions(options, deps);
    this._store = options.store ?? memorySessionStore();
    if (typeof this._store.claim !== 'function') throw invalid('store must offer claim(key, lease, create, heldByOther) (see memorySessionStore, sqliteSessionStore)');
    this._holder = leaseHolder(this._options.idleTimeoutMs);
    this._deps = deps;
    this._live = new Map();
    this._pending = new Map();
    /** Set by endAll(): no acquire opens or hands out a session after it. */
    this._closed = false;
    /** Tenants of sessions admitted but not yet live (counted by the tenant bound). */
    this._starting = [];
    const checked = this._options;
    // What a Session needs of its manager.
    this._context = {
      deps,
      options: checked,
      store: this._store,
      renewLease: (record) => {
        record.lease = this._holder.lease();
      },
      forget: (session) => this._live.get(session.id) === session && this._live.delete(session.id),
      allowOperation: (actor, scope, operation) => (checked.allow === undefined ? undefined
        : decide(checked.allow, [hookView(operation), actor, scope], 'ERR_CORDON_SESSION_POLICY_DENIED', `${operation.kind} is refused by the session policy`)),
    };
  }

  get size() {
    return this._live.size;
  }

  _audit(fields) {
    if (this._options.audit === undefined) return;
    emitAudit(this._options.audit, auditRecord(fields));
  }

  /**
   * Takes one of the tenant's slots, synchronously: the count includes the
   * starts still in flight, so concurrent acquires cannot all pass a check
   * made before any of them is counted (round 5, R5-3).
   */
  _reserveTenantSlot(tenant) {
    const { maxSessionsPerTenant } = this._options;
    const sameTenant = (t) => t === tenant;
    const held = [...this._live.values()].filter((s) => sameTenant(s.scope.tenant)).length + this._starting.filter(sameTenant).length;
    if (held >= maxSessionsPerTenant) {
      throw new CordonError('ERR_CORDON_SESSION_LIMIT', `tenant already holds ${maxSessionsPerTenant} live sessions (maxSessionsPerTenant)`);
    }
    this._starting.push(tenant);
    return () => this._starting.splice(this._starting.indexOf(tenant), 1);
  }

  /** Admission before a sandbox starts: the tenant's slot (before any await), then the budget. */
  async _open(key, scope, actor, network) {
    const release = this._reserveTenantSlot(scope.tenant);
    try {
      const { budget } = this._options;
      if (budget !== undefined) await decide(budget, [scope, actor], 'ERR_CORDON_SESSION_BUDGET', 'the budget refused a new session sandbox');
      return await this._openAdmitted(key, scope, network);
    } finally {
      release();
    }
  }

  /**
   * The stored session over its kept workspace ("restarted"), or a new
   * workspace ("created"). The record is claimed in the store first
   * (lease.js): another live provider's session is refused, never shared.
   */
  async _openAdmitted(key, scope, network) {
    const store = this._store;
    const root = this._options.rootDir;
    const workspace = workspacePath(root.path, key);
    const claim = await store.claim(key, this._holder.lease(), () => this._newRecord(key, scope, network, workspace), (lease) => this._holder.heldByOther(lease));
    if (claim.held) throw heldError(claim.record.lease);
    let record = claim.record;
    if (!claim.created && !validOwner(record, this._deps)) {
      // Not a crash and not a guess: the record is left as it is, for its operator (audited by acquire).
      throw notAnOwner(record.ownerUid);
    }
    const range = ownerRange(this._deps);
    if (!claim.created && workspaceLive(record) && ownsUid(record, this._options.claimsDir, range)) {
      // What the dead provider's sandboxes left of the owner uid goes first (owner-sweep.js).
      await sweepOwner(this._deps.killUid, record.ownerUid, record.holder);
      return this._launch(new Session(this._context, record, 'restarted'));
    }
    if (!claim.created) {
      // The kept workspace is gone (or its uid is another's now): start afresh under this claim.
      // Its uid's leftovers are swept only while that uid is still this workspace's (made ours first).
      await removeWorkspace(record, this._deps, { sweep: ownsUid(record, this._options.claimsDir, range) });
      releaseOwnerUid(record.ownerUid, record.workspace, this._options.claimsDir);
      record = { ...this._newRecord(key, scope, network, workspace), lease: record.lease };
    }
    let mounted = false;
    try {
      // A holder is in the record before it is told to stay (holder.js): a provider killed at any point leaves none unknown.
      const persist = async (holder) => {
        record.holder = holder;
        await store.put(record);
      };
      record.holder = await createWorkspace({ root, key, ownerUid: record.ownerUid, quotaBytes: this._options.workspaceBytes, agentPath: this._options.agentPath, persist, namespaceId: this._deps.namespaceId, uidInUse: uidHasProcesses });
      mounted = true;
      await store.put(record);
    } catch (error) {
      // createWorkspace undoes its own partial work; a workspace it finished is removed here.
      // Claimed by this very call, and no sandbox ran on it: nothing of its uid to sweep.
      if (mounted) await removeWorkspace(record, this._deps, { sweep: false });
      await store.delete(key).catch(() => {});
      releaseOwnerUid(record.ownerUid, record.workspace, this._options.claimsDir);
      throw error;
    }
    return this._launch(new Session(this._context, record, 'created'));
  }

  /** A new record: its owner uid claimed host-wide (owner-claims.js). */
  _newRecord(key, scope, network, workspace) {
    const now = Date.now();
    // A non-root provider's owners: the first half of its subordinate uids (holder.js).
    const { claimsDir } = this._options;
    // Never a uid something already runs as (a run of a caller's workspace owned by it: R8-1).
    const inUse = viaHolder() ? (uid) => mappedByLiveHolder(uid) || uidHasProcesses(uid) : uidHasProcesses;
    const ownerUid = claimOwnerUid(ownerRange(this._deps), workspace, claimsDir, inUse);
    return { key, scope, ownerUid, workspace, createdAt: now, lastActiveAt: now, network: network ?? null, holder: null };
  }

  async _launch(session) {
    try {
      await session._startSandbox();
    } catch (error) {
      await session.end('start-failed');
      throw error;
    }
    // The agent may already have failed (and the session ended) right after READY.
    if (!session.ended) this._live.set(session.id, session);
    else await session.end(); // its teardown finishes before anyone can acquire the key again (R5-4)
    return session;
  }

  /** The live session, or the one being opened (concurrent acquires share it), or a new one. */
  async _find(key, scope, actor, network) {
    const current = this._live.get(key);
    if (current !== undefined && !current.ended) return { session: current, origin: 'resumed' };
    // A teardown in flight: its workspace is about to be removed, so wait
    // for it and start afresh, never over it (round 5, R5-4).
    if (current !== undefined) {
      await current.end();
      if (this._live.get(key) === current) this._live.delete(key);
      return this._find(key, scope, actor, network);
    }
    if (this._closed) throw closedError();
    if (!this._pending.has(key)) {
      this._pending.set(key, this._open(key, scope, actor, network).finally(() => this._pending.delete(key)));
    }
    const session = await this._pending.get(key);
    const origin = session.origin;
    session.origin = 'resumed'; // whoever finds it next finds it warm
    return { session, origin };
  }

  /**
   * A session's allowlist is fixed when it is created (the sandbox's
   * engine is started with it): an acquire asking for another one is
   * refused rather than silently given the old one.
   */
  _checkNetwork(session, network) {
    if (network === undefined) return;
    const effective = session.network ?? this._options.network;
    if (canonicalNetwork(effective) === canonicalNetwork(network)) return;
    throw new CordonError('ERR_CORDON_SESSION_NETWORK_CONFLICT', 'this session was created with another network allowlist: end() it to change its network');
  }

  async acquire(scope, actor, options) {
    const checkedScope = checkScope(scope);
    const { network } = checkAcquireOptions(options);
    const key = sessionKey(this._options.secret, checkedScope);
    const base = { session: key, scope: checkedScope, actor, operation: 'acquire' };
    try {
      await decide(this._options.authorize, [actor, checkedScope], 'ERR_CORDON_SESSION_DENIED', 'the actor may not use this session');
    } catch (error) {
      this._audit({ ...base, denial: `${error.code}: ${error.message}` });
      throw error;
    }
    let found;
    try {
      found = await this._find(key, checkedScope, actor, network).catch((error) => { throw coded(error); });
      // One that found its session while endAll() ran: endAll ends that session, this acquire gets none.
      if (this._closed) throw closedError();
      this._checkNetwork(found.session, network);
    } catch (error) {
      const denied = /DENIED|LIMIT|BUDGET|NETWORK_CONFLICT|HELD/.test(error.code ?? '');
      this._audit({ ...base, error: error.code ?? 'ERR_CORDON_SPAWN_FAILED', denial: denied ? error.message : null });
      throw error;
    }
    found.session.touch();
    this._audit({ ...base, origin: found.origin });
    return new SessionView(found.session, actor, found.origin);
  }

  /**
   * After a restart: every stored session not live here is resumable (its
   * workspace is mounted and it was active within idleTimeoutMs) or reaped
   * (workspace unmounted and record deleted).
   */
  async recover() {
    const report = { resumable: [], reaped: [] };
    for (const record of await this._store.list()) {
      if (this._live.has(record.key) || this._holder.heldByOther(record.lease)) continue; // another live provider's
      if (!validOwner(record, this._deps)) {
        // Neither resumable nor reaped: left untouched for its operator, and said so (R8-7).
        const error = notAnOwner(record.ownerUid);
        this._audit({ session: record.key, scope: record.scope, actor: null, operation: 'recover', error: error.code, denial: error.message });
        continue;
      }
      const fresh = Date.now() - record.lastActiveAt < this._options.idleTimeoutMs;
      if (fresh && workspaceLive(record)) {
        report.resumable.push(record.key);
        continue;
      }
      // The uid is swept only if its claim still names this workspace (made ours first, so no taker races the sweep).
      if ((await removeWorkspace(record, this._deps, { sweep: ownsUid(record, this._options.claimsDir, ownerRange(this._deps)) })).removed) {
        releaseOwnerUid(record.ownerUid, record.workspace, this._options.claimsDir);
        await this._store.delete(record.key);
      }
      report.reaped.push(record.key);
    }
    return report;
  }

  /**
   * Closes the manager: every later acquire is refused
   * (ERR_CORDON_SESSION_MANAGER_CLOSED); the sessions acquires in flight
   * are opening are waited for, then every live session is ended
   * (workspaces removed). Resolves with their receipts. Before, acquires in
   * flight completed after it, live: a provider exiting then left their
   * mounts and uid claims (round 9, R9-11).
   */
  async endAll() {
    this._closed = true;
    // No new opening can start now (_find): these are all there will be.
    await Promise.allSettled([...this._pending.values()]);
    return Promise.all([...this._live.values()].map((s) => s.end('end')));
  }
}

function bindSessionManager(deps) {
  /** @param {object} options see lib/sessions/index.d.ts SessionManagerOptions */
  function createSessionManager(options) {
    const manager = new SessionManager(deps, options);
    return Object.freeze({
      acquire: (scope, actor, options) => manager.acquire(scope, actor, options),
      recover: () => manager.recover(),
      endAll: () => manager.endAll(),
      get size() { return manager.size; },
    });
  }
  return { createSessionManager };
}

module.exports = { bindSessionManager };
