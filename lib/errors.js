'use strict';

// One error class for every failure cordon reports to JavaScript. Callers
// branch on `code` (stable, documented in docs/errors.md), never on `message`.
class CordonError extends Error {
  /**
   * @param {string} code stable `ERR_CORDON_…` identifier
   * @param {string} message human-readable explanation, including how to fix it
   * @param {{cause?: unknown, details?: object}} [options]
   */
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CordonError';
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
  }
}

module.exports = { CordonError };
