'use strict';

// `cordon doctor` for JavaScript: the launcher's own host report
// (crates/launcher/src/host_probe: every check and the verdict, the same
// report the `cordon doctor` command prints), handed out deeply frozen.

const { deepFreeze } = require('./deep-freeze');

/**
 * @typedef {{name: string, ok: boolean, importance: 'required'|'optional',
 *            detail: string, fix: string}} DoctorCheck
 * @typedef {{ok: boolean, checks: DoctorCheck[]}} DoctorReport
 */

/**
 * Runs every check through the native addon.
 * @param {(options: object) => DoctorReport} nativeDoctor
 * @param {{bwrapPath?: string, runnerPath?: string, networkRelayPath?: string}} [options]
 * @returns {DoctorReport}
 */
function runDoctor(nativeDoctor, options = {}) {
  const { ok, checks } = nativeDoctor({
    bwrapPath: options.bwrapPath ?? null,
    runnerPath: options.runnerPath ?? null,
    networkRelayPath: options.networkRelayPath ?? null,
  });
  return deepFreeze({ ok, checks });
}

module.exports = { runDoctor };
