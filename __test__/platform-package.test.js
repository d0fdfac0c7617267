'use strict';

// When the native addon cannot be loaded, the error tells an installed user
// which platform package is missing and how to get it back.

const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

test('a missing native addon names the platform package to install', () => {
  // Make `require('./binding.js')` fail as it does when the optional
  // platform dependency was not installed.
  const script = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (request.endsWith('binding.js')) throw Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' });
      return resolve.call(this, request, ...rest);
    };
    const cordon = require(${JSON.stringify(ROOT)});
    const { platformKey } = require(${JSON.stringify(path.join(ROOT, 'lib', 'platform-package.js'))});
    let presetCode = 'no error';
    try { cordon.readOnly(); } catch (e) { presetCode = e.code; }
    try { cordon.spawnIsolated(['/usr/bin/true'], { policy: {} }); console.log('no error'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, key: platformKey(), presetCode })); }
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
  assert.strictEqual(out.code, 'ERR_CORDON_BACKEND_UNAVAILABLE');
  // The presets are the launcher's (exported by the addon): the same coded error.
  assert.strictEqual(out.presetCode, 'ERR_CORDON_BACKEND_UNAVAILABLE');
  assert.match(out.message, new RegExp(`\`cordon-${out.key}\``));
  assert.match(out.message, /optional dependency/);
});
