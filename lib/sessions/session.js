'use strict';

// One live session: its workspace, its warm sandbox, its commands, its
// idle timer and its teardown. Every operation goes through `_operate`:
// session open? → the operation policy hook (before anything is spawned or
// opened; a denial is audited and spawns nothing) → the operation → one
// audit record. Teardown order (end()): refuse new work → stop the sandbox
// with the stop ladder and wait for it → only when the receipt confirms
// containment, unmount the workspace and forget the record → the session
// receipt. Teardown is idempotent and never throws.

const { CordonError } = require('../errors');
const { SessionSandbox } = require('./session-sandbox');
const { CommandLog } = require('./command-log');
const { commandSpec, statedArgv } = require('./command-spec');
const { removeWorkspace, inodesFor } = require('./workspace');
const { releaseOwnerUid } = require('./owner-claims');
const { receiptDigest } = require('../code-mode/audit');
const { WorkspaceFiles } = require('./files');
const { HolderFiles } = require('./holder-files');
const { auditRecord, emitAudit } = require('./audit');
const { sessionPolicy } = require('./network');
const { proxyListening, spentNotice } = require('./network-budget');

/** touch() writes the record to the store at most this often (ms). */
const STORE_TOUCH_MS = 1000;
/** Commands one session runs at once unless configured (ERR_CORDON_SESSION_BUSY past it). */
const DEFAULT_MAX_COMMANDS = 8;
/** File operations one session runs at once unless configured (ERR_CORDON_SESSION_BUSY past it). */
const DEFAULT_MAX_FILE_OPERATIONS = 8;

/** What an operation's result tells the audit record. */
function auditFacts(result) {
  if (result === undefined || result === null) return {};
  if (Buffer.isBuffer(result)) return { bytes: result.length };
  if (Array.isArray(result)) return { bytes: result.length };
  return { exitCode: result.exitCode, signal: result.signal, bytes: result.outputBytes ?? result.bytes };
}

/**
 * What allow() sees of a command: its argv and cwd, its environment, and
 * its stdin — the bytes when given as data (a script piped to `bash` is
 * judged by its text, not as `bash` alone: round 13's note), `'stream'`
 * when streamed (not read ahead of the command), null without.
 */
function commandOperation(kind, spec) {
  const given = spec.stdin?.stream;
  const stdin = given === undefined ? null : Array.isArray(given) ? given[0] : 'stream';
  return { kind, argv: spec.argv, cwd: spec.cwd, env: Object.fromEntries(spec.env), stdin };
}

class Session {
  /**
   * @param {object} manager what the session needs of its manager: deps, options, store, forget(), release()
   * @param {object} record the store record
   * @param {'created'|'resumed'|'restarted'} origin
   */
  constructor(manager, record, origin) {
    this._manager = manager;
    this._record = record;
    this.id = record.key;
    this.scope = Object.freeze({ ...record.scope });
    this.origin = origin;
    this.workspace = record.workspace;
    this.ownerUid = record.ownerUid;
    /** The per-session allowlist given at creation (null: the manager's network). */
    this.network = record.network ?? null;
    this._sandbox = null;
    /** Once the session's network stream budget is spent: what every later exec result says (network-budget.js). */
    this._networkNotice = null;
    this._foreground = 0;
    /** File operations in flight (bounded by maxFileOperations). */
    this._fileOperations = 0;
    this._idleTimer = null;
    this._lastActiveAt = 0;
    /** When the record was last written by touch() (ms since the epoch). */
    this._storedAt = 0;
    this._endPromise = null;
    this._failure = null;
    this.receipt = null;
    // A walk visits each entry about twice (a directory again from its parent): 4x the inode quota is ample.
    const maxRemoveEntries = 4 * inodesFor(manager.options.workspaceBytes);
    // A non-root provider's workspace is reached inside its holder (holder-files.js).
    this._files = record.holder
      ? new HolderFiles({ workspace: record.workspace, ownerUid: record.ownerUid, agentPath: manager.options.agentPath, holder: () => this._record.holder, maxRemoveEntries })
      : new WorkspaceFiles({ workspace: record.workspace, ownerUid: record.ownerUid, removeTree: manager.deps.removeTree, maxRemoveEntries });
  }

  /** Starts the warm sandbox (create, or a new one over a kept workspace after a restart). */
  async _startSandbox() {
    const { deps, options } = this._manager;
    this._policy = this.network === null ? options.policy : sessionPolicy(options.basePolicy, this.network);
    this._sandbox = new SessionSandbox({
      spawnIsolated: deps.spawnIsolated,
      agentPath: options.agentPath,
      policy: this._policy,
      workspace: this.workspace,
      workspaceBytes: options.workspaceBytes,
      holder: this._record.holder ? { pid: this._record.holder.pid, startTime: Number(this._record.holder.start) } : undefined,
      maxCommands: options.maxCommands,
      onFailure: (error) => {
        this._failure = error;
        this.end('agent-failed');
      },
    });
    await this._sandbox.start();
    this.touch();
  }

  get ended() {
    return this._endPromise !== null;
  }

  /**
   * Marks activity (three times per command, so it is cheap): the time is
   * noted; the idle timer, armed once, re-arms itself for what remains
   * when it fires early; the record (lastActiveAt, lease) goes to the
   * store at most every STORE_TOUCH_MS (a store write costs far more than
   * a command's bookkeeping, and the lease outlives the idle timeout by a
   * minute, so a second's lag loses nothing).
   */
  touch() {
    if (this.ended) return;
    const now = Date.now();
    this._lastActiveAt = now;
    if (this._idleTimer === null) this._armIdle(this._manager.options.idleTimeoutMs);
    if (now - this._storedAt < STORE_TOUCH_MS) return;
    this._storedAt = now;
    this._record.lastActiveAt = now;
    this._manager.renewLease(this._record);
    this._manager.store.put(this._record).catch(() => {});
  }

  _armIdle(ms) {
    this._idleTimer = setTimeout(() => this._onIdle(), ms);
    this._idleTimer.unref?.();
  }

  _onIdle() {
    this._idleTimer = null;
    const idleFor = Date.now() - this._lastActiveAt;
    const { idleTimeoutMs } = this._manager.options;
    if (idleFor < idleTimeoutMs) return this._armIdle(idleTimeoutMs - idleFor);
    if (this._foreground > 0) return this.touch(); // a command in flight is activity
    this.end('idle');
  }

  audit(fields) {
    if (this._manager.options.audit === undefined) return; // no sink: no record built (redaction is per command)
    emitAudit(this._manager.options.audit, auditRecord({ session: this.id, scope: this.scope, ...fields }));
  }

  /** Open? → policy hook → run → one audit record (success, error or denial). */
  async _operate(actor, operation, run) {
    const started = performance.now();
    const base = { actor, operation: operation.kind, argv: operation.argv, path: operation.path };
    try {
      if (this.ended) throw new CordonError('ERR_CORDON_SESSION_ENDED', 'the session has ended', { cause: this._failure ?? undefined });
      await this._manager.allowOperation(actor, this.scope, operation);
    } catch (error) {
      this.audit({ ...base, denial: `${error.code}: ${error.message}` });
      throw error;
    }
    try {
      const result = await run();
      this.audit({ ...base, ...auditFacts(result), durationMs: performance.now() - started });
      return result;
    } catch (error) {
      this.audit({ ...base, error: error.code ?? 'ERR_CORDON_SESSION_FILE_FAILED', durationMs: performance.now() - started });
      throw error;
    } finally {
      this.touch();
    }
  }

  /**
   * The command's spec, or its refusal (a bad argv, cwd, env, option; no
   * allow() asked, nothing sent to the agent) audited as a failed operation:
   * one record with the error's code and the command as stated, redacted
   * and cut like any command (round 12, R12-4: a refused cwd such as
   * '../../..' left no record, while a file tool's refused path did).
   */
  _commandSpec(actor, kind, command, options, defaults) {
    try {
      return commandSpec(command, options, defaults);
    } catch (error) {
      this.audit({ actor, operation: kind, argv: statedArgv(command), error: error?.code ?? 'ERR_CORDON_INVALID_COMMAND' });
      throw error;
    }
  }

  async _launch(spec) {
    const running = await this._sandbox.run({ ...spec, outputBytes: this._manager.options.outputBytes });
    this.touch();
    return running;
  }

  /** exec: `{exitCode, signal, stdout, stderr, truncated, timedOut, durationMs, outputBytes}`, and `notice` once the network budget is spent. */
  async exec(actor, command, options = {}) {
    const spec = this._commandSpec(actor, 'exec', command, options, { timeoutMs: this._manager.options.timeoutMs });
    this._foreground += 1;
    try {
      const result = await this._operate(actor, commandOperation('exec', spec), async () => (await this._launch(spec)).done);
      const notice = await this._networkSpent();
      return notice === null ? result : Object.freeze({ ...result, notice });
    } finally {
      this._foreground -= 1;
    }
  }

  /**
   * The notice once the sandbox's stream budget is spent (its proxy stopped
   * listening), else null; checked after each exec of a session with a
   * network, and sticky: the run's quota never comes back.
   */
  async _networkSpent() {
    if (this._networkNotice !== null || this._policy?.network?.mode !== 'mediated') return this._networkNotice;
    const pid = (await this._sandbox.execution.observed())?.confinement?.observed?.pid;
    if (!Number.isSafeInteger(pid) || this._sandbox.failure !== null) return null;
    if ((await proxyListening(pid)) === false && this._sandbox.failure === null) this._networkNotice = spentNotice(this._policy.resources.networkStreams);
    return this._networkNotice;
  }

  /** start: `{pid, wait(), kill(signal?)}`; output bounded like exec's. */
  async start(actor, command, options = {}) {
    const spec = this._commandSpec(actor, 'start', command, options, { timeoutMs: undefined });
    const running = await this._operate(actor, commandOperation('start', spec), () => this._launch(spec));
    const sandbox = this._sandbox;
    return Object.freeze({
      pid: running.pid,
      wait: () => running.done,
      kill: (signal = 'SIGTERM') => sandbox.kill(running, { SIGINT: 2, SIGTERM: 15, SIGKILL: 9 }[signal] ?? 9),
    });
  }

  /**
   * A file operation of files.js (no link followed, regular files only).
   * At most `maxFileOperations` at once, like commands: each holds provider
   * descriptors (a non-root provider's, a process too), so an unbounded
   * flood of one session took the provider to EMFILE for every session
   * (round 9, R9-2). Past the bound it is refused, not queued: a queue
   * would keep each waiting writeFile's bytes (up to 64 MiB) in the provider.
   */
  file(actor, kind, path, ...rest) {
    return this._operate(actor, { kind, path: String(path) }, async () => {
      const { maxFileOperations } = this._manager.options;
      if (this._fileOperations >= maxFileOperations) {
        throw new CordonError('ERR_CORDON_SESSION_BUSY', `the session already runs ${maxFileOperations} file operations (maxFileOperations)`);
      }
      this._fileOperations += 1;
      try {
        return await this._files[kind](path, ...rest);
      } finally {
        this._fileOperations -= 1;
      }
    });
  }

  /** Ends the session (idempotent, never throws); resolves with the session receipt. */
  end(reason = 'end', actor = null) {
    if (this._endPromise === null) {
      this._endPromise = this._teardown(reason).catch((error) => this._fallbackReceipt(reason, error));
      this._endPromise.then((receipt) => this.audit({ actor, operation: 'end', receiptDigest: receipt.sandbox.receiptDigest, error: receipt.failure?.code }));
    }
    return this._endPromise;
  }

  async _teardown(reason) {
    clearTimeout(this._idleTimer);
    const result = (await this._sandbox?.stop()) ?? { receipt: {} };
    // No execution: spawnIsolated refused before any process existed, so nothing can still hold the workspace.
    const contained = this._sandbox?.execution === undefined || result.receipt?.stop?.containmentConfirmed === true;
    // This provider's own sandbox, confirmed contained: nothing of the owner uid is left to
    // sweep (a restarted session's dead provider's leftovers were swept at the restart), and a
    // sweep here would kill a caller's run that shares the uid (round 8, R8-1).
    const workspace = contained ? await removeWorkspace(this._record, this._manager.deps, { sweep: false }) : { removed: false, detail: 'kept: the sandbox was not confirmed contained' };
    if (workspace.removed) {
      releaseOwnerUid(this.ownerUid, this.workspace, this._manager.options.claimsDir);
      await this._manager.store.delete(this.id).catch(() => {});
    }
    this._manager.forget(this);
    this.receipt = this._buildReceipt(reason, result, workspace);
    return this.receipt;
  }

  _buildReceipt(reason, result, workspace) {
    return Object.freeze({
      sessionReceiptVersion: 1,
      session: this.id,
      endReason: reason,
      failure: this._failure === null ? null : { code: this._failure.code, message: this._failure.message },
      workspace: Object.freeze({ removed: workspace.removed, detail: workspace.detail ?? null, ownerUid: this.ownerUid }),
      sandbox: Object.freeze({ returncode: result.returncode ?? null, signal: result.signal ?? null, receiptDigest: receiptDigest(result.receipt), receipt: result.receipt ?? {} }),
      ...(this._sandbox?.log ?? new CommandLog()).receiptPart(),
    });
  }

  _fallbackReceipt(reason, error) {
    this._manager.forget(this);
    this.receipt = this._buildReceipt(reason, { receipt: {} }, { removed: false, detail: `teardown failed: ${error?.message ?? error}` });
    return this.receipt;
  }
}

/**
 * What acquire() hands one actor: the session's operations, each audited
 * under that actor. Several views may share one live session.
 */
class SessionView {
  constructor(session, actor, origin) {
    this._session = session;
    this._actor = actor;
    /** How this acquire found the session: "created", "resumed" (warm) or "restarted" (new sandbox, files kept, processes gone). */
    this.origin = origin;
    this.id = session.id;
    this.scope = session.scope;
    this.workspace = session.workspace;
    this.ownerUid = session.ownerUid;
  }

  get ended() { return this._session.ended; }

  /** The session receipt once it ended, else null. */
  get receipt() { return this._session.receipt; }

  exec(command, options) { return this._session.exec(this._actor, command, options); }

  start(command, options) { return this._session.start(this._actor, command, options); }

  readFile(path, options) { return this._session.file(this._actor, 'readFile', path, options); }

  writeFile(path, data) { return this._session.file(this._actor, 'writeFile', path, data); }

  list(path = '') { return this._session.file(this._actor, 'list', path); }

  remove(path, options) { return this._session.file(this._actor, 'remove', path, options); }

  end() { return this._session.end('end', this._actor); }
}

module.exports = { Session, SessionView, DEFAULT_MAX_COMMANDS, DEFAULT_MAX_FILE_OPERATIONS };
