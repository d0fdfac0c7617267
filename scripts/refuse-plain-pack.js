#!/usr/bin/env node
'use strict';

// `prepack` of the checkout: a plain `npm pack` (or `npm publish`, or an
// install from git) of a clone would ship no native files and fail only at
// run time, with a loader error about optional dependencies. cordon's
// packages are made by npm/pack.js (it packs with --ignore-scripts, so this
// never runs there): say so and stop.

const { version } = require('../package.json');
const { platformKey } = require('../lib/platform-package');

process.stderr.write(`cordon: a plain \`npm pack\` of this checkout has no native files (addon, cordon-runner, CLI, relay).
Build and pack with:
  npm ci && npm run build && node npm/pack.js --out DIR
then install both tarballs it prints: npm install DIR/cordon-${version}.tgz DIR/cordon-${platformKey()}-${version}.tgz
(README.md, "Install").
`);
process.exit(1);
