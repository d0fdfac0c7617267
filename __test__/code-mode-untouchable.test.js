'use strict';

// Nothing a model sends can stall the provider (issue 11 §1): real Code Mode
// runs in the real sandbox throw the worst payloads we know at the host while
// a 10 ms interval keeps ticking; the event loop's worst stall stays ≤ 50 ms.
// Each payload is sized to the default limits (frames up to ~1 MiB). The
// stall excludes time the kernel kept the thread waiting for a CPU (see
// measureLoop): a loaded CI machine is not the model's doing.

const test = require('node:test');
const assert = require('node:assert/strict');
const { leastStall } = require('./event-loop-stall');
const { codeMode, tool } = require('./code-mode-support');

/** The bound the issue sets for any one blocking stretch of the provider's event loop. */
const MAX_BLOCK_MS = 50;

const hostileTools = (seen) => [
  tool('tags.set', (args) => { seen.push('tags.set'); return args.tags.length; }, {
    inputSchema: { type: 'object', properties: { tags: { type: 'array', uniqueItems: true } }, required: ['tags'] },
  }),
  tool('name.check', () => { seen.push('name.check'); return true; }, {
    inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
  }),
  tool('email.send', () => { seen.push('email.send'); return true; }, {
    inputSchema: { type: 'object', properties: { to: { type: 'string', format: 'email' } } },
  }),
  tool('tree.put', () => { seen.push('tree.put'); return true; }, {
    // Each level tries its first branch over the whole subtree, fails at the end, tries the second: 2^depth.
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: { n: { anyOf: [{ type: 'array', prefixItems: [{ $ref: '#/$defs/n' }], items: { const: 'x' } }, { type: 'array', prefixItems: [{ $ref: '#/$defs/n' }] }, { type: 'number' }] } },
      type: 'object',
      properties: { t: { $ref: '#/$defs/n' } },
    },
  }),
  tool('echo', (args) => { seen.push('echo'); return Object.keys(args).length; }),
  // A result that echoes the model's data, checked by a quadratic outputSchema.
  tool('tags.normalize', (args) => args.tags, { outputSchema: { type: 'array', uniqueItems: true } }),
];

// Model programs, each at the default limits' edge, with what the model must see.
// `call(name, args)` is how models write it: await, catch, report the message.
const CALL = 'async function call(name, args) { try { return await tools[name](args); } catch (e) { return String(e.message).slice(0, 300); } }\n';
const PAYLOADS = [
  ['quadratic uniqueItems over 32 000 small arrays (as many values as the host parses)',
    'return await call("tags.set", {tags: Array.from({length: 32000}, (_, i) => [i])});', /VALIDATION_TIMEOUT/],
  ['quadratic uniqueItems over ~1 MiB of small arrays', 'return await call("tags.set", {tags: Array.from({length: 260000}, (_, i) => [i % 10])});', /INVALID_ARGUMENTS: .*too complex/],
  ['quadratic outputSchema over an echoed result', 'return await call("tags.normalize", {tags: Array.from({length: 32000}, (_, i) => [i])});', /VALIDATION_TIMEOUT: the result for "tags.normalize"/],
  ['catastrophic pattern', 'return await call("name.check", {s: "a".repeat(60) + "!"});', /VALIDATION_TIMEOUT/],
  ['format over a 1 MiB string', 'return await call("email.send", {to: "a".repeat(1000000) + "@"});', /INVALID_ARGUMENTS|VALIDATION_TIMEOUT/],
  ['recursive anyOf over 100-deep nesting (2^100 branches)', 'let t = 0; for (let i = 0; i < 100; i++) t = [t, 0]; return await call("tree.put", {t});', /VALIDATION_TIMEOUT/],
  ['many keys', 'const o = {}; for (let i = 0; i < 90000; i++) o["k" + i] = 0; return await call("echo", o);', /INVALID_ARGUMENTS: .*too complex/],
  ['distinct keys past their bound, values under theirs', 'const o = {}; for (let i = 0; i < 20000; i++) o["k" + i] = {}; return await call("echo", {o});', /INVALID_ARGUMENTS: .*distinct object keys/],
  ['keys just under the distinct-key bound', 'const o = {}; for (let i = 0; i < 16000; i++) o["\\u00e9" + i] = 0; return await call("echo", o);', /^16000$/],
  ['empty containers (the most values per byte)', 'return await call("echo", {a: Array.from({length: 340000}, () => ({}))});', /INVALID_ARGUMENTS: .*too complex/],
  ['empty containers just under the value bound', 'return await call("echo", {a: Array.from({length: 65000}, () => ({}))});', /^1$/],
  ['huge string argument', 'return await call("echo", {s: "\\\\\\"".repeat(250000)});', /^1$/],
  ['deep nesting at the runner\'s limit', 'let t = {}; for (let i = 0; i < 120; i++) t = {t}; return await call("echo", t);', /^1$/],
  ['many frames: 2000 tool calls', 'let n = 0; for (let i = 0; i < 2000; i++) n += await call("echo", {i}); return n;', /^2000$/],
  ['reserved key deep inside', 'return await call("echo", JSON.parse("{\\"a\\":" + "[".repeat(100) + "{\\"__proto__\\":{}}" + "]".repeat(100) + "}"));', /INVALID_ARGUMENTS: .*reserved key/],
  ['stderr flood through console', 'for (let i = 0; i < 4000; i++) console.log("x".repeat(4000)); return 1;', /^1$/],
  ['final result of ~512 KiB of empty containers', 'return Array.from({length: 170000}, () => []);', /RESULT_TOO_COMPLEX/],
  ['final result just under the value bound', 'return Array.from({length: 65000}, () => []);', /^array$/],
];

/** What the model saw, as one string: the returned value, or the run's error code. */
function outcome(result) {
  if (!result.ok) return `${result.error.code}: ${result.error.message}`;
  return Array.isArray(result.result) ? 'array' : String(result.result);
}

test('no model-sent payload blocks the provider\'s event loop for more than 50 ms', { timeout: 600_000 }, async (t) => {
  const seen = [];
  const mode = codeMode({ tools: hostileTools(seen), limits: { toolCalls: 2000, timeoutMs: 20_000, memoryBytes: 256 * 1024 * 1024 } });
  const report = [];
  for (const [name, program, expected] of PAYLOADS) {
    // A payload over the bound is sent again (up to 3 times in all): one that blocks the loop
    // does so every time; a one-off GC or page-fault stall of a loaded machine does not.
    const measured = await leastStall(() => mode.run(CALL + program), MAX_BLOCK_MS);
    const row = { name, outcome: outcome(measured.value).slice(0, 160), expected, stalls: measured.stalls.join('/') };
    for (const key of ['stallMs', 'onCpuMs', 'gapMs', 'runWaitMs', 'gcMs']) row[key] = Math.round(measured[key]);
    report.push(row);
  }
  t.diagnostic(`stall (on CPU) / wall gap / runqueue wait / longest GC (ms) [each attempt's stall] — payload → what the model saw\n${report.map((row) => `${row.stallMs} (${row.onCpuMs}) / ${row.gapMs} / ${row.runWaitMs} / ${row.gcMs} [${row.stalls}]  ${row.name} → ${row.outcome}`).join('\n')}`);
  for (const row of report) {
    assert.match(row.outcome, row.expected, row.name);
    assert.ok(row.stallMs <= MAX_BLOCK_MS, `${row.name}: the event loop stalled over ${MAX_BLOCK_MS} ms on every attempt (${row.stalls} ms; least: wall gap ${row.gapMs} ms, ${row.runWaitMs} ms waiting for a CPU, longest GC ${row.gcMs} ms)`);
  }
  assert.ok(!seen.includes('name.check') && !seen.includes('tree.put'), 'no handler ran on arguments that were not validated');
});

test('an own __proto__ key in tool arguments is refused before the handler runs, unless the schema names the key', async () => {
  const merged = [];
  const settings = tool('settings.update', (args) => {
    // The handler shape the refusal protects: a merge into defaults.
    const next = Object.assign({ theme: 'light' }, args);
    merged.push({ keys: Object.keys(args), isAdmin: next.isAdmin });
    return 'ok';
  });
  const named = tool('classes.describe', (args) => `${args.constructor}/${args.prototype}`, {
    inputSchema: { type: 'object', properties: { constructor: { type: 'string' }, prototype: { type: 'string' } } },
  });
  const mode = codeMode({ tools: [settings, named] });
  const result = await mode.run(`
    const out = [];
    for (const text of ['{"__proto__": {"isAdmin": true}}', '{"nested": [{"constructor": {"prototype": {"isAdmin": true}}}]}']) {
      try { out.push(await tools['settings.update'](JSON.parse(text))); } catch (e) { out.push(e.message); }
    }
    out.push(await tools['classes.describe'](JSON.parse('{"constructor": "Car", "prototype": "Vehicle"}')));
    return out;`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.match(result.result[0], /INVALID_ARGUMENTS: arguments for "settings.update" carry the reserved key "\/__proto__"/);
  assert.match(result.result[1], /INVALID_ARGUMENTS: .*reserved key "\/nested\/0\/constructor"/);
  assert.equal(result.result[2], 'Car/Vehicle');
  assert.deepEqual(merged, [], 'the handler never ran on a reserved key');
  const failedCodes = result.events.filter((e) => e.type === 'tool.failed').map((e) => e.error.code);
  assert.deepEqual(failedCodes, ['INVALID_ARGUMENTS', 'INVALID_ARGUMENTS']);
});
