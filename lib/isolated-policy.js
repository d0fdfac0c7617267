'use strict';

// Policy presets (docs/policy.md), read from the launcher through the addon;
// the plain-JSON snapshot of policies and options lives in plain-json.js.

const { CordonError } = require('./errors');
const { deepFreeze } = require('./deep-freeze');
const { loadBinding } = require('./native');
const { toPlainJson, isPlainObject } = require('./plain-json');

// The presets are the launcher's (crates/launcher/src/request/presets.rs), read
// once from the addon: name → policy JSON text, in the launcher's order.
let presetTexts = null;
function presets() {
  if (presetTexts === null) {
    const list = JSON.parse(loadBinding().policyPresets());
    presetTexts = new Map(list.map(({ name, policy }) => [name, JSON.stringify(policy)]));
  }
  return presetTexts;
}

/** A fresh, deeply frozen copy of the preset called `name` (a known name). */
function preset(name) {
  return deepFreeze(JSON.parse(presets().get(name)));
}

/** Workspace read-only, private writable /tmp, no network, tree confined. */
function readOnly() {
  return preset('read-only');
}

/** As readOnly(), with the workspace writable. */
function workspaceWrite() {
  return preset('workspace-write');
}

/** A named policy: "read-only", "workspace-write" or "untrusted" (no workspace). */
function profile(name) {
  const known = presets();
  if (typeof name !== 'string' || !known.has(name)) {
    throw new CordonError(
      'ERR_CORDON_POLICY_INVALID',
      `unknown policy profile ${JSON.stringify(String(name))}; known: ${[...known.keys()].join(', ')}`,
    );
  }
  return preset(name);
}

module.exports = { readOnly, workspaceWrite, profile, toPlainJson, isPlainObject };
