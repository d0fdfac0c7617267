'use strict';

// The adapters' declarations (lib/adapters/*.d.ts) against the real `ai` and
// `@modelcontextprotocol/sdk` types (no skipLibCheck: our .d.ts files are
// checked too; @types/json-schema is what `ai`'s own types need): a consumer using cordon/ai and
// cordon/mcp compiles under `tsc --strict --module nodenext`, both as CommonJS
// (.ts) and as ESM (.mts, through the .d.mts beside each ESM entry); a wrong
// option does not.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');
let project;

before(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-adapter-types-'));
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '@modelcontextprotocol'), { recursive: true });
  fs.mkdirSync(path.join(modules, '@types'));
  // The checkout as the installed package, and the peers it resolves.
  fs.symlinkSync(ROOT, path.join(modules, 'cordon'));
  fs.symlinkSync(path.join(ROOT, 'node_modules', 'ai'), path.join(modules, 'ai'));
  fs.symlinkSync(path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk'), path.join(modules, '@modelcontextprotocol', 'sdk'));
  for (const types of ['node', 'json-schema']) {
    fs.symlinkSync(path.join(ROOT, 'node_modules', '@types', types), path.join(modules, '@types', types));
  }
  // incremental: a later check re-checks only what changed (tsc-consumer.js).
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, incremental: true, tsBuildInfoFile: 'tsbuildinfo', module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] },
  }));
});

after(() => fs.rmSync(project, { recursive: true, force: true }));

const CONSUMER = `
import { createCodeMode } from 'cordon';
import { codeModeTool, type CodeModeToolOutput } from 'cordon/ai';
import { toolsFromMcpClient, createCodeModeMcpServer } from 'cordon/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from 'ai';

export async function wire(client: Client): Promise<CodeModeToolOutput | undefined> {
  const codeMode = createCodeMode({ tools: await toolsFromMcpClient(client, { prefix: 'gh.', filter: (t) => t.name !== 'x' }) });
  const aiTool: Tool<{ code: string }, CodeModeToolOutput> = codeModeTool(codeMode, { mode: 'inspect', onResult: (run) => run.receipt });
  const server = createCodeModeMcpServer(codeMode, { toolName: 'run_code', mode: 'execute' });
  void server.connect;
  const out = await aiTool.execute?.({ code: 'return 1;' }, { toolCallId: 'c', messages: [] });
  return out as CodeModeToolOutput | undefined;
}
`;

/** Type-check `source` as consumer.ts (CommonJS under nodenext) or consumer.mts (ESM: the import conditions). */
function check(source, file = 'consumer.ts') {
  for (const name of ['consumer.ts', 'consumer.mts']) fs.rmSync(path.join(project, name), { force: true });
  fs.writeFileSync(path.join(project, file), source);
  return spawnSync(TSC, ['-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', timeout: 300_000 });
}

test('a consumer of cordon/ai and cordon/mcp type-checks with tsc --strict', () => {
  const result = check(CONSUMER);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('an ESM consumer (nodenext, .mts) of cordon, cordon/ai and cordon/mcp type-checks against the real MCP SDK types', () => {
  const result = check(CONSUMER, 'consumer.mts');
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('an ESM consumer sees result.logs and the adapters\' logs in the model output', () => {
  const source = `${CONSUMER}
export function logsOf(run: import('cordon').CodeModeResult, out: CodeModeToolOutput): string[] {
  const lines: string[] = run.logs.map((line) => \`\${line.level} \${line.text} \${line.time}\`);
  return [...lines, ...(out.logs ?? [])];
}
`;
  for (const file of ['consumer.mts', 'consumer.ts']) {
    const result = check(source, file);
    assert.equal(result.status, 0, `${file}: ${result.stdout}${result.stderr}`);
  }
});

test('a wrong adapter option fails to type-check', () => {
  const result = check(CONSUMER.replace("{ mode: 'inspect',", "{ mode: 'inspekt',"));
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /consumer\.ts.*error TS\d+:.*inspekt/);
});

test('each .d.mts declares what its .d.ts declares (only the import paths, header and default export differ)', () => {
  const body = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').slice(1).join('\n')
    .replace(/'\.\.\/\.\.\/index(\.js)?'/g, "'INDEX'").replace(/\n\ndeclare const adapter:[^]*$/, '\n').trimEnd();
  for (const name of ['ai', 'mcp']) {
    assert.equal(body(`lib/adapters/${name}.d.mts`), body(`lib/adapters/${name}.d.ts`), name);
  }
});
