// ESM declarations of `cordon/ai` (ai.d.ts for require): the same API, its imports resolved as ESM.
import type { Tool } from 'ai';
import type { CodeMode, CodeModeResult, CodeModeErrorKind } from '../../index.js';

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

declare const adapter: { codeModeTool: typeof codeModeTool };
export default adapter;
