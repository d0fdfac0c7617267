// `cordon/remote`: the pure-JavaScript client of `cordon host` (docs/remote.md).
// Types only are imported from the package root; at run time this never loads the native addon.
import type {
  Policy, IsolatedExecution, CodeMode, CodeModeOptions, SandboxPool, PoolStats,
} from '../../index';

import { CordonError } from '../../index';

export { CordonError };

/** A Unix-socket host (authenticated by your uid; a token optional). */
export interface RemoteUnixTarget {
  socket: string;
  token?: string;
}

/** A TLS host: `tls.ca` verifies it; `tls.cert` + `tls.key` (mutual TLS) or a `token` identify you. */
export interface RemoteTlsTarget {
  url: `tls://${string}`;
  tls: { ca: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string };
  token?: string;
}

export interface RemoteSettings {
  /** Past a run's deadline, and between two frames of a silent host, how long the client waits (ms). Default 10000. */
  slackMs?: number;
  /** The runner's program name in the host's allowlist. Default "cordon-runner". */
  runnerProgram?: string;
  /** The host's Ed25519 public key, pinned out of band: every exit's receipt must carry a signature that verifies (else ERR_CORDON_REMOTE_SIGNATURE_INVALID). */
  hostPublicKey?: string | Buffer | import('node:crypto').KeyObject;
}

/** Files uploaded into the sandbox's workspace: relative path → content. */
export interface RemoteWorkspace {
  files: Record<string, string | Buffer>;
}

/** The subset of spawnIsolated's options that names no host resource. */
export interface RemoteIsolatedOptions {
  policy: Policy | Readonly<Policy>;
  invocationId?: string;
  /** Uploaded files, or absent (an empty workspace). Never a host directory. */
  workspace?: RemoteWorkspace;
  env?: Record<string, string>;
  stop?: { graceMs?: number; forceMs?: number };
  /** The host's launcher stops the run then (clamped to the host's ceiling); the client gives up at deadlineMs + slackMs. */
  deadlineMs?: number;
  signal?: AbortSignal;
}

/** What the host said about this run: its welcome and started frames. */
export interface RemoteRunInfo {
  /** `publicKey`: the host's signing key as it announces it (proves nothing by itself: pin it). */
  host: { id: string; version: string; transport: 'unix' | 'tls'; auth: string; publicKey?: string } | null;
  tenant: string | null;
  ceilings: Record<string, number>;
  programs: string[];
  invocationId?: string | null;
  /** Each option the host lowered to its ceiling: {requested, applied}. */
  clamped?: Record<string, { requested: unknown; applied: unknown }>;
}

export interface RemoteExecution extends IsolatedExecution {
  /** null until the host's welcome. */
  readonly remote: RemoteRunInfo | null;
}

export interface RemotePoolSpawnOptions extends Omit<RemoteIsolatedOptions, 'invocationId' | 'deadlineMs' | 'signal'> {
  /** command[0] is a program name from the host's allowlist. */
  command: string[];
}

export interface RemoteSandboxPool extends Omit<SandboxPool, 'take'> {
  take(options?: { deadlineMs?: number; signal?: AbortSignal }): RemoteExecution;
  stats(): PoolStats;
}

export interface RemoteClient {
  /** command[0] is a program name from the host's allowlist (never a path); one connection per call. */
  spawnIsolated(command: string[], options: RemoteIsolatedOptions): RemoteExecution;
  createPool(spawnOptions: RemotePoolSpawnOptions, options: { size: number }): RemoteSandboxPool;
  /** Code Mode whose sandboxes run on the host; tools still run here. `network` is refused (ERR_CORDON_REMOTE_UNSUPPORTED). */
  createCodeMode(options: Omit<CodeModeOptions, 'network'>): CodeMode;
  readOnly(): Readonly<Policy>;
  workspaceWrite(): Readonly<Policy>;
  profile(name: 'read-only' | 'workspace-write' | 'untrusted'): Readonly<Policy>;
  /** The receipts the host kept for this invocation id of your tenant, newest first (after a host crash: outcome.status "host-lost"). */
  receipts(invocationId: string): Promise<Array<Record<string, unknown>>>;
  /** Refuses new runs, closes this client's pools, stops its running sandboxes; resolves once all settled. */
  close(): Promise<void>;
}

/** Throws ERR_CORDON_REMOTE_CREDENTIALS_MISSING without a socket or url (or TLS without ca and a client credential). */
export declare function connectRemote(target: RemoteUnixTarget | RemoteTlsTarget, settings?: RemoteSettings): RemoteClient;
export declare const DEFAULT_SLACK_MS: number;
