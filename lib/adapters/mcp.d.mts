// ESM declarations of `cordon/mcp` (mcp.d.ts for require): the same API, the MCP SDK's types resolved as ESM.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { CodeMode, CodeModeResult, CodeModeTool } from '../../index.js';

export interface ToolsFromMcpClientOptions {
  /** Prepended to every tool name, e.g. "github." → `tools['github.search']`. */
  prefix?: string;
  /** Default: "read" when the server marks the tool `readOnlyHint`, else "write". */
  effect?(tool: McpTool): string;
  /** Keep only the tools this returns true for. */
  filter?(tool: McpTool): boolean;
  /** Called for each tool left out because Code Mode cannot use its schema (also listed in the result's `skipped`). */
  onSkipped?(skipped: SkippedMcpTool): void;
}

/** A server tool left out of the import: its Code Mode name, and createCodeMode's error for it. */
export interface SkippedMcpTool {
  readonly name: string;
  readonly code: string;
  readonly reason: string;
}

/**
 * The connected client's tools as Code Mode tools (each call goes through `client.callTool`).
 * A tool whose schema Code Mode cannot use (draft-04, an OpenAPI `discriminator`, …) is left
 * out and listed in `skipped`; the others are imported.
 */
export declare function toolsFromMcpClient(client: Client, options?: ToolsFromMcpClientOptions): Promise<CodeModeTool[] & { readonly skipped: readonly SkippedMcpTool[] }>;

export interface CodeModeMcpServerOptions {
  /** Server name and version announced to clients. */
  name?: string;
  version?: string;
  /** Default "run_code". */
  toolName?: string;
  mode?: 'execute' | 'inspect';
  onResult?(run: CodeModeResult): void;
}

/** An MCP server with one tool that runs `{code}` in the sandbox; connect it to a transport. */
export declare function createCodeModeMcpServer(codeMode: CodeMode, options?: CodeModeMcpServerOptions): Server;

// Sessions (docs/sessions.md): a session as an MCP server with `bash`, `readFile`, `writeFile`.
import type { Session } from '../../index.js';

export interface SessionMcpServerOptions {
  name?: string;
  version?: string;
  timeoutMs?: number;
  maxReadBytes?: number;
  onResult?(result: { tool: string; output: unknown }): void;
}

export declare function createSessionMcpServer(session: Session, options?: SessionMcpServerOptions): Server;

export interface AddCodeModeToolOptions {
  /** Default "run_code". */
  toolName?: string;
  mode?: 'execute' | 'inspect';
  onResult?(run: CodeModeResult): void;
}

/** Adds the code tool (same input and structured output as createCodeModeMcpServer's) to an McpServer of your own. */
export declare function addCodeModeTool(mcpServer: McpServer, codeMode: CodeMode, options?: AddCodeModeToolOptions): RegisteredTool;

declare const adapter: { toolsFromMcpClient: typeof toolsFromMcpClient; createCodeModeMcpServer: typeof createCodeModeMcpServer; addCodeModeTool: typeof addCodeModeTool; createSessionMcpServer: typeof createSessionMcpServer };
export default adapter;
