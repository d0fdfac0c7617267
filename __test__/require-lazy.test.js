'use strict';

// `require('cordon')` does not load Ajv (~100 modules, 35–50 ms here), nor Code Mode or
// sessions: a provider that only spawns sandboxes, or runs sessions, never pays for them; the first tool schema
// compiled loads the one draft it needs (lib/code-mode/schema-compiler.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

function loaded(script) {
  const out = execFileSync(process.execPath, ['-e', `
    const cordon = require(${JSON.stringify(ROOT)});
    ${script}
    const ajv = Object.keys(require.cache).filter((k) => /[/]node_modules[/]ajv[/]/.test(k));
    console.log(JSON.stringify({ ajv: ajv.length, draft2020: ajv.some((k) => k.endsWith('/2020.js')) }));
  `], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop());
}

test('require("cordon") loads no Ajv module', () => {
  assert.deepEqual(loaded(''), { ajv: 0, draft2020: false });
});

/** Which of cordon's own lib/code-mode and lib/sessions modules are loaded after `script`. */
function ownLoaded(script) {
  const out = execFileSync(process.execPath, ['-e', `
    const cordon = require(${JSON.stringify(ROOT)});
    ${script}
    const own = (dir) => Object.keys(require.cache).filter((k) => k.startsWith(${JSON.stringify(path.join(ROOT, 'lib'))} + '/' + dir + '/')).length;
    const host = Object.keys(require.cache).includes(${JSON.stringify(path.join(ROOT, 'lib', 'code-mode', 'index.js'))});
    console.log(JSON.stringify({ codeMode: own('code-mode'), host, sessions: own('sessions') }));
  `], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop());
}

test('require("cordon") loads neither Code Mode nor sessions; each loads at its first use', () => {
  assert.deepEqual(ownLoaded(''), { codeMode: 0, host: false, sessions: 0 });
  const codeMode = ownLoaded("cordon.createCodeMode({ tools: [cordon.defineTool({ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: (a) => a })] });");
  assert.ok(codeMode.host && codeMode.sessions === 0, JSON.stringify(codeMode));
  // Sessions share the audit and redaction helpers, not the Code Mode host.
  const sessions = ownLoaded('cordon.memorySessionStore();');
  assert.ok(sessions.sessions > 0 && !sessions.host, JSON.stringify(sessions));
});

test('the exports keep their names and arity, and ESM imports them by name', () => {
  const cordon = require(ROOT);
  for (const [name, arity] of [['createCodeMode', 1], ['defineTool', 1], ['createSessionManager', 1], ['memorySessionStore', 0], ['sqliteSessionStore', 1]]) {
    assert.equal(typeof cordon[name], 'function', name);
    assert.equal(cordon[name].name, name);
    assert.equal(cordon[name].length, arity, name);
  }
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { createCodeMode, defineTool, createSessionManager, memorySessionStore, sqliteSessionStore } from ${JSON.stringify(path.join(ROOT, 'index.js'))};
    console.log([createCodeMode, defineTool, createSessionManager, memorySessionStore, sqliteSessionStore].map((f) => typeof f).join());
  `], { encoding: 'utf8' });
  assert.equal(out.trim(), 'function,function,function,function,function');
});

test('the first tool schema compiled loads Ajv, for its own draft', () => {
  const tool = (inputSchema) => `cordon.createCodeMode({ tools: [{ name: 'echo', description: 'echo', effect: 'read',
    inputSchema: ${JSON.stringify(inputSchema)}, handler: (a) => a }] });`;
  const draft07 = loaded(tool({ type: 'object' }));
  assert.ok(draft07.ajv > 0, 'a draft-07 schema was compiled with Ajv');
  assert.equal(draft07.draft2020, false);
  const draft2020 = loaded(tool({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' }));
  assert.equal(draft2020.draft2020, true);
});

test('a validator worker loads Ajv before it reports ready, so no request\'s budget pays for it', async () => {
  const { Worker } = require('node:worker_threads');
  const file = path.join(ROOT, 'lib', 'code-mode', 'validator-worker.js');
  // The worker's own `ready` message is intercepted: what was loaded at that moment.
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads');
    const post = parentPort.postMessage.bind(parentPort);
    parentPort.postMessage = (message) => {
      if (message && message.ready) {
        const loaded = Object.keys(require.cache);
        post({ probe: ['/ajv/dist/ajv.js', '/ajv/dist/2019.js', '/ajv/dist/2020.js', '/ajv-formats/dist/index.js']
          .map((end) => loaded.some((k) => k.endsWith(end))) });
      }
      return post(message);
    };
    require(${JSON.stringify(file)});
  `, { eval: true });
  try {
    const probe = await new Promise((resolve, reject) => {
      worker.on('message', (m) => { if (m.probe) resolve(m.probe); });
      worker.on('error', reject);
    });
    assert.deepEqual(probe, [true, true, true, true], 'draft-07, 2019-09, 2020-12 and ajv-formats loaded at ready');
  } finally {
    await worker.terminate();
  }
});
