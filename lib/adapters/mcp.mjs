// ESM entry of `cordon/mcp`: the same functions as mcp.js.
import adapter from './mcp.js';

export const { toolsFromMcpClient, createCodeModeMcpServer, addCodeModeTool, createSessionMcpServer } = adapter;
export default adapter;
