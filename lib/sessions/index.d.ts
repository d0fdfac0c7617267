// Sessions (docs/sessions.md): re-exported by cordon's index.d.ts.
import type { Policy, Receipt } from '../../index';

/** The caller's words for a conversation; the session key is HMAC(secret, scope). */
export interface SessionScope {
  tenant: string;
  space?: string;
  conversation: string;
}

/** A hook's verdict: `true`/`{allow: true}` allow; anything else (or a throw) denies. */
export type SessionDecision = boolean | { allow: boolean; reason?: string };

export type SessionOperationKind = 'exec' | 'start' | 'readFile' | 'writeFile' | 'list' | 'remove';
export interface SessionOperation {
  kind: SessionOperationKind;
  /** exec/start: the argv the agent would run (a shell command is [shell, '-c', script]). */
  argv?: string[];
  /** exec/start: the working directory inside the sandbox. */
  cwd?: string;
  /** exec/start: the command's environment (the defaults and the caller's `env`), frozen. */
  env?: Readonly<Record<string, string>>;
  /**
   * exec/start: the stdin as given: a copy of its bytes when given as data (a script piped to a
   * shell is judged by its text), `'stream'` when streamed (not read ahead of the command), null without.
   */
  stdin?: Buffer | 'stream' | null;
  /** file operations: the workspace-relative path as given. */
  path?: string;
}

export interface SessionAuditRecord {
  auditVersion: 1;
  at: string;
  session: string;
  scope: SessionScope;
  actor: string;
  /** 'recover': a stored record recover() refused (`error`: ERR_CORDON_SESSION_RECORD_INVALID). */
  operation: 'acquire' | 'end' | 'recover' | SessionOperationKind;
  /** exec/start: redacted, then cut to 4 KiB; a refused call's command as stated (`error` its code). */
  command?: string;
  commandTruncated?: boolean;
  /** cut to 4 KiB (UTF-8); `pathTruncated` then true. */
  path: string | null;
  pathTruncated?: boolean;
  origin: 'created' | 'resumed' | 'restarted' | null;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
  bytes: number | null;
  receiptDigest: string | null;
  error: string | null;
  denial: string | null;
}

export interface SessionRecord {
  key: string;
  scope: SessionScope;
  ownerUid: number;
  workspace: string;
  createdAt: number;
  lastActiveAt: number;
  /** The per-session allowlist given to the acquire that created it (null: the manager's network). */
  network?: SessionNetwork | null;
  /** Which provider process drives the session (lib/sessions/lease.js). */
  lease?: SessionLease | null;
}

/** A store lease: held while that process (same boot, pid and start time) lives and expiresAt has not passed. */
export interface SessionLease {
  holder: string;
  pid: number;
  start: string | null;
  boot: string;
  expiresAt: number;
}

/** A network allowlist: named hosts only (no `*`, no IP literal). */
export interface SessionNetwork {
  allow: Array<string | { host: string; port: number; requireTlsSni?: boolean; allowPrivateAddresses?: boolean }>;
}

export interface SessionAcquireOptions {
  /** This session's allowlist (fixed at creation; another one for a live or stored session is ERR_CORDON_SESSION_NETWORK_CONFLICT). */
  network?: SessionNetwork;
}

/** Where sessions are remembered across provider restarts. */
export interface SessionStore {
  readonly kind: string;
  get(key: string): Promise<SessionRecord | null>;
  put(record: SessionRecord): Promise<void>;
  delete(key: string): Promise<void>;
  list(): Promise<SessionRecord[]>;
  /**
   * Atomically: `{held: true}` when `heldByOther(record.lease)`, else the
   * record of `key` (or `create()`'s, inserted) stored under `lease`.
   */
  claim(key: string, lease: SessionLease | null, create: () => SessionRecord, heldByOther: (lease: SessionLease | null | undefined) => boolean): Promise<{ record: SessionRecord; created: boolean; held: boolean }>;
  close(): Promise<void>;
}

export interface SessionManagerOptions {
  /** Server-held secret, at least 32 bytes. */
  secret: Buffer | string;
  /** Absolute directory holding the session workspaces (created 0711). */
  root: string;
  /** Runs on every acquire, before anything else. */
  authorize(actor: unknown, scope: SessionScope): SessionDecision | Promise<SessionDecision>;
  /** Runs before each operation spawns or opens anything; a denial is ERR_CORDON_SESSION_POLICY_DENIED. */
  allow?(operation: SessionOperation, actor: unknown, scope: SessionScope): SessionDecision | Promise<SessionDecision>;
  /** Runs before a session sandbox starts, after the tenant bound; a denial is ERR_CORDON_SESSION_BUDGET. */
  budget?(scope: SessionScope, actor: unknown): SessionDecision | Promise<SessionDecision>;
  /** Receives one record per operation; whatever it throws is ignored. */
  audit?(record: SessionAuditRecord): void | Promise<void>;
  /** Default: an in-memory store. */
  store?: SessionStore;
  /** Every session's default allowlist (a session may give its own to acquire). */
  network?: SessionNetwork;
  /** The session sandbox's policy; default workspaceWrite(). */
  policy?: Policy;
  /** The exec agent; default the cordon-exec-agent shipped with cordon. */
  agentPath?: string;
  /**
   * A non-root provider's owner-uid claims directory (absolute; made 0700,
   * must be this uid's own). Every provider of the same uid must give the
   * same one. Default: `<home>/.cordon/session-owners` (passwd home, when
   * it is this uid's and no one else may write it), else
   * `<root>/.owner-claims`. Refused for a root provider (its claims are
   * host-wide in /run/cordon-session-owners). docs/sessions.md "Owner uids".
   */
  claimsDir?: string;
  /** Default 15 min. */
  idleTimeoutMs?: number;
  /** Workspace quota (tmpfs size); default half the policy's memory ceiling, at most 256 MiB; more than half is refused (ERR_CORDON_INVALID_OPTIONS). */
  workspaceBytes?: number;
  /** Concurrent commands per session; default 8. */
  maxCommands?: number;
  /** Concurrent file operations (readFile, writeFile, list, remove) per session; past it ERR_CORDON_SESSION_BUSY; default 8. */
  maxFileOperations?: number;
  /** stdout + stderr kept per command; default 1 MiB. */
  outputBytes?: number;
  /** Per-command timeout unless exec gives one; default 120 s. */
  timeoutMs?: number;
  /** Live sessions per tenant in this manager; default 16. */
  maxSessionsPerTenant?: number;
}

/** Strings without NUL and well-formed UTF-16 (a lone surrogate: ERR_CORDON_INVALID_COMMAND, before the agent). */
export type SessionCommand = string[] | { shell?: 'bash' | 'sh'; script: string };

export interface SessionExecOptions {
  /** Relative to the workspace. */
  cwd?: string;
  /** Over PATH, HOME=/workspace, LANG=C.UTF-8. Values without NUL, well-formed UTF-16 (else ERR_CORDON_INVALID_OPTIONS). */
  env?: Record<string, string>;
  /** Bytes (at most 1 MiB), or a stream (a Node Readable or any async iterable), sent in 32 KiB chunks with one in flight. */
  stdin?: string | Uint8Array | AsyncIterable<string | Uint8Array>;
  timeoutMs?: number;
  onStdout?(chunk: Buffer): void;
  onStderr?(chunk: Buffer): void;
}

export interface SessionExecResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** True when stdout + stderr went past outputBytes (what was kept is the first outputBytes). */
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
  /** The bytes of output the host received: all the command wrote up to the cap, then at most one 32 KiB chunk more (the agent forwards nothing past it; round 11, R11-5). */
  outputBytes: number;
  /** Present once the session's network stream budget is spent: says so (docs/sessions.md, Network). */
  notice?: string;
}

export interface SessionBackgroundCommand {
  readonly pid: number;
  wait(): Promise<SessionExecResult>;
  kill(signal?: 'SIGINT' | 'SIGTERM' | 'SIGKILL'): void;
}

export interface SessionDirEntry {
  /** null when the name is not valid UTF-8: then nameHex holds its bytes (no path of the file tools names it). */
  name: string | null;
  nameHex?: string;
  type: 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other';
  size: number;
}

export interface SessionCommandReceipt {
  /** The command's number in the session (1 = first). */
  seq: number;
  argvSha256: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number | null;
  outputBytes: number;
  truncated: boolean;
  settled: boolean;
}

export interface SessionReceipt {
  sessionReceiptVersion: 1;
  session: string;
  endReason: 'end' | 'idle' | 'agent-failed' | 'start-failed';
  failure: { code: string; message: string } | null;
  workspace: { removed: boolean; detail: string | null; ownerUid: number };
  sandbox: { returncode: number | null; signal: string | null; receiptDigest: string | null; receipt: Receipt | Record<string, never> };
  /** The first 64 and the last 64 commands (all of them up to 128). */
  commands: SessionCommandReceipt[];
  /** Every command the session started. */
  commandCount: number;
  /** Commands between the first and last 64, not listed. */
  commandsOmitted: number;
  /** sha256 chain over every command's line (JSON) in the order they settled, from sha256(""). */
  commandsDigest: string;
}

export interface Session {
  readonly id: string;
  /** How this acquire found it: "restarted" means a new sandbox over kept files (processes are gone). */
  readonly origin: 'created' | 'resumed' | 'restarted';
  readonly scope: SessionScope;
  readonly workspace: string;
  readonly ownerUid: number;
  readonly ended: boolean;
  readonly receipt: SessionReceipt | null;
  exec(command: SessionCommand, options?: SessionExecOptions): Promise<SessionExecResult>;
  start(command: SessionCommand, options?: SessionExecOptions): Promise<SessionBackgroundCommand>;
  readFile(path: string, options?: { maxBytes?: number }): Promise<Buffer>;
  writeFile(path: string, data: string | Uint8Array): Promise<{ bytes: number }>;
  /** At most 10 000 entries; `truncated` is true when the directory held more. */
  list(path?: string): Promise<SessionDirEntry[] & { truncated: boolean }>;
  /** `recursive`: a directory and everything below it (no link followed, bounded; ERR_CORDON_SESSION_REMOVE_INCOMPLETE past the bound). */
  remove(path: string, options?: { recursive?: boolean }): Promise<{ removed: SessionDirEntry['type'] }>;
  end(): Promise<SessionReceipt>;
}

export interface SessionManager {
  acquire(scope: SessionScope, actor: unknown, options?: SessionAcquireOptions): Promise<Session>;
  recover(): Promise<{ resumable: string[]; reaped: string[] }>;
  /** Closes the manager (later acquires: ERR_CORDON_SESSION_MANAGER_CLOSED), waits for acquires in flight, ends every live session. */
  endAll(): Promise<SessionReceipt[]>;
  readonly size: number;
}

export declare function createSessionManager(options: SessionManagerOptions): SessionManager;
export declare function memorySessionStore(): SessionStore;
export declare function sqliteSessionStore(file: string): SessionStore;
