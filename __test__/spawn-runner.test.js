'use strict';

// End to end with the real cordon-runner under the real sandbox:
// ready → tool.call → tool.result → execution.result, over fd 3.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawnIsolated, readOnly, runnerPath } = require('./spawn-support').cordon;
const { jsonLines, collect } = require('./spawn-support');

const runnerBuilt = fs.existsSync(runnerPath);
const skip = runnerBuilt ? false : `cordon-runner is not built at ${runnerPath}: run \`npm run build:runner\``;
if (skip) process.emitWarning(`SKIPPING spawn-runner tests: ${skip}`);

const frame = (fields) => `${JSON.stringify({ version: 'code-bridge-v1', ...fields })}\n`;

test('cordon-runner in the sandbox: ready, a tool round trip, then the terminal result', { skip }, async () => {
  const execution = spawnIsolated([runnerPath], { policy: readOnly(), invocationId: 'e2e-runner-1' });
  const stderr = collect(execution.stderr);
  execution.protocol.write(frame({
    type: 'execute',
    executionId: 'e2e-runner-1',
    code: "const r = await tools['math.double']({value: 21}); return {value: r.value, fetch: typeof fetch, process: typeof process};",
    tools: [{ name: 'math.double' }],
    limits: { maxToolCalls: 4, maxResultBytes: 4096, timeoutMs: 5000 },
  }));
  const seen = [];
  let terminal = null;
  for await (const message of jsonLines(execution.protocol)) {
    seen.push(message.type);
    if (message.type === 'tool.call') {
      assert.equal(message.name, 'math.double');
      assert.deepEqual(message.arguments, { value: 21 });
      execution.protocol.write(frame({ type: 'tool.result', id: message.id, ok: true, result: { value: message.arguments.value * 2 } }));
    }
    if (message.type === 'execution.result') {
      terminal = message;
      execution.protocol.end();
    }
  }
  const result = await execution.wait();
  assert.deepEqual(seen, ['ready', 'tool.call', 'execution.result'], await stderr);
  assert.equal(terminal.ok, true);
  assert.deepEqual(terminal.result, { value: 42, fetch: 'undefined', process: 'undefined' });
  assert.equal(result.returncode, 0);
  assert.equal(result.receipt.backend.name, 'bubblewrap');
  assert.equal(result.receipt.policy.network.mode, 'none');
  assert.equal(result.receipt.invocationId, 'e2e-runner-1');
  assert.equal(result.receipt.command.executable, runnerPath);
  assert.deepEqual(result.networkReceipts, []);
});
