'use strict';

// The console output of one run (the runner's console extension): each line
// the program logged, in order, as `{level, text, time, elapsedMs}` for
// `result.logs`, and as a `console` event to onEvent at once (text redacted
// like the audit's source, since events go to logs and dashboards). The
// runner bounds the text bytes by the confirmed maxLogBytes and marks the line
// it cut `truncated: true`; the host checks that bound instead of trusting it.

const { redactSource, truncateUtf8 } = require('./redact-source');

/** Console text kept in the audit record (redacted), over all lines. */
const AUDIT_LOG_BYTES = 4 * 1024;
/** Console text in one event (redacted); the full line is in result.logs. */
const EVENT_TEXT_BYTES = 4 * 1024;

function redactLine(text, maxBytes) {
  return truncateUtf8(redactSource(text, { maxOutputChars: maxBytes }), maxBytes);
}

class ConsoleLog {
  /** @param {{events: import('./events').EventLog}} options */
  constructor({ events }) {
    this.events = events;
    this.lines = [];
    this.bytes = 0;
    this.truncated = false;
    this.droppedLines = 0;
  }

  /**
   * Take one validated console frame.
   * @returns {string | null} why the frame breaks the console contract, or null
   */
  accept(frame, maxLogBytes) {
    if (this.truncated) return 'runner sent a console frame after the one it marked truncated';
    const bytes = Buffer.byteLength(frame.text, 'utf8');
    if (this.bytes + bytes > maxLogBytes) {
      return `runner sent console text past the confirmed maxLogBytes ${maxLogBytes} (${this.bytes + bytes} bytes)`;
    }
    this.bytes += bytes;
    const line = { level: frame.level, text: frame.text, time: Date.now(), elapsedMs: frame.elapsedMs };
    if (frame.truncated === true) {
      this.truncated = true;
      line.truncated = true;
    }
    this.lines.push(Object.freeze(line));
    const shown = redactLine(frame.text, EVENT_TEXT_BYTES);
    this.events.console({ level: line.level, text: shown.text, bytes, elapsedMs: line.elapsedMs, ...(line.truncated ? { truncated: true } : {}) });
    return null;
  }

  /** The runner counted lines it did not send (metrics.consoleDroppedLines). */
  dropped(count) {
    this.droppedLines = count;
    this.truncated = true;
  }

  /** `result.logs`: the lines, frozen. */
  snapshot() {
    return Object.freeze(this.lines.slice());
  }

  /** Totals for the metrics: bytes of text received and lines the runner dropped past the budget. */
  metrics() {
    return { logLines: this.lines.length, logBytes: this.bytes, droppedLogLines: this.droppedLines };
  }

  /** Redacted lines for the audit record, at most AUDIT_LOG_BYTES of text in all. */
  auditLines() {
    const out = [];
    let left = AUDIT_LOG_BYTES;
    for (const line of this.lines) {
      if (left <= 0) break;
      const shown = redactLine(line.text, left);
      left -= Buffer.byteLength(shown.text, 'utf8');
      out.push(Object.freeze({ level: line.level, text: shown.text, elapsedMs: line.elapsedMs }));
    }
    return Object.freeze(out);
  }
}

module.exports = { ConsoleLog, AUDIT_LOG_BYTES };
