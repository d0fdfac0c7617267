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
  /** "none": no network. "mediated": only the allowed destinations, through the run's egress engine (docs/network.md). */
  network: { mode: 'none' } | {
    mode: 'mediated';
    /** At most 1024; "host:port" or the object form. */
    allow?: ReadonlyArray<string | NetworkDestination>;
    /** "auto" (default): proxy environment and fd 4; "proxy"; "fd4". */
    frontend?: 'auto' | 'proxy' | 'fd4';
  };
  process: {
    treeConfinement: 'required';
    /**
     * "own" (default): a non-root provider's sandbox runs as a uid and gid of
     * its own from the provider's subordinate ranges (/etc/subuid,
     * /etc/subgid); without them the launch is refused with
     * ERR_CORDON_IDENTITY_UNAVAILABLE. "shared-with-provider": it runs as the
     * provider's own uid, sharing every per-user kernel quota — a sandbox can
     * then crash the provider (docs/security.md). A root provider's sandboxes
     * never run as root, whatever this says.
     */
    identity?: 'own' | 'shared-with-provider';
  };
  /** Absent fields get the presets' ceilings: 256 MiB, 64 processes, 64 MiB per file, 30 s CPU, 256 open files (docs/policy.md). */
  resources?: {
    memoryBytes?: number;
    processes?: number;
    fileSizeBytes?: number;
    cpuSeconds?: number;
    openFiles?: number;
    /**
     * "if-available" (default): memory/process ceilings hold for the whole tree
     * through a cgroup when the host has one, else per process (rlimits).
     * "required": no usable cgroup → ERR_CORDON_CONFINEMENT_UNAVAILABLE.
     */
    treeLimits?: 'if-available' | 'required';
    /** Mediated network quotas per run (defaults 256, 32, 64 MiB, 1 GiB). */
    networkStreams?: number;
    networkConcurrentStreams?: number;
    networkBytesOut?: number;
    networkBytesIn?: number;
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
  /**
   * `workspace` is a tmpfs of this many bytes whose pages count against the sandbox's memory (a
   * session's): /tmp and /dev/shm shrink so that the three together leave a quarter of the memory
   * ceiling to the processes. At most half the ceiling (else ERR_CORDON_INVALID_OPTIONS).
   */
  workspaceTmpfsBytes?: number;
  /** The runner's entire environment (default: empty). Names must be in policy.environment.allow. */
  env?: Record<string, string>;
  /**
   * Refused (ERR_CORDON_INVALID_OPTIONS): bwrap's environment is the sandbox init's, readable
   * inside at /proc/1/environ, so it cannot carry anything unseen. bwrap runs with an empty one.
   * @deprecated
   */
  launcherEnvironment?: never;
  /** Stop ladder windows in ms (defaults 1000 / 1000). */
  stop?: { graceMs?: number; forceMs?: number };
  /** Runs stop() after this many ms. */
  deadlineMs?: number;
  /** Runs stop() when aborted. */
  signal?: AbortSignal;
  /** Trusted absolute path of bwrap; default: /usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap. */
  bwrapPath?: string;
  /** cordon-egress-relay: every sandbox's starter (it holds the program back if the provider died during the set-up) and the in-sandbox egress relay a mediated policy needs; default: the one shipped with cordon, when present. */
  networkRelayPath?: string;
}

/** A limit as `/proc/<pid>/limits` shows it; `null` = unlimited. */
export interface ObservedLimit { name: string; soft: number | null; hard: number | null }

/** What the launcher read from outside about the running program (docs/receipts.md#observed-confinement). */
export type ObservedConfinement =
  | {
      status: 'observed';
      /** The program's host pid. */
      pid: number;
      /** Time the reads and checks took. */
      costMicros: number;
      seccomp: { mode: number; filters: number };
      noNewPrivs: boolean;
      /** Hex, as in /proc/<pid>/status. */
      capabilities: { effective: string; bounding: string };
      /** Real, effective, saved, filesystem — host ids. */
      hostUid: [number, number, number, number];
      hostGid: [number, number, number, number];
      /** Supplementary groups (host gids): empty unless the policy shares the provider's identity. */
      groups: number[];
      uidMap: Array<{ inside: number; outside: number; count: number }>;
      gidMap: Array<{ inside: number; outside: number; count: number }>;
      /** user, pid, net, ipc, uts, cgroup, mnt: the program's inode and the provider's. */
      namespaces: Record<string, { inode: number; provider: number | null }>;
      /** `membership`: /proc/<pid>/cgroup lines; `limits`: each planned limit file read back (`null`: absent). */
      cgroup: { membership: string[]; limits: Array<{ file: string; value: string | null }> };
      rlimits: ObservedLimit[];
      /** Every mount but bwrap's device nodes; `sizeBytes` for writable storage. */
      mounts: Array<{ path: string; fsType: string; writable: boolean; sizeBytes: number | null }>;
    }
  /** `not-observed`: the program ended (or had not started, or the run's stop killed the sandbox) before it could be seen; `unreadable`: a mismatch. */
  | { status: 'not-observed' | 'unreadable'; reason: string };

/** A check where the observation differed from the plan; any one fails the run. */
export interface ConfinementMismatch { check: string; planned: unknown; observed: unknown }

/** The receipt (docs/receipts.md). `wait()` never resolves without one. */
export interface Receipt {
  receiptVersion: 2;
  invocationId: string;
  backend: { name: 'bubblewrap'; version: string; path: string };
  command: { argv: string[]; executable: string; executableSha256: string };
  policy: {
    digest: string;
    network: { mode: 'none' } | { mode: 'mediated'; frontend: 'auto' | 'proxy' | 'fd4'; allow: Required<NetworkDestination>[] };
    filesystem: { workspace: Access; temp: 'write'; extra: Array<{ path: string; access: 'read' | 'write' }> };
    resources: Record<string, number>;
  };
  confinement: {
    /** Declared: what the launcher asked bwrap and the kernel for. */
    planned: {
      namespaces: string[];
      /** Host uid/gid the sandbox was started as. */
      uid: number;
      gid: number;
      /**
       * `shared-with-provider`: not root, the provider's own uid (policy.process.identity);
       * `workspace-owner`: the reserved owner of the caller's workspace; `per-run`: leased for
       * this run alone; `subordinate-owner` / `subordinate-per-run`: the same two for a non-root
       * provider, from the owner / per-run half of its subordinate range.
       */
      uidAllocation: 'shared-with-provider' | 'workspace-owner' | 'per-run' | 'subordinate-owner' | 'subordinate-per-run';
      /** Whose identity: the provider's ids, and (shared) exactly what the sandbox shares with it. */
      identity:
        | { mode: 'own'; provider: { uid: number; gid: number }; enteredBy: 'setuid' | 'subordinate-user-namespace' }
        | { mode: 'shared-with-provider'; provider: { uid: number; gid: number }; shared: string[] };
      seccomp: null | { profile: string; instructions: number; denied: string[] };
      rlimits: Array<{ name: string; soft: number; hard: number }>;
      cgroup: null | { version: 'v1' | 'v2'; memoryBytes: string | null; pidsMax: string | null; paths: string[] };
      temp: null | { mount: '/tmp'; kind: 'tmpfs'; sizeBytes: number };
      /** Every filesystem the program can write; `sizeBytes` null: a host directory the policy grants. */
      writableFilesystems: Array<{ mount: string; kind: 'tmpfs' | 'host-directory'; sizeBytes: number | null }>;
      /** Caller-named host paths (workspace, extras) as opened without following symlinks, by device and inode. */
      hostBinds: Array<{ source: string; dest: string; writable: boolean; device: number; inode: number }>;
    };
    /** Observed from outside while the program ran; `null` when no sandbox ran. */
    observed: ObservedConfinement | null;
    /** Empty on every successful run. */
    mismatches: ConfinementMismatch[];
    /**
     * Where fd 3's socket pair was made: `empty`, a pair maker's network namespace
     * (nothing of the host answers through it); `provider`, the provider's own, where
     * this process may not make a user namespace (doctor's "sandbox sockets' namespace")
     * or a namespace count was spent at that spawn. `null` when bwrap was never started.
     * Absent from a receipt of a cordon host older than this field.
     */
    channels?: null | {
      namespace: 'empty' | 'provider';
      /** The fd-4 channel's pair, made separately (mediated network with fd 4 only). */
      fd4Namespace?: 'empty' | 'provider';
    };
    /** Read from the run's cgroup at teardown; `null` without a cgroup. */
    cgroupOutcome: null | { oomKills: number; killedByCgroup: boolean };
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
    reason: 'stop' | 'deadline' | 'signal' | 'confinement-mismatch' | 'disconnect' | 'supervision-failed' | null;
    gracefulStopAttempted: boolean;
    forcedStopAttempted: boolean;
    containmentConfirmed: boolean;
  };
  bytes: { protocolIn: number; protocolInDiscarded: number; protocolOut: number; stderr: number };
  /** One per stream attempt of a mediated run ([] otherwise); docs/network.md. */
  networkReceipts: NetworkReceipt[];
  /** Attempts past the per-run cap of 4096 receipts (present only when > 0). */
  networkReceiptsDropped?: number;
  /** Mediated runs only: ms (to the µs) the provider's egress engine spent running the run's tasks (docs/receipts.md). */
  networkEngineMs?: number;
}

export interface IsolatedResult {
  /** bwrap's exit code (the program's, or 128+N if it died of signal N). */
  returncode: number | null;
  /** Set when bwrap itself was killed by a signal (e.g. "SIGKILL"). */
  signal: string | null;
  receipt: Receipt;
  /** One per stream attempt of a mediated run, refused or not; [] otherwise. */
  networkReceipts: NetworkReceipt[];
}

/** A destination of `policy.network.allow` in object form. */
export interface NetworkDestination {
  protocol: 'tcp';
  /** Canonical lowercase LDH name or strict IPv4 literal. */
  host: string;
  port: number;
  /** The TLS ClientHello's SNI must equal `host` before any byte goes upstream (names only). */
  requireTlsSni?: boolean;
  /** Admit loopback, RFC 1918, link-local, CGNAT, ULA… addresses for this destination. */
  allowPrivateAddresses?: boolean;
}

/** docs/network.md › Network receipts. */
export interface NetworkReceipt {
  id: number;
  /** "fetch": a Code Mode program's fetch, performed by the host (docs/code-mode.md › fetch). */
  frontend: 'proxy' | 'fd4' | 'fetch';
  protocol: 'HTTP_CONNECT' | 'HTTP_FORWARD' | 'SOCKS5' | 'FD4' | 'UNKNOWN' | 'HTTP' | 'HTTPS';
  /** frontend "fetch": the program's fetch id (one receipt per hop, redirects included), method and status. */
  fetchId?: number;
  method?: string;
  status?: number;
  host: string | null;
  /** Present only when the requested host was over 253 bytes; `host` holds its first 253. */
  hostTruncated?: true;
  port: number | null;
  pinnedAddress: string | null;
  /** "allowed" or a refusal reason (docs/network.md › Refusal reasons). */
  result: string;
  /** frontend "fetch" adds "timeout" and "response-too-large"; absent on a refused fetch hop. */
  end?: 'closed' | 'error' | 'quota-bytes-out' | 'quota-bytes-in' | 'cancelled' | 'timeout' | 'response-too-large' | null;
  startedAt: string;
  durationMs: number;
  bytesFromClient: number;
  bytesToClient: number;
  /** Absent on frontend "fetch". */
  sniVerified?: boolean;
  /** Absent on frontend "fetch". */
  policyDigest?: string;
  invocationId: string;
  /** fd-4 streams only: where the stream's socket pair was made (docs/network.md). */
  channelNamespace?: 'empty' | 'provider';
}

export interface IsolatedExecution {
  /** fd 3 of the program. end() half-closes (SHUT_WR); reading drains to EOF. Errors with ERR_CORDON_WRITE_QUEUE_FULL only if the native write queue was overrun (never by this stream's own flow control). */
  readonly protocol: Duplex;
  /**
   * fd 1 and fd 2 of the program (and bwrap's own diagnostics). Read it (or
   * pipe it) if you want all of it: while nothing has ever consumed it (no
   * `'data'`/`'readable'` listener, pipe, resume or async iteration), its
   * first 64 KiB are kept and the rest is discarded and counted in
   * `stderrDroppedBytes`, so a program that writes a lot never stalls on a
   * stderr nobody reads. Once consumed, it has ordinary backpressure.
   */
  readonly stderr: Readable;
  /** stderr bytes discarded because nothing was consuming `stderr` (see above); 0 when it was read. */
  readonly stderrDroppedBytes: number;
  /**
   * Bytes written to `protocol` after the run's receipt was composed (the
   * program had ended and `wait()` was about to settle, or had): dropped, in
   * neither `receipt.bytes.protocolIn` nor `protocolInDiscarded`. Those two
   * and this add up to every byte whose write callback succeeded.
   */
  readonly protocolDroppedBytes: number;
  /** bwrap's pid; undefined if it could not be started (wait() then rejects). */
  readonly pid: number | undefined;
  /** Same promise every call; resolves after reaping, both streams' EOF and the receipt. Rejects (with a `code`) when the launch failed, the observed confinement did not match the plan, or no receipt could be read. */
  wait(): Promise<IsolatedResult>;
  /** Same promise every call; SIGTERM → graceMs → SIGKILL of the sandbox → forceMs. Resolves once settled. */
  stop(): Promise<void>;
  /** The receipt's head (docs/receipts.md › "Before the end") once the launcher observed the program; null until then. */
  readonly receiptHead: ReceiptHead | null;
  /** Same promise every call: the receipt's head once the program was observed, or null when the run settled without one. */
  observed(): Promise<ReceiptHead | null>;
  /** `sha256:<hex>` of the receipt's canonical JSON (an audit record's `receiptDigest`), set when wait() resolves; null before, and after a failed run. */
  readonly receiptDigest: string | null;
}

/** The receipt while the sandbox still runs: every field but those only its end can tell (docs/receipts.md › "Before the end"). */
export type ReceiptHead = Omit<Receipt, 'endedAt' | 'durationMs' | 'outcome' | 'stop' | 'bytes' | 'networkReceipts' | 'networkReceiptsDropped' | 'networkEngineMs' | 'confinement'> & {
  confinement: Omit<Receipt['confinement'], 'cgroupOutcome'>;
};

export type CordonErrorCode =
  | 'ERR_CORDON_INVALID_COMMAND'
  | 'ERR_CORDON_INVALID_OPTIONS'
  | 'ERR_CORDON_POLICY_INVALID'
  | 'ERR_CORDON_UNSUPPORTED'
  | 'ERR_CORDON_BACKEND_UNAVAILABLE'
  | 'ERR_CORDON_SPAWN_FAILED'
  | 'ERR_CORDON_CONFINEMENT_UNAVAILABLE'
  | 'ERR_CORDON_IDENTITY_UNAVAILABLE'
  | 'ERR_CORDON_NETWORK_UNAVAILABLE'
  | 'ERR_CORDON_CONFINEMENT_MISMATCH'
  | 'ERR_CORDON_RECEIPT_UNAVAILABLE'
  | 'ERR_CORDON_WORKSPACE_UNUSABLE'
  | 'ERR_CORDON_WRITE_QUEUE_FULL'
  | 'ERR_CORDON_ADMISSION'
  | 'ERR_CORDON_INVALID_TOOL'
  | 'ERR_CORDON_INVALID_LIMITS'
  | 'ERR_CORDON_CLOSED'
  | 'ERR_CORDON_PEER_MISSING'
  | 'ERR_CORDON_MCP'
  | 'ERR_CORDON_REMOTE_CREDENTIALS_MISSING'
  | 'ERR_CORDON_REMOTE_UNSUPPORTED'
  | 'ERR_CORDON_REMOTE_UNREACHABLE'
  | 'ERR_CORDON_REMOTE_HANDSHAKE_FAILED'
  | 'ERR_CORDON_REMOTE_DISCONNECTED'
  | 'ERR_CORDON_REMOTE_TIMEOUT'
  | 'ERR_CORDON_REMOTE_PROTOCOL'
  | 'ERR_CORDON_REMOTE_FRAME_TOO_LARGE'
  | 'ERR_CORDON_REMOTE_REFUSED'
  | 'ERR_CORDON_REMOTE_SIGNATURE_INVALID'
  | (string & {});

export declare class CordonError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown; details?: object });
  readonly code: CordonErrorCode;
  readonly details?: { receipt?: Receipt | Record<string, never> } & Record<string, unknown>;
}

/** Launches `command` (command[0]: absolute path, no $PATH lookup) in a Bubblewrap sandbox. */
export declare function spawnIsolated(command: string[], options: IsolatedOptions): IsolatedExecution;
/**
 * Workspace read-only, private /tmp, no network, tree confined. Deeply frozen.
 * The presets are the launcher's (the native addon exports them): without the
 * addon this throws ERR_CORDON_BACKEND_UNAVAILABLE, as spawnIsolated() does.
 */
export declare function readOnly(): Readonly<Policy>;
/** As readOnly() with a writable workspace. */
export declare function workspaceWrite(): Readonly<Policy>;
/** "read-only" | "workspace-write" | "untrusted" (no workspace at all). */
export declare function profile(name: 'read-only' | 'workspace-write' | 'untrusted'): Readonly<Policy>;
/** Absolute path of cordon-runner: the installed platform package's (`cordon-linux-x64-gnu`, …), else this checkout's `target/release` build. */
export declare const runnerPath: string;

/** One host check of `cordon doctor` (docs/security.md). */
export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  /** A failed `required` check stops every launch; `optional` weakens confinement. */
  readonly importance: 'required' | 'optional';
  readonly detail: string;
  /** The exact command or setting that fixes a failed check ("" when ok). */
  readonly fix: string;
}

export interface DoctorReport {
  /** True when every required check passed. */
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

/** Checks this host with the launcher's own probes: bwrap, user namespaces, seccomp, cgroups, runner (default `runnerPath`), mediated-network relay. The same report as `cordon doctor --json`. */
export declare function doctor(options?: { bwrapPath?: string; runnerPath?: string; networkRelayPath?: string }): DoctorReport;

// ---- Code Mode (docs/code-mode.md) ----

/** A JSON Schema object: draft 2020-12, 2019-09 or draft-07 (picked from `$schema`; none means draft-07). */
export type JsonSchema = { [keyword: string]: unknown };

/** A Standard Schema that can describe itself as JSON Schema (zod ≥ 4.2, valibot ≥ 1.2, arktype ≥ 2.1.28). */
export interface StandardJsonSchemaLike<Input = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: { readonly input: Input; readonly output: unknown } | undefined;
    readonly jsonSchema: { readonly input: (options: { readonly target: string }) => Record<string, unknown> };
  };
}

/** An AI SDK schema (`jsonSchema<T>({...})`, `zodSchema(...)` from `ai`). */
export interface AiSdkSchemaLike<T = unknown> {
  readonly _type: T;
  readonly jsonSchema: unknown;
}

/** Every form a tool schema may take (converted to JSON Schema at createCodeMode; docs/code-mode.md). */
export type ToolSchema = JsonSchema | StandardJsonSchemaLike | AiSdkSchemaLike;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type SchemaRequired<S> = S extends { readonly required: readonly (infer R)[] } ? Extract<R, string> : never;
type SchemaObject<S> = S extends { readonly properties: infer P }
  ? Simplify<
      { -readonly [K in Extract<keyof P, SchemaRequired<S>>]: FromJsonSchema<P[K]> }
      & { -readonly [K in Exclude<keyof P, SchemaRequired<S>>]?: FromJsonSchema<P[K]> }
    >
  : { [key: string]: unknown };
type SchemaTypeName<T, S> =
  T extends 'string' ? string
  : T extends 'number' | 'integer' ? number
  : T extends 'boolean' ? boolean
  : T extends 'null' ? null
  : T extends 'array' ? (S extends { readonly items: infer I } ? FromJsonSchema<I>[] : unknown[])
  : T extends 'object' ? SchemaObject<S>
  : unknown;

/**
 * The TypeScript type of the values a JSON Schema literal accepts: `type` (one or a list), `properties`
 * with `required`, `items`, `enum`, `const`, `anyOf`/`oneOf`. Anything it does not model is `unknown`.
 */
export type FromJsonSchema<S> =
  S extends { readonly const: infer C } ? C
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly anyOf: readonly (infer A)[] } ? FromJsonSchema<A>
  : S extends { readonly oneOf: readonly (infer A)[] } ? FromJsonSchema<A>
  : S extends { readonly type: readonly (infer T)[] } ? SchemaTypeName<T, S>
  : S extends { readonly type: infer T } ? SchemaTypeName<T, S>
  : unknown;

/** A handler's `args` for a schema: Standard Schema input type, AI SDK type, or inferred from a JSON Schema literal. */
export type ToolArgs<S> =
  S extends { readonly '~standard': { readonly types?: infer T } } ? (NonNullable<T> extends { readonly input: infer I } ? I : unknown)
  : S extends { readonly _type: infer T } ? T
  : FromJsonSchema<S>;

export interface ToolContext {
  readonly executionId: string;
  /** The runner's call id: 1, 2, 3 … within the execution. */
  readonly callId: number;
  readonly mode: 'execute' | 'inspect';
  /** `run(…, {context})`, passed through untouched; never sent to the sandbox. */
  readonly context: unknown;
  /** Aborted when the run stops waiting for this call (deadline, cancel, end). */
  readonly signal: AbortSignal;
}

export interface CodeModeTool {
  /** 1–256 UTF-8 bytes, no NUL, unique; the code calls `tools[name](args)`. */
  name: string;
  description: string;
  /**
   * Must describe an object (`{type: "object", …}`): arguments are always an object. A JSON Schema, a Standard
   * Schema with a JSON Schema converter (zod 4, valibot, arktype) or an AI SDK schema; anything else is refused.
   */
  inputSchema: ToolSchema;
  /** Optional: types the result in declarations() and is checked against the projected result. */
  outputSchema?: ToolSchema;
  /** "read" tools are granted in inspect mode; anything else only in execute mode. */
  effect: 'read' | 'write' | (string & {});
  handler(args: any, ctx: ToolContext): unknown;
  /** Shapes what the code sees; the output must be plain JSON. */
  project?(result: any): unknown;
}

export interface CodeModeLimits {
  /** Host: code size in UTF-8 bytes. Default 65536. */
  sourceBytes?: number;
  /** Runner: tool calls per run. Default 50. */
  toolCalls?: number;
  /** Host: one projected tool result, JSON bytes. Default 1 MiB. */
  toolResultBytes?: number;
  /** Host: all tool results of a run; ≥ toolResultBytes. Default 4 MiB. */
  cumulativeResultBytes?: number;
  /** Runner (re-checked by the host): the final result, JSON bytes. Default 512 KiB. */
  resultBytes?: number;
  /** Runner: wall clock from `ready`; the host adds a drain slack. Default 5000. */
  timeoutMs?: number;
  /** Runner: QuickJS heap. Default 64 MiB. */
  memoryBytes?: number;
  /** Runner: tool calls outstanding at once (`Promise.all`), 1–8. Default 8. With a runner that does not confirm the extension: 1. */
  maxOutstandingCalls?: number;
  /** Runner (checked by the host): UTF-8 bytes of console text kept in `result.logs`. Default 64 KiB. */
  logBytes?: number;
  /** Runner: timers (setTimeout/setInterval/setImmediate) pending at once, 1–100000; one more throws a RangeError. Default 1000. */
  maxTimers?: number;
}

export interface CodeModeAdmission {
  /** Sandboxes alive at once. Default 4. */
  maxConcurrent?: number;
  /** Runs waiting for a slot. Default 16. */
  maxQueued?: number;
  /** How long a run may wait. Default 30000. */
  queueTimeoutMs?: number;
}

export type CodeModeEvent =
  | { type: 'execution.started'; executionId: string; parentId: string | null; time: number; mode: string; tools: string[]; limits: Required<CodeModeLimits> }
  | { type: 'execution.finished'; executionId: string; parentId: string | null; time: number; ok: boolean; durationMs: number; metrics: CodeModeMetrics; error?: { kind: string; code?: string }; droppedEvents?: number }
  | { type: 'tool.requested'; executionId: string; parentId: string; time: number; callId: number; name: string; arguments: unknown }
  | { type: 'tool.completed'; executionId: string; parentId: string; time: number; callId: number; name: string; durationMs: number; resultBytes: number; result: unknown }
  | { type: 'tool.failed'; executionId: string; parentId: string; time: number; callId: number; name: string; durationMs: number; resultBytes: 0; error: { code: string }; /** Advice about the provider's own tool (e.g. shape results in project()); never shown to the model. */ providerHint?: string }
  | { type: 'console'; executionId: string; parentId: string; time: number; level: CodeModeLogLevel; /** Redacted (secret-looking values replaced), at most 4 KiB; the full line is in result.logs. */ text: string; bytes: number; elapsedMs: number; truncated?: true }
  /** A program fetch (with `network`): query and header values redacted like tool arguments. */
  | { type: 'fetch.requested'; executionId: string; parentId: string; time: number; fetchId: number; method: string; origin?: string; path?: string; query?: unknown; headers?: unknown; requestBytes?: number; url?: unknown }
  | { type: 'fetch.completed'; executionId: string; parentId: string; time: number; fetchId: number; status: number; durationMs: number; responseBytes: number }
  | { type: 'fetch.failed'; executionId: string; parentId: string; time: number; fetchId: number; durationMs: number; error: { code: string } };

export type CodeModeLogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

/** One console line of the program, as it logged it. */
export interface CodeModeLogLine {
  level: CodeModeLogLevel;
  text: string;
  /** Wall clock (ms since the epoch) when the host received the line. */
  time: number;
  /** Milliseconds since the runner's `ready`. */
  elapsedMs: number;
  /** The line that crossed `logBytes`, cut to fit; nothing was kept after it. */
  truncated?: true;
}

export interface CodeModeMetrics {
  elapsedMs: number;
  toolCalls: number;
  /** Program fetches made (present only with `network`); they do not count as tool calls. */
  networkRequests?: number;
  resultBytes: number;
  cumulativeResultBytes: number;
  /** Console lines received, their text bytes, and lines the runner dropped past `logBytes`. */
  logLines: number;
  logBytes: number;
  droppedLogLines: number;
}

export interface CodeModeAuditRecord {
  auditVersion: 1;
  executionId: string;
  parentId: string | null;
  mode: string;
  startedAt: string;
  /** Redacted, then cut to 4 KiB. */
  code: string;
  codeTruncated: boolean;
  codeBytes: number;
  tools: string[];
  limits: Required<CodeModeLimits>;
  outcome: { ok: true } | { ok: false; kind: string; code?: string };
  metrics: CodeModeMetrics;
  /** Console lines, redacted, at most 4 KiB of text in all. */
  logs: readonly { level: CodeModeLogLevel; text: string; elapsedMs: number }[];
  receiptDigest: string | null;
  invocationId: string | null;
}

export type CodeModeErrorKind =
  | 'cancelled' | 'timeout' | 'javascript' | 'memory' | 'result' | 'result_limit' | 'limit' | 'internal'
  | 'source' | 'protocol' | 'runner_exit' | 'sandbox';

interface CodeModeResultBase {
  /** The program's console output, in order, bounded by `logBytes`. */
  logs: readonly CodeModeLogLine[];
  metrics: CodeModeMetrics;
  events: readonly CodeModeEvent[];
  /** The sandbox receipt; `{}` when no sandbox ran or none was read. */
  receipt: Receipt | Record<string, never>;
  /** The sandbox keeps network "none" (docs/network.md); with `network`, one receipt per fetch hop (frontend "fetch"). */
  networkReceipts: NetworkReceipt[];
  /** Fetch receipts past 4096 in one run, counted instead of kept. */
  networkReceiptsDropped?: number;
  executionId: string;
  /** Absent from a result resolved before teardown (`resultBeforeTeardown`): it comes with `final`. */
  audit: CodeModeAuditRecord;
  /** `resultBeforeTeardown` only: the receipt fields `receipt` (then a `ReceiptHead`) does not have yet. */
  receiptPending?: readonly string[];
  /** `resultBeforeTeardown` only: the sandbox's verdict once its processes are confirmed gone; never rejects. */
  final?: Promise<CodeModeFinal>;
}

/** What a result resolved before teardown learns once the sandbox is gone (docs/code-mode.md › Result before teardown). */
export interface CodeModeFinal {
  /** The run's outcome as the ordinary result would have it: false also when the sandbox was not accounted for. */
  ok: boolean;
  error?: { kind: CodeModeErrorKind; code?: string; message: string };
  receipt: Receipt | Record<string, never>;
  audit: CodeModeAuditRecord;
}

export type CodeModeResult =
  | (CodeModeResultBase & { ok: true; result: unknown })
  | (CodeModeResultBase & { ok: false; error: { kind: CodeModeErrorKind; code?: string; message: string } });

export interface CodeModeOptions {
  tools: CodeModeTool[];
  limits?: CodeModeLimits;
  /** Default readOnly(). Never take it from the model or an untrusted repository. */
  policy?: Policy;
  admission?: CodeModeAdmission;
  onEvent?(event: CodeModeEvent): void;
  onAudit?(record: CodeModeAuditRecord): void;
  /**
   * `protocol` (default "cordon"): "code-bridge-v1" names a reference runner, which is started with only
   * the flags of the code-bridge-v1 spec (no `--max-log-bytes`).
   */
  runner?: { path?: string; stop?: { graceMs: number; forceMs: number }; protocol?: 'cordon' | 'code-bridge-v1' };
  /**
   * Default true: an unknown keyword or format in a tool schema (a typo such as `propertees`) is refused at
   * createCodeMode instead of silently validating nothing. `x-…` annotation keywords are always accepted.
   */
  strictSchemas?: boolean;
  /**
   * The program's `fetch` (docs/code-mode.md › fetch), performed by this host under the egress engine's rules:
   * exact `host:port` entries (no wildcards), names resolved here and pinned, non-global addresses refused
   * unless `allowPrivate`, TLS verified (`ca` replaces the system roots). Without it, `fetch` is a TypeError.
   */
  network?: CodeModeNetwork;
  /**
   * Default false. true: run() resolves once the runner's terminal frame decided the run, with the receipt's
   * head as `receipt`, its missing fields in `receiptPending`, and `final` for the verdict, the whole receipt
   * and the audit record once the sandbox is gone (docs/code-mode.md › Result before teardown).
   */
  resultBeforeTeardown?: boolean;
  /** Keep `size` (1–64) sandboxes prewarmed; each serves one run and is never reused. The waiting sandboxes do not keep the process alive: when nothing else does, the pool is closed at 'beforeExit' and Node exits. See docs/performance.md. */
  pool?: { size: number };
}

export interface CodeModeNetwork {
  /** 1–1024 canonical "host:port" entries, e.g. "api.example.com:443" (an IPv4 literal is its own host). */
  allow: string[];
  /** Default false: admit loopback, RFC 1918, link-local… addresses (tests, internal services). */
  allowPrivate?: boolean;
  /** PEM certificate authorities trusted instead of the system ones. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Request body bound, default 1 MiB (0–64 MiB). */
  maxRequestBytes?: number;
  /** Response body bound, default 1 MiB (0–64 MiB): past it the fetch fails (RESPONSE_TOO_LARGE) and reading stops. */
  maxResponseBytes?: number;
  /** Fetches per run, default 16 (1–100000). */
  maxRequests?: number;
  /** Per fetch, redirects included, default 10000 ms; the run's own timeout bounds it too. */
  timeoutMs?: number;
  /** Redirects followed, default 20 (0–20), each re-admitted. */
  maxRedirects?: number;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Default "execute" (every tool); "inspect" grants only effect "read" tools. */
  mode?: 'execute' | 'inspect';
  /** 1–128 of [A-Za-z0-9._:-]; default a random UUID. */
  executionId?: string;
  /** Parent of execution events, e.g. the agent turn or outer tool call. */
  parentId?: string | null;
  context?: unknown;
}

export interface CodeMode {
  /**
   * Resolves one result shape for everything that happens to the code. Rejects only for caller errors
   * (ERR_CORDON_INVALID_OPTIONS), ERR_CORDON_ADMISSION, ERR_CORDON_CLOSED after close(), and spawnIsolated's own
   * configuration errors: the policy and runner path are first checked here (ERR_CORDON_POLICY_INVALID,
   * ERR_CORDON_INVALID_COMMAND, …).
   */
  run(code: string, options?: RunOptions): Promise<CodeModeResult>;
  /** TypeScript declarations of the tools a mode grants. */
  declarations(options?: { mode?: 'execute' | 'inspect' }): string;
  /** A tool description for an LLM, with limits and declarations. */
  description(options?: { mode?: 'execute' | 'inspect' }): string;
  stats(): { active: number; queued: number; maxConcurrent: number; maxQueued: number; queueTimeoutMs: number };
  /** The prewarmed pool's counters, or null when created without `pool`. */
  poolStats(): PoolStats | null;
  /** Refuse new runs (ERR_CORDON_CLOSED) and stop the pool's waiting sandboxes; resolves once they have ended. Idempotent. */
  close(): Promise<void>;
  readonly limits: Readonly<Required<CodeModeLimits>>;
  /** The resolved network options (allow as a set), or null without `network`. */
  readonly network: Readonly<Omit<Required<CodeModeNetwork>, 'allow' | 'ca'> & { allow: ReadonlySet<string>; ca?: readonly (string | Buffer)[] }> | null;
}

/** A capability-scoped Code Mode host over spawnIsolated and cordon-runner. */
export declare function createCodeMode(options: CodeModeOptions): CodeMode;

/**
 * Returns `tool` unchanged; its only job is typing: the handler's `args` are inferred from `inputSchema`
 * (a JSON Schema literal — no `as const` needed —, a zod 4 / valibot / arktype schema, or an AI SDK schema).
 */
export declare function defineTool<const S extends ToolSchema, R = unknown>(tool: {
  name: string;
  description: string;
  inputSchema: S;
  outputSchema?: ToolSchema;
  effect: 'read' | 'write' | (string & {});
  handler(args: ToolArgs<S>, ctx: ToolContext): R | Promise<R>;
  project?(result: Awaited<R>): unknown;
}): CodeModeTool;

/** What every sandbox of a pool is spawned with (fixed per pool). Per-run options go to take(). */
export interface PoolSpawnOptions extends Omit<IsolatedOptions, 'invocationId' | 'deadlineMs' | 'signal'> {
  command: string[];
}

export interface PoolStats {
  size: number;
  idle: number;
  closed: boolean;
  spawned: number;
  taken: number;
  idleDeaths: number;
  spawnFailures: number;
  /** Takes that found no idle sandbox and spawned one on the spot. */
  coldTakes: number;
  lastError: { code?: string; message: string } | null;
}

export interface SandboxPool {
  /** A waiting sandbox, the caller's alone from now on (never handed out again); spawned on the spot when none is idle. deadlineMs and signal count from the take. */
  take(options?: { deadlineMs?: number; signal?: AbortSignal }): IsolatedExecution;
  stats(): PoolStats;
  /** Stops every sandbox still in the pool and resolves once each has ended. Idempotent; take() then throws ERR_CORDON_CLOSED. */
  close(): Promise<void>;
  readonly size: number;
}

/** `size` (1–64) sandboxes spawned ahead of time with one command and option set; refilled in the background. Waiting sandboxes do not keep the process alive: when nothing else does, the pool is closed at 'beforeExit' (a taken one does until its run ends). */
export declare function createPool(spawnOptions: PoolSpawnOptions, options: { size: number }): SandboxPool;

// Sessions: a per-conversation workspace with a warm sandbox (docs/sessions.md).
export * from './lib/sessions/index';
