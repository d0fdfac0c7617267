// ESM entry point: the same objects as index.js.
import cordon from './index.js';

export const { spawnIsolated, readOnly, workspaceWrite, profile, runnerPath, CordonError, createCodeMode, defineTool, createPool, doctor, createSessionManager, memorySessionStore, sqliteSessionStore } = cordon;
export default cordon;
