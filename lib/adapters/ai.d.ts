// `cordon/ai`: a Code Mode instance as one Vercel AI SDK tool (docs: README "Adapters").
import type { Tool } from 'ai';
import type { CodeMode, CodeModeResult, CodeModeErrorKind } from '../../index';

/** What the model receives from one run; `logs` (console lines, `[level] ` before non-log levels) only when the program logged. */
export type CodeModeToolOutput =
  | { ok: true; result: unknown; logs?: string[] }
  | { ok: false; error: { kind: CodeModeErrorKind; code?: string; message: string }; logs?: string[] }
  /** Admission control refused the run (the host is at capacity): the model should retry. */
  | { ok: false; error: { kind: 'busy'; code: 'ERR_CORDON_ADMISSION'; message: string }; logs?: string[] };

export interface CodeModeToolOptions {
  /** Default "execute"; "inspect" grants only `effect: "read"` tools. */
  mode?: 'execute' | 'inspect';
  /** Default `codeMode.description({mode})`: limits and the tools' declarations. */
  description?: string;
  /** Sees the whole result (receipt, events, audit), which the model does not. */
  onResult?(run: CodeModeResult): void;
}

/** An `ai` tool taking `{code}` and running it through `codeMode.run`. */
export declare function codeModeTool(codeMode: CodeMode, options?: CodeModeToolOptions): Tool<{ code: string }, CodeModeToolOutput>;

// Sessions (docs/sessions.md): a session as the tools `bash`, `readFile`, `writeFile`.
import type { Session } from '../../index';

export type SessionToolOutput =
  | { ok: true; exitCode: number | null; signal: string | null; stdout: string; stderr: string; truncated: boolean; timedOut: boolean; notice?: string }
  | { ok: true; content: string; bytes: number; encoding?: 'base64' }
  | { ok: true; bytes: number }
  | { ok: false; error: { code: string; message: string } };

export interface SessionToolOptions {
  /** Per-command timeout for `bash` (ms); default the session manager's. */
  timeoutMs?: number;
  /** `readFile` cap (bytes); default 256 KiB. */
  maxReadBytes?: number;
  /** Sees every tool result. */
  onResult?(result: { tool: 'bash' | 'readFile' | 'writeFile'; output: SessionToolOutput }): void;
}

/** The AI SDK tools `bash` ({command, cwd?}), `readFile` ({path}) and `writeFile` ({path, content}) bound to a session. */
export declare function sessionTools(session: Session, options?: SessionToolOptions): {
  bash: Tool<{ command: string; cwd?: string }, SessionToolOutput>;
  readFile: Tool<{ path: string }, SessionToolOutput>;
  writeFile: Tool<{ path: string; content: string }, SessionToolOutput>;
};
