'use strict';

// The event log of one run: `execution.started|finished` and
// `tool.requested|completed|failed` and `console`, each carrying the executionId. Events are
// delivered to the provider's `onEvent` as they happen and kept for the
// result. Arguments and results are redacted before any event is built, so no
// consumer ever holds the raw values. Memory is bounded: past MAX_KEPT_EVENTS
// events are still delivered but only counted in the result.

const { redactValue } = require('./redact');

/** Events kept in `result.events`; a run with a huge toolCalls limit must not grow without bound. */
const MAX_KEPT_EVENTS = 1000;

class EventLog {
  /**
   * @param {{executionId: string, parentId: string | null, onEvent?: (event: object) => void}} options
   */
  constructor({ executionId, parentId, onEvent }) {
    this.executionId = executionId;
    this.parentId = parentId;
    this.onEvent = onEvent;
    this.events = [];
    this.dropped = 0;
    /** onEvent failures are counted, never allowed to change the run's outcome. */
    this.listenerErrors = 0;
  }

  emit(type, fields) {
    const event = Object.freeze({ type, executionId: this.executionId, time: Date.now(), ...fields });
    if (this.events.length < MAX_KEPT_EVENTS) this.events.push(event);
    else this.dropped += 1;
    if (this.onEvent) {
      try {
        this.onEvent(event);
      } catch {
        this.listenerErrors += 1;
      }
    }
    return event;
  }

  started({ mode, tools, limits }) {
    return this.emit('execution.started', { parentId: this.parentId, mode, tools, limits });
  }

  finished({ ok, error, metrics }) {
    const fields = { parentId: this.parentId, ok, durationMs: metrics.elapsedMs, metrics };
    if (error) fields.error = { kind: error.kind, code: error.code };
    if (this.dropped > 0) fields.droppedEvents = this.dropped;
    return this.emit('execution.finished', fields);
  }

  /** Tool calls are children of the execution: their parentId is the executionId. */
  toolRequested({ callId, name, args }) {
    return this.emit('tool.requested', { callId, parentId: this.executionId, name, arguments: redactValue(args) });
  }

  toolCompleted({ callId, name, durationMs, resultBytes, result }) {
    return this.emit('tool.completed', { callId, parentId: this.executionId, name, durationMs, resultBytes, result: redactValue(result) });
  }

  /** `providerHint`: advice for the provider about its own tool (e.g. shape results in project()), never shown to the model. */
  toolFailed({ callId, name, durationMs, error, providerHint }) {
    const fields = { callId, parentId: this.executionId, name, durationMs, resultBytes: 0, error: { code: error.code } };
    if (providerHint !== undefined) fields.providerHint = providerHint;
    return this.emit('tool.failed', fields);
  }

  /** A console line of the program (console extension); text already redacted by the console log. */
  console({ level, text, bytes, elapsedMs, truncated }) {
    const fields = { parentId: this.executionId, level, text, bytes, elapsedMs };
    if (truncated) fields.truncated = true;
    return this.emit('console', fields);
  }

  /** The kept events, frozen, for the result. */
  snapshot() {
    return Object.freeze(this.events.slice());
  }
}

module.exports = { EventLog, MAX_KEPT_EVENTS };
