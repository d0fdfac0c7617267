// Extension mode without the fetch extension: only `fetch`, rejecting with
// a TypeError that says how a host enables it. Kept apart from fetch.js so
// that the common world compiles these few lines, not the whole of fetch.js
// (~0.8 ms of QuickJS compilation after `execute`, docs/performance.md).
(function () {
  'use strict';
  const HOW_TO_ENABLE = 'fetch is not available: this host did not enable network access for the program '
    + '(a cordon provider enables it with createCodeMode({ network: { allow: ["api.example.com:443"] } }))';
  Object.defineProperty(globalThis, 'fetch', {
    value: function fetch() { return Promise.reject(new TypeError(HOW_TO_ENABLE)); },
    writable: true, configurable: true, enumerable: false,
  });
})
