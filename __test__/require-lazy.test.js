'use strict';

// `require('cordon')` does not load Ajv (~100 modules, 35–50 ms here): a provider that
// only spawns sandboxes, or runs sessions, never pays for it; the first tool schema
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
