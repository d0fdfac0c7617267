'use strict';

// The runner's web globals (docs/runner.md, "Globals") inside the real
// sandbox: bwrap, seccomp and rlimits leave them working — crypto draws
// from the OS random number generator there too — and add no way out.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode } = require('./code-mode-support');

test('crypto, URL, text encoding, base64, structuredClone and Intl work inside the sandbox', async () => {
  const run = await codeMode().run(`
    const uuids = new Set(Array.from({ length: 20 }, () => crypto.randomUUID()));
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const url = new URL('/orders?id=A-1&id=A-2', 'https://shop.example');
    return {
      uuids: uuids.size,
      randomNotZero: bytes.some((b) => b !== 0),
      ids: url.searchParams.getAll('id'),
      text: new TextDecoder().decode(new TextEncoder().encode('h\\u00e9llo')),
      base64: atob(btoa('cordon')),
      clone: structuredClone(new Map([['k', [1]]])).get('k'),
      money: new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(1234.5),
      // fetch exists (Code Mode asks for extensions) but, without createCodeMode's network, only rejects.
      noWayOut: [typeof fetch, typeof XMLHttpRequest, typeof WebSocket, await fetch('https://example.com/').then(() => 'reached', (e) => e.name)],
    };`, { mode: 'execute' });
  assert.equal(run.ok, true, JSON.stringify(run.error));
  assert.deepEqual(run.result, {
    uuids: 20, randomNotZero: true, ids: ['A-1', 'A-2'], text: 'héllo', base64: 'cordon', clone: [1],
    money: '$1,234.50', noWayOut: ['function', 'undefined', 'undefined', 'TypeError'],
  });
});
