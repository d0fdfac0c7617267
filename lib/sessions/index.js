'use strict';

// Sessions (docs/sessions.md): a per-conversation workspace with a warm
// sandbox, commands and host-side file tools. Bound by index.js to its
// spawnIsolated, the addon's tree removal and workspace-owner range, so this folder never
// loads the addon itself.

const { bindSessionManager } = require('./manager');
const { memorySessionStore } = require('./memory-store');
const { sqliteSessionStore } = require('./sqlite-store');

/**
 * @param {{spawnIsolated: Function, workspaceWrite: Function, agentPath: string,
 *   removeTree: {tree: (dir: string, maxEntries?: number) => Promise<void>, contents: (dir: string, maxEntries?: number) => Promise<void>},
 *   killUid: (uid: number, nsId?: string) => Promise<number>,
 *   namespaceId: (pid: number) => string | null,
 *   ownerRange: () => {first: number, count: number}}} deps
 */
function bindSessions(deps) {
  return { ...bindSessionManager(deps), memorySessionStore, sqliteSessionStore };
}

module.exports = { bindSessions };
