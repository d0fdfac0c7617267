'use strict';

// The native addon, loaded on first use: `require('cordon')` works without
// it (types, docs, a clear error later), and every caller that needs it —
// spawnIsolated, doctor, the policy presets — gets the same coded error
// when it is missing.

const { CordonError } = require('./errors');
const { platformKey } = require('./platform-package');

let binding = null;

/** The napi binding (binding.js), or ERR_CORDON_BACKEND_UNAVAILABLE naming the platform package. */
function loadBinding() {
  if (binding === null) {
    try {
      binding = require('../binding.js');
    } catch (cause) {
      if (process.platform !== 'linux') {
        // No sandbox backend exists off Linux (bwrap needs Linux namespaces);
        // the package still installs there for `cordon/remote`.
        throw new CordonError(
          'ERR_CORDON_BACKEND_UNAVAILABLE',
          `cordon runs sandboxes on Linux only (this is ${process.platform}): ` +
            'from here, run them on a Linux sandbox host with `cordon/remote` (connectRemote, docs/remote.md)',
          { cause },
        );
      }
      throw new CordonError(
        'ERR_CORDON_BACKEND_UNAVAILABLE',
        `the cordon native addon is not available for this platform: install the platform package ` +
          `\`cordon-${platformKey()}\` (npm installs it as an optional dependency of cordon; ` +
          'reinstall without --no-optional/--omit=optional), or build it from a checkout with `npm run build`',
        { cause },
      );
    }
  }
  return binding;
}

module.exports = { loadBinding };
