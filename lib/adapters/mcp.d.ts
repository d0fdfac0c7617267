// `cordon/mcp`: Model Context Protocol both ways (docs: README "Adapters").
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { CodeMode, CodeModeResult, CodeModeTool } from '../../index';

export interface ToolsFromMcpClientOptions {
  /** Prepended to every tool name, e.g. "github." → `tools['github.search']`. */
  prefix?: string;
  /** Default: "read" when the server marks the tool `readOnlyHint`, else "write". */
  effect?(tool: McpTool): string;
  /** Keep only the tools this returns true for. */
  filter?(tool: McpTool): boolean;
}

/** The connected client's tools as Code Mode tools (each call goes through `client.callTool`). */
export declare function toolsFromMcpClient(client: Client, options?: ToolsFromMcpClientOptions): Promise<CodeModeTool[]>;

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
import type { Session } from '../../index';

export interface SessionMcpServerOptions {
  name?: string;
  version?: string;
  timeoutMs?: number;
  maxReadBytes?: number;
  onResult?(result: { tool: string; output: unknown }): void;
}

export declare function createSessionMcpServer(session: Session, options?: SessionMcpServerOptions): Server;
