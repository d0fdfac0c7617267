'use strict';

// Deep freezing, for what cordon hands out and must not see changed later:
// the policy presets, the tool catalogue's schemas and every run's result.

/** Freeze `value` and everything reachable through its own enumerable keys; returns it. */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

module.exports = { deepFreeze };
