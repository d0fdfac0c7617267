'use strict';

// cordon as a user gets it: `npm pack` the main package and this machine's
// platform package (npm/pack.js), install both tarballs into a fresh project
// (ordinary dependencies such as ajv come from the registry), then use it
// there — require and import each run a real sandboxed Code Mode program,
// the `cordon` bin runs, and a TypeScript consumer type-checks with
// `tsc --strict` against the shipped index.d.ts. Runs after `npm run build`.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { packMain, packPlatform } = require('../npm/pack');
const { platformKey } = require('../lib/platform-package');

const TSC = path.join(__dirname, '..', 'node_modules', '.bin', 'tsc');
/** This machine's platform package (linux-x64-gnu here; arm64 on an arm64 runner). */
const PLATFORM = platformKey();
/** npm install from tarballs + registry metadata; generous for a cold cache. */
const INSTALL_TIMEOUT_MS = 180_000;

let work;
let project;

function write(name, text) {
  fs.writeFileSync(path.join(project, name), text);
}

function run(command, args, options = {}) {
  return spawnSync(command, args, { cwd: project, encoding: 'utf8', timeout: 300_000, ...options });
}

before(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-install-'));
  const tarballs = path.join(work, 'tarballs');
  project = path.join(work, 'project');
  fs.mkdirSync(tarballs);
  fs.mkdirSync(project);
  const main = packMain(tarballs);
  const platform = packPlatform(PLATFORM, tarballs);
  write('package.json', JSON.stringify({ name: 'cordon-consumer', version: '1.0.0', private: true }));
  // `ai` at the checkout's version: the cordon/ai types are checked against it below.
  const ai = `ai@${require('ai/package.json').version}`;
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', main, platform, '@types/node@20', ai], {
    cwd: project, stdio: ['ignore', 'ignore', 'inherit'], timeout: INSTALL_TIMEOUT_MS,
  });
});

after(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const PROGRAM = `
const tools = [{
  name: 'math.double', description: 'Double a number', effect: 'read',
  inputSchema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'] },
  handler: ({ value }) => ({ value: value * 2 }),
}];
const run = await cordon.createCodeMode({ tools }).run("return (await tools['math.double']({ value: 21 })).value;");
console.log(JSON.stringify({ ok: run.ok, result: run.result, backend: run.receipt.backend?.name, runnerPath: cordon.runnerPath }));
`;

function assertSandboxedRun(result) {
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  assert.deepEqual([out.ok, out.result, out.backend], [true, 42, 'bubblewrap']);
  assert.equal(out.runnerPath, path.join(project, 'node_modules', `cordon-${PLATFORM}`, 'cordon-runner'));
}

test('the platform package is installed with its addon and executable binaries', () => {
  const dir = path.join(project, 'node_modules', `cordon-${PLATFORM}`);
  assert.ok(fs.existsSync(path.join(dir, `cordon.${PLATFORM}.node`)));
  for (const name of ['cordon-runner', 'cordon', 'cordon-egress-relay']) {
    assert.equal(fs.statSync(path.join(dir, name)).mode & 0o111, 0o111, `${name} keeps its executable bits`);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'cordon', 'package.json'), 'utf8'));
  assert.equal(manifest.optionalDependencies[`cordon-${PLATFORM}`], manifest.version);
  assert.equal(fs.existsSync(path.join(project, 'node_modules', 'cordon', 'target')), false, 'no build tree is shipped');
});

test('require("cordon") runs a sandboxed Code Mode program with the packaged runner', () => {
  write('cjs.cjs', `const cordon = require('cordon');\n(async () => {\n${PROGRAM}\n})();\n`);
  assertSandboxedRun(run(process.execPath, ['cjs.cjs']));
});

test('import("cordon") runs a sandboxed Code Mode program with the packaged runner', () => {
  write('esm.mjs', `import * as cordon from 'cordon';\nconst dynamic = await import('cordon');\nif (dynamic.createCodeMode !== cordon.createCodeMode) throw new Error('two module instances');\n${PROGRAM}`);
  assertSandboxedRun(run(process.execPath, ['esm.mjs']));
});

// A loopback HTTP server on the host; the sandboxed python3 reaches it only through the
// mediated proxy (HTTP_PROXY), which needs the packaged cordon-egress-relay inside the sandbox.
const NETWORK_PROGRAM = `
const http = require('node:http');
const { spawnIsolated, readOnly } = require('cordon');
const server = http.createServer((req, res) => res.end('through the relay ' + req.url));
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const policy = { ...readOnly(), network: { mode: 'mediated', allow: [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }] } };
  const code = 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:' + port + '/packed").read().decode())';
  const run = spawnIsolated(['/usr/bin/python3', '-c', code], { policy });
  let out = '';
  run.stderr.on('data', (chunk) => { out += chunk; });
  run.protocol.resume();
  const done = await run.wait();
  server.close();
  console.log(JSON.stringify({ returncode: done.returncode, out, receipts: done.networkReceipts.length }));
});
`;

test('a mediated-network program runs from the tarball install, through the packaged relay', () => {
  write('network.cjs', NETWORK_PROGRAM);
  const result = run(process.execPath, ['network.cjs']);
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  assert.equal(out.returncode, 0, out.out);
  assert.equal(out.out.trim(), 'through the relay /packed');
  assert.ok(out.receipts >= 1, 'the stream is in networkReceipts');
});

test('the adapters load only with their optional peer installed, and say what to install', () => {
  // `ai` is installed here (the cordon/ai types test), the MCP SDK is not.
  write('peer.cjs', `try { require('cordon/mcp').createCodeModeMcpServer(require('cordon').createCodeMode({ tools: [] })); } catch (e) { console.log(e.code, e.message); }`);
  const result = run(process.execPath, ['peer.cjs']);
  assert.match(result.stdout, /^ERR_CORDON_PEER_MISSING .*npm install @modelcontextprotocol\/sdk/);
});

test('the `cordon` bin runs a program in the sandbox and doctor passes', () => {
  const bin = path.join(project, 'node_modules', '.bin', 'cordon');
  const relay = run(bin, ['run', '--policy', 'untrusted', '--', '/bin/sh', '-c', '/usr/bin/tr a-z A-Z <&3 >&3; exit 5'], { input: 'packed\n' });
  assert.equal(relay.status, 5, relay.stderr);
  assert.equal(relay.stdout, 'PACKED\n');
  const doctor = run(bin, ['doctor']);
  assert.equal(doctor.status, 0, doctor.stdout + doctor.stderr);
  assert.match(doctor.stdout, new RegExp(`^ok +runner: .*cordon-${PLATFORM}/cordon-runner$`, 'm'));
});

const TSCONFIG = JSON.stringify({
  compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] },
});

const VALID_TS = `
import { createCodeMode, readOnly, spawnIsolated, type CodeModeResult, type CodeModeTool } from 'cordon';

const double: CodeModeTool = {
  name: 'math.double', description: 'Double', effect: 'read',
  inputSchema: { type: 'object', properties: { value: { type: 'number' } } },
  handler: (args: { value: number }) => ({ value: args.value * 2 }),
};
const codeMode = createCodeMode({ tools: [double], limits: { timeoutMs: 2000, toolCalls: 4 }, policy: readOnly() });
export async function main(): Promise<number> {
  const run: CodeModeResult = await codeMode.run('return 1;', { mode: 'inspect' });
  const child = spawnIsolated(['/bin/true'], { policy: readOnly(), stop: { graceMs: 10, forceMs: 10 } });
  const done = await child.wait();
  return run.ok ? Number(run.result) + (done.returncode ?? 0) : run.error.kind.length;
}
`;

test('a TypeScript consumer type-checks with tsc --strict against the shipped types', () => {
  write('tsconfig.json', TSCONFIG);
  write('consumer.ts', VALID_TS);
  const result = run(TSC, ['-p', 'tsconfig.json']);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('a TypeScript consumer of cordon/ai type-checks with only cordon and ai installed (cordon ships what its types need)', () => {
  write('tsconfig.json', TSCONFIG);
  write('consumer.ts', `
import { createCodeMode } from 'cordon';
import { codeModeTool, type CodeModeToolOutput } from 'cordon/ai';
export const tool = codeModeTool(createCodeMode({ tools: [] }), { mode: 'inspect' });
export function busy(output: CodeModeToolOutput): boolean { return !output.ok && output.error.kind === 'busy'; }
`);
  const result = run(TSC, ['-p', 'tsconfig.json']);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('a wrong option fails to type-check', () => {
  write('tsconfig.json', TSCONFIG);
  write('consumer.ts', VALID_TS.replace('timeoutMs: 2000', 'timeoutMS: 2000'));
  const result = run(TSC, ['-p', 'tsconfig.json']);
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /consumer\.ts.*error TS\d+:.*'timeoutMS'/);
});
