// Public API of cordon (hand-written; the napi loader binding.js is generated).
import type { Duplex, Readable } from 'node:stream';

/** Access to a host directory inside the sandbox. */
export type Access = 'read' | 'write' | 'none';

/** A policy (docs/policy.md). Validated strictly: unknown keys are refused. */
export interface Policy {
  formatVersion: 1;
  filesystem: {
    /** `/workspace`: read-only, writable, or absent ("none"). */
    workspace: Access;
    /** `/tmp` is always a private writable directory. */
    temp: 'write';
    /** Extra host paths, mounted at the same path. */
    extra?: ReadonlyArray<{ path: string; access: 'read' | 'write' }>;
  };
  /** "mediated" is refused with ERR_CORDON_UNSUPPORTED until a mediated frontend exists. */
  network: { mode: 'none' } | { mode: 'mediated'; allow?: ReadonlyArray<string> };
  process: { treeConfinement: 'required' };
  resources?: {
    memoryBytes?: number;
    processes?: number;
    fileSizeBytes?: number;
    cpuSeconds?: number;
    openFiles?: number;
  };
  /** Names `options.env` may set for the runner. */
  environment?: { allow: ReadonlyArray<string> };
}

export interface IsolatedOptions {
  /** Required: readOnly(), workspaceWrite(), profile(name) or a Policy object. */
  policy: Policy | Readonly<Policy>;
  /** Recorded in the receipt; 1-128 chars of [A-Za-z0-9._:-]. Default: random. */
  invocationId?: string;
  /** Host directory mounted at /workspace. Default: a fresh empty directory. */
  workspace?: string;
  /** The runner's entire environment (default: empty). Names must be in policy.environment.allow. */
  env?: Record<string, string>;
  /** bwrap's own environment additions (never the runner's). TMPDIR is always the sandbox temp. */
  launcherEnvironment?: Record<string, string>;
  /** Stop ladder windows in ms (defaults 1000 / 1000). */
  stop?: { graceMs?: number; forceMs?: number };
  /** Runs stop() after this many ms. */
  deadlineMs?: number;
  /** Runs stop() when aborted. */
  signal?: AbortSignal;
  /** Trusted absolute path of bwrap; default: /usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap. */
  bwrapPath?: string;
}

/** The receipt (docs/receipts.md). `{}` when it could not be produced — never a success. */
export interface Receipt {
  receiptVersion: 1;
  invocationId: string;
  backend: { name: 'bubblewrap'; version: string; path: string };
  command: { argv: string[]; executable: string; executableSha256: string };
  policy: {
    digest: string;
    network: { mode: 'none' | 'mediated'; allow?: string[] };
    filesystem: { workspace: Access; temp: 'write'; extra: Array<{ path: string; access: 'read' | 'write' }> };
    resources: Record<string, number>;
  };
  confinement: {
    namespaces: string[];
    uid: number;
    seccomp: null | Record<string, unknown>;
    rlimits: Array<{ name: string; soft: number; hard: number }>;
    cgroup: null | Record<string, unknown>;
  };
  startedAt: string;
  endedAt: string;
  durationMs: number;
  outcome: {
    status: 'exited' | 'signaled' | 'spawn-failed';
    exitCode: number | null;
    signal: string | null;
    message?: string;
  };
  stop: {
    requested: boolean;
    reason: 'stop' | 'deadline' | 'signal' | null;
    gracefulStopAttempted: boolean;
    forcedStopAttempted: boolean;
    containmentConfirmed: boolean;
  };
  bytes: { protocolIn: number; protocolInDiscarded: number; protocolOut: number; stderr: number };
}

export interface IsolatedResult {
  /** bwrap's exit code (the program's, or 128+N if it died of signal N). */
  returncode: number | null;
  /** Set when bwrap itself was killed by a signal (e.g. "SIGKILL"). */
  signal: string | null;
  receipt: Receipt | Record<string, never>;
  /** Always [] until a mediated network frontend exists. */
  networkReceipts: unknown[];
}

export interface IsolatedExecution {
  /** fd 3 of the program. end() half-closes (SHUT_WR); reading drains to EOF. */
  readonly protocol: Duplex;
  /** fd 1 and fd 2 of the program (and bwrap's own diagnostics). */
  readonly stderr: Readable;
  /** bwrap's pid; undefined if it could not be started (wait() then rejects). */
  readonly pid: number | undefined;
  /** Same promise every call; resolves after reaping, both streams' EOF and the receipt. */
  wait(): Promise<IsolatedResult>;
  /** Same promise every call; SIGTERM → graceMs → SIGKILL of the sandbox → forceMs. Resolves once settled. */
  stop(): Promise<void>;
}

export type CordonErrorCode =
  | 'ERR_CORDON_INVALID_COMMAND'
  | 'ERR_CORDON_INVALID_OPTIONS'
  | 'ERR_CORDON_POLICY_INVALID'
  | 'ERR_CORDON_UNSUPPORTED'
  | 'ERR_CORDON_BACKEND_UNAVAILABLE'
  | 'ERR_CORDON_SPAWN_FAILED'
  | (string & {});

export declare class CordonError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown; details?: object });
  readonly code: CordonErrorCode;
  readonly details?: { receipt?: Receipt | Record<string, never> } & Record<string, unknown>;
}

/** Launches `command` (command[0]: absolute path, no $PATH lookup) in a Bubblewrap sandbox. */
export declare function spawnIsolated(command: string[], options: IsolatedOptions): IsolatedExecution;
/** Workspace read-only, private /tmp, no network, tree confined. Deeply frozen. */
export declare function readOnly(): Readonly<Policy>;
/** As readOnly() with a writable workspace. */
export declare function workspaceWrite(): Readonly<Policy>;
/** "read-only" | "workspace-write" | "untrusted" (no workspace at all). */
export declare function profile(name: 'read-only' | 'workspace-write' | 'untrusted'): Readonly<Policy>;
/** Absolute path of the cordon-runner binary built in this checkout. */
export declare const runnerPath: string;
