'use strict';

// The policy presets and the policy check of a remote client, which never
// loads the addon. The presets are the launcher's (crates/launcher/src/request/presets.rs),
// copied into presets.json from the addon's own export (`policyPresets()`);
// __test__/remote-client.test.js fails the day the two differ. The full
// validation is the host's: it answers `refused` with the launcher's code.

const { CordonError } = require('../errors');
const { deepFreeze } = require('../deep-freeze');
const { toPlainJson, isPlainObject } = require('../plain-json');
const PRESETS = new Map(require('./presets.json').map(({ name, policy }) => [name, JSON.stringify(policy)]));

function preset(name) {
  return deepFreeze(JSON.parse(PRESETS.get(name)));
}

/** Workspace read-only, private writable /tmp, no network, tree confined. */
const readOnly = () => preset('read-only');
/** As readOnly(), with the workspace writable. */
const workspaceWrite = () => preset('workspace-write');

/** A named policy: "read-only", "workspace-write" or "untrusted" (no workspace). */
function profile(name) {
  if (typeof name !== 'string' || !PRESETS.has(name)) {
    throw new CordonError('ERR_CORDON_POLICY_INVALID', `unknown policy profile ${JSON.stringify(String(name))}; known: ${[...PRESETS.keys()].join(', ')}`);
  }
  return preset(name);
}

/**
 * What createCodeMode asks of a policy up front (the local binding asks the
 * launcher): a plain JSON object, and its network mode. Everything else is
 * checked by the host at the run (a bad policy: the run's error carries the
 * launcher's code, ERR_CORDON_POLICY_INVALID).
 */
function checkPolicy(policy) {
  const plain = toPlainJson(policy, 'policy', 'ERR_CORDON_POLICY_INVALID');
  if (!isPlainObject(plain)) throw new CordonError('ERR_CORDON_POLICY_INVALID', 'policy must be a plain object');
  const mode = plain.network?.mode;
  return mode === undefined ? 'none' : String(mode);
}

module.exports = { readOnly, workspaceWrite, profile, checkPolicy };
