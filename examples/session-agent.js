'use strict';

// `node examples/session-agent.js` (as root, after `npm run build`): one AI SDK
// agent turn against a real cordon session. The model is the SDK's mock
// (no API key, no network): it writes a script, runs it with `bash`, and
// reads the result back. Swap in a real model and the tools stay the same.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { generateText, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { createSessionManager } = require('..');
const { sessionTools } = require('../lib/adapters/ai');

/** The mock model's plan: one tool call per step, then a final answer. */
const PLAN = [
  ['writeFile', { path: 'primes.py', content: 'print([n for n in range(2, 50) if all(n % d for d in range(2, n))])\n' }],
  ['bash', { command: 'python3 primes.py | tee primes.txt' }],
  ['readFile', { path: 'primes.txt' }],
];

function mockModel() {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const call = PLAN[step];
      step += 1;
      const content = call
        ? [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: call[0], input: JSON.stringify(call[1]) }]
        : [{ type: 'text', text: 'The primes below 50 are in primes.txt.' }];
      return { content, finishReason: { unified: call ? 'tool-calls' : 'stop', raw: undefined }, usage: { inputTokens: { total: 0 }, outputTokens: { total: 0 } }, warnings: [] };
    },
  });
}

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-session-example-'));
  const sessions = createSessionManager({
    secret: crypto.randomBytes(32),
    root,
    authorize: (actor, scope) => actor.tenant === scope.tenant,
    audit: (record) => console.log('audit:', record.operation, record.command ?? record.path ?? '', record.exitCode ?? ''),
  });
  const session = await sessions.acquire({ tenant: 'acme', conversation: 'demo' }, { tenant: 'acme', user: 'ada' });
  try {
    const result = await generateText({ model: mockModel(), tools: sessionTools(session, { timeoutMs: 10_000 }), stopWhen: stepCountIs(5), prompt: 'List the primes below 50.' });
    for (const step of result.steps) for (const r of step.toolResults) console.log(`${r.toolName} →`, JSON.stringify(r.output));
    console.log('model:', result.text);
  } finally {
    const receipt = await session.end();
    console.log(`session ended: ${receipt.commandCount} command(s), workspace removed: ${receipt.workspace.removed}`);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
