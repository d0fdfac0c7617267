'use strict';

// `cordon doctor`: what this host lacks for a launch, and the exact fix.
// The checks themselves are the launcher's own Rust code (host_probe.rs,
// exposed by the addon as `doctor`), so doctor and launch cannot disagree;
// this module only shapes their answers (the `cordon doctor` command prints
// them from the Rust CLI).

const IMPORTANCE = Object.freeze({ required: 'required', optional: 'optional' });

/**
 * @typedef {{name: string, ok: boolean, importance: 'required'|'optional',
 *            detail: string, fix: string}} DoctorCheck
 * @typedef {{ok: boolean, checks: DoctorCheck[]}} DoctorReport
 */

/**
 * Runs every check through the native addon.
 * @param {(options: object) => DoctorCheck[]} nativeDoctor
 * @param {{bwrapPath?: string, runnerPath?: string, networkRelayPath?: string}} [options]
 * @returns {DoctorReport}
 */
function runDoctor(nativeDoctor, options = {}) {
  const checks = nativeDoctor({
    bwrapPath: options.bwrapPath ?? null,
    runnerPath: options.runnerPath ?? null,
    networkRelayPath: options.networkRelayPath ?? null,
  }).map((check) => Object.freeze({ ...check }));
  // Only a failed *required* check makes the host unusable; a missing
  // optional mechanism (cgroups) weakens the default policy, it does not
  // stop launches unless a policy requires it.
  const ok = checks.every((c) => c.ok || c.importance !== IMPORTANCE.required);
  return Object.freeze({ ok, checks: Object.freeze(checks) });
}

module.exports = { runDoctor, IMPORTANCE };
