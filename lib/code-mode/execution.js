'use strict';

// One execution in one sandbox: spawn the runner, speak code-bridge-v1 with
// it, bound it in time, and come back with a single termination reason once
// the sandbox is gone. Steps:
//   1. spawnIsolated(runner + CLI ceilings); write `execute`
//   2. `ready` within READY_BUDGET_MS, limits no higher than asked
//   3. `tool.call` ⇄ `tool.result`, ids 1, 2, 3 …: one at a time (v1), or up to
//      the confirmed maxOutstanding at once, answered in any order (extension);
//      `console` frames (extension) go to the run's console log as they come
//      `fetch.request` (fetch extension) → the host performs it (fetch-dispatcher.js) and
//      answers `fetch.result`; fetches share the maxOutstanding slots with tool calls;
//      `fetch.abort` aborts one in flight
//   4. `execution.result` → half-close our side, let the runner exit
//   5. wait() settles → resolve
// Timers: runner deadline (abort the pending handlers; the runner reports
// `timeout` itself), host deadline (timeoutMs + DRAIN_SLACK_MS: stop ladder,
// `timeout`), cancel grace, exit grace. The termination reason is
// write-once: the first cause wins, and a later frame cannot overturn it.

const { FrameError, encodeFrame, validateFrame, runnerError, VERSION } = require('./frames');
const { decodeLine } = require('./frame-decoder');
const { BoundedLineReader } = require('./line-reader');
const {
  READY_BUDGET_MS, DRAIN_SLACK_MS, maxFrameBytes, runnerArgs, executeLimits, executeExtensions, checkEffectiveLimits, checkConfirmedExtensions,
} = require('./limits');
const { failed } = require('./outcome');
const { explainRunnerError, timeoutMessage } = require('./model-errors');
const { FetchFrames } = require('./fetch-frames');
const { deepFreeze } = require('../deep-freeze');

/** After `cancel`, time for the runner's `cancelled` frame before the stop ladder. */
const CANCEL_GRACE_MS = 500;
/** After the outcome is known, time for the runner to exit on its own before the stop ladder. */
const EXIT_GRACE_MS = 1000;
/** Past stop()'s grace + force, how long to wait for wait() before reporting containment unconfirmed. */
const WAIT_BOUND_SLACK_MS = 3000;
/** Runner stderr kept for diagnostics (the rest is counted and dropped). */
const STDERR_KEEP_BYTES = 4096;
/** Stderr quoted in a runner_exit message. */
const STDERR_QUOTE_CHARS = 512;
const DEFAULT_STOP = Object.freeze({ graceMs: 1000, forceMs: 1000 });

class Execution {
  /**
   * @param {{host: object, executionId: string, code: string, granted: ReadonlyMap<string, object>,
   *   dispatcher: import('./calls').CallDispatcher, consoleLog: import('./console-log').ConsoleLog,
   *   fetcher: import('./fetch-dispatcher').FetchDispatcher | null}} options
   */
  constructor({ host, executionId, code, granted, dispatcher, consoleLog, fetcher = null }) {
    this.host = host;
    this.executionId = executionId;
    this.code = code;
    this.granted = granted;
    this.dispatcher = dispatcher;
    this.consoleLog = consoleLog;
    this.fetchFrames = new FetchFrames(fetcher);
    this.limits = host.limits;
    this.requested = executeLimits(host.limits);
    this.requestedExtensions = executeExtensions(host.limits, host.network);
    /** What ready confirmed; v1 (one call, no console frames, no fetch) until then. */
    this.confirmed = { maxOutstanding: 1, maxLogBytes: null, maxLive: null, maxRequests: null };
    this.state = 'awaiting-ready'; // → running → finished
    this.termination = null;
    this.effectiveLimits = null;
    this.runnerVersion = null;
    this.nextCallId = 1;
    /** id → AbortController of each call whose handler runs and whose answer the runner awaits. */
    this.outstanding = new Map();
    this.timers = new Map();
    this.stderrChunks = [];
    this.stderrBytes = 0;
    this.stopping = false;
    this.writeClosed = false;
    /** EOF / exit handlers waiting for an off-thread frame decode (deferWhileDecoding). */
    this.deferred = [];
  }

  /**
   * Run to the end. Rejects only if spawnIsolated throws (a configuration error).
   * @returns {Promise<{termination: object, receipt: object, exit: object|null, settled: Promise<void>}>}
   */
  start(signal) {
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.launch();
      if (signal) this.watchSignal(signal);
    });
  }

  launch() {
    const frame = encodeFrame('execute', {
      executionId: this.executionId,
      code: this.code,
      tools: [...this.granted.values()].map((tool) => ({ name: tool.name, description: tool.description })),
      limits: this.requested,
      extensions: this.requestedExtensions,
    });
    const frameBytes = Math.max(maxFrameBytes(this.limits, this.host.network), Buffer.byteLength(frame) + 1);
    this.stop = this.host.runner.stop ?? DEFAULT_STOP;
    this.execution = this.spawnSandbox(frameBytes);
    // The frame goes first: the runner works on it while this thread sets up
    // the rest, which takes effect before the loop delivers any of its bytes
    // (a chunk, an error or the exit all come from later turns of the loop).
    this.write(frame);
    this.reader = new BoundedLineReader({
      maxLineBytes: frameBytes,
      onLine: (line) => this.onLine(line),
      onOverflow: (error) => this.fail('protocol', 'FRAME_TOO_LARGE', error.message),
      // A large frame is being decoded off the main thread: stop reading until it is done.
      onHold: () => this.execution.protocol.pause(),
      onRelease: () => {
        this.execution.protocol.resume();
        const deferred = this.deferred.splice(0);
        for (const fn of deferred) fn();
      },
    });
    this.wireStreams();
    this.settled = this.execution.wait().then((exit) => this.onExit(exit), (error) => this.onSpawnFailure(error));
    // resultBeforeTeardown: the result will carry the receipt's head, frozen (a
    // pooled sandbox's head came before the take). Frozen now, while the runner
    // works on the frame, rather than after its answer; freezing twice is a no-op.
    if (this.host.resultBeforeTeardown && this.execution.receiptHead) deepFreeze(this.execution.receiptHead);
    this.after('ready', READY_BUDGET_MS, () => this.fail('protocol', 'READY_TIMEOUT', `runner sent no ready frame within ${READY_BUDGET_MS} ms`));
  }

  /**
   * A prewarmed sandbox from the pool when its runner's frame ceiling is this
   * run's, else a cold spawn. Either way the ready budget below counts from the
   * execute frame, not from the spawn: a pooled runner was idle until now.
   */
  spawnSandbox(frameBytes) {
    const { runner, policy, pool } = this.host;
    // The launcher's own backstop, behind every timer here.
    const deadlineMs = READY_BUDGET_MS + this.limits.timeoutMs + 2 * DRAIN_SLACK_MS;
    if (pool && frameBytes === pool.frameBytes) return pool.take({ deadlineMs });
    return this.host.spawnIsolated([runner.path, ...runnerArgs(this.limits, frameBytes, runner.protocol, this.host.network)], {
      policy, invocationId: this.executionId, stop: this.stop, deadlineMs,
    });
  }

  wireStreams() {
    const { protocol, stderr } = this.execution;
    protocol.on('data', (chunk) => this.reader.push(chunk));
    protocol.on('end', () => this.onEof());
    protocol.on('close', () => this.onEof());
    protocol.on('error', () => this.onEof()); // EPIPE after the runner died: the exit explains it
    stderr.on('data', (chunk) => {
      if (this.stderrBytes < STDERR_KEEP_BYTES) this.stderrChunks.push(chunk.subarray(0, STDERR_KEEP_BYTES - this.stderrBytes));
      this.stderrBytes += chunk.length;
    });
    stderr.on('error', () => {});
  }

  watchSignal(signal) {
    const onAbort = () => this.cancel();
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.unwatchSignal = () => signal.removeEventListener('abort', onAbort);
    return undefined;
  }

  after(name, ms, fn) {
    if (this.finished) return; // a late 'close' must not arm a timer that outlives the run
    clearTimeout(this.timers.get(name));
    this.timers.set(name, setTimeout(fn, ms));
  }

  clearTimers() {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  decide(termination) {
    if (this.termination) return false;
    this.termination = termination;
    return true;
  }

  write(text) {
    if (this.writeClosed || this.execution.protocol.destroyed) return;
    this.execution.protocol.write(text);
  }

  /** Half-close: the runner sees EOF on its reader only after our last frame. */
  closeWrite() {
    if (this.writeClosed) return;
    this.writeClosed = true;
    if (!this.execution.protocol.destroyed) this.execution.protocol.end();
  }

  /** @returns {Promise<void> | undefined} a Promise while a large frame is decoded (the reader waits for it) */
  onLine(line) {
    let decoded;
    try {
      decoded = decodeLine(line);
    } catch (error) {
      return this.onBadFrame(error);
    }
    if (typeof decoded.then !== 'function') return this.onFrame(decoded);
    // The reader was stopped meanwhile (outcome decided): the frame is dropped like any later line.
    return decoded.then((frame) => { if (!this.reader.stopped) this.onFrame(frame); }, (error) => { if (!this.reader.stopped) this.onBadFrame(error); });
  }

  onBadFrame(error) {
    // Only FrameError is expected; anything else is still the runner's fault, never a host crash.
    return this.fail('protocol', error instanceof FrameError ? error.code : 'BAD_FRAME', error.message);
  }

  onFrame(frame) {
    try {
      validateFrame(frame, this.executionId);
    } catch (error) {
      return this.onBadFrame(error);
    }
    if (frame.type === 'ready') return this.onReady(frame);
    if (frame.type === 'tool.call') return this.onToolCall(frame);
    if (frame.type === 'console') return this.onConsole(frame);
    if (frame.type === 'fetch.request') return this.onFetchRequest(frame);
    if (frame.type === 'fetch.abort') return this.onFetchAbort(frame);
    return this.onTerminal(frame);
  }

  onReady(frame) {
    if (this.state !== 'awaiting-ready') return this.fail('protocol', 'UNEXPECTED_FRAME', 'runner sent a second ready frame');
    const refusal = checkEffectiveLimits(frame.effectiveLimits, this.requested);
    if (refusal) return this.fail('protocol', 'READY_LIMIT_RAISED', `runner ready refused: ${refusal}`);
    const extensions = checkConfirmedExtensions(frame.extensions, this.requestedExtensions);
    if (extensions.refusal) return this.fail('protocol', 'READY_LIMIT_RAISED', `runner ready refused: ${extensions.refusal}`);
    this.confirmed = extensions.confirmed;
    this.state = 'running';
    this.effectiveLimits = Object.freeze({ ...this.requested, ...frame.effectiveLimits });
    this.runnerVersion = frame.runnerVersion ?? null;
    clearTimeout(this.timers.get('ready'));
    const { timeoutMs } = this.effectiveLimits;
    this.after('runner-deadline', timeoutMs, () => this.abandonAtDeadline());
    this.after('host-deadline', timeoutMs + DRAIN_SLACK_MS, () => this.fail('timeout', 'HOST_DEADLINE_EXCEEDED', `${timeoutMessage(timeoutMs)} (host deadline)`));
    return undefined;
  }

  onToolCall(frame) {
    if (this.state !== 'running') return this.fail('protocol', 'UNEXPECTED_FRAME', `runner sent tool.call in state ${this.state}`);
    const { maxOutstanding } = this.confirmed;
    const busy = this.outstanding.size + this.fetchFrames.inFlight.size;
    if (busy >= maxOutstanding) {
      const why = maxOutstanding === 1 ? 'while another call is pending' : `while ${busy} calls are outstanding (confirmed maxOutstanding ${maxOutstanding})`;
      return this.fail('protocol', 'UNEXPECTED_FRAME', `runner sent tool.call ${why}`);
    }
    if (frame.id !== this.nextCallId) {
      return this.fail('protocol', 'WRONG_CALL_ID', `runner sent tool.call id ${frame.id}, expected ${this.nextCallId}`);
    }
    if (frame.id > this.effectiveLimits.maxToolCalls) {
      // The runner should have latched; the host does not rely on it.
      return this.fail('limit', 'TOOL_CALL_LIMIT_EXCEEDED', `runner sent tool.call ${frame.id} past maxToolCalls ${this.effectiveLimits.maxToolCalls}`);
    }
    this.nextCallId += 1;
    if (this.termination) return this.answer(frame.id, { ok: false, error: { code: 'RUN_ENDING', message: 'RUN_ENDING: the run is ending' } });
    const controller = new AbortController();
    this.outstanding.set(frame.id, controller);
    // dispatch() is written never to reject; if it ever does, the call fails instead of the process.
    const hostError = (error) => ({ ok: false, latch: false, error: { code: 'HOST_ERROR', message: `HOST_ERROR: ${String(error?.message ?? error).slice(0, 200)}` } });
    this.dispatcher.dispatch(frame, controller.signal).then((outcome) => this.onCallDone(frame.id, outcome), (error) => this.onCallDone(frame.id, hostError(error)));
    return undefined;
  }

  onCallDone(id, outcome) {
    if (!this.outstanding.delete(id)) return; // abandoned: deadline, cancel or end
    if (outcome.ok || !outcome.latch) return this.answer(id, outcome);
    this.decide(failed('limit', outcome.error.code, outcome.error.message.slice(outcome.error.code.length + 2)));
    this.answer(id, outcome);
    return this.sendCancel();
  }

  answer(id, outcome) {
    // The result text is already serialized and measured; splice it in rather than serialize twice.
    const text = outcome.ok
      ? `{"version":"${VERSION}","type":"tool.result","id":${id},"ok":true,"result":${outcome.text}}\n`
      : encodeFrame('tool.result', { id, ok: false, error: outcome.error });
    this.write(text);
  }

  /** A fetch (extension): fetch-frames.js checks it against what ready confirmed; a refusal is a protocol failure. */
  onFetchRequest(frame) {
    const refusal = this.fetchFrames.request(frame, this.fetchContext());
    return refusal ? this.fail('protocol', refusal.code, refusal.message) : undefined;
  }

  onFetchAbort(frame) {
    const refusal = this.fetchFrames.abort(frame, this.fetchContext());
    return refusal ? this.fail('protocol', refusal.code, refusal.message) : undefined;
  }

  fetchContext() {
    return { running: this.state === 'running', state: this.state, confirmed: this.confirmed, toolCalls: this.outstanding.size, ending: this.termination !== null, write: (text) => this.write(text) };
  }

  /**
   * A console line (extension). Only after ready confirmed console; the text
   * bytes must stay within the confirmed maxLogBytes and nothing may follow the
   * line marked truncated — a runner that breaks that is a protocol failure.
   */
  onConsole(frame) {
    if (this.state !== 'running' || this.confirmed.maxLogBytes === null) {
      const why = this.state === 'running' ? 'although ready did not confirm the console extension' : `in state ${this.state}`;
      return this.fail('protocol', 'UNEXPECTED_FRAME', `runner sent a console frame ${why}`);
    }
    const refusal = this.consoleLog.accept(frame, this.confirmed.maxLogBytes);
    if (refusal) return this.fail('protocol', 'BAD_FRAME', refusal);
    return undefined;
  }

  /** Stop waiting for every outstanding call; their handlers' signals abort and late answers are dropped. */
  abandonPendingCalls(code = 'RUN_ENDED') {
    this.fetchFrames.abandon();
    if (this.outstanding.size === 0) return;
    this.dispatcher.abandon(code);
    for (const controller of this.outstanding.values()) controller.abort();
    this.outstanding.clear();
  }

  /**
   * The runner's deadline passed with handlers still pending: abort them (their
   * ctx.signal) and stop waiting for them. Nothing is written: the runner's own
   * deadline ends its tool wait and it reports `timeout`; a tool.result racing
   * that terminal frame could hit a closed socket and cost us the frame. A runner
   * that does not wake is bounded by the host deadline.
   */
  abandonAtDeadline() {
    this.abandonPendingCalls('DEADLINE_EXCEEDED');
  }

  onTerminal(frame) {
    if (this.state === 'awaiting-ready' || this.state === 'finished') {
      return this.fail('protocol', 'UNEXPECTED_FRAME', `runner sent execution.result in state ${this.state}`);
    }
    this.state = 'finished';
    this.abandonPendingCalls();
    this.decide(this.terminationFrom(frame));
    this.reader.stop();
    // Resolved now (the head at hand): the half-close and the exit timer decide
    // nothing about this result, so they run one turn of the loop after it.
    if (this.resolveBeforeTeardown()) setImmediate(() => this.endAfterTerminal());
    else this.endAfterTerminal();
    return undefined;
  }

  /** After the terminal frame: EOF for the runner's reader, and the sandbox's grace to exit by itself. */
  endAfterTerminal() {
    this.closeWrite();
    this.after('exit', EXIT_GRACE_MS, () => this.stopSandbox());
  }

  /**
   * `resultBeforeTeardown`: the terminal frame decided the run; resolve with
   * the receipt's head (what the launcher knows while the sandbox still runs) and
   * deliver the rest through `final` once the sandbox is gone. Only when the
   * observation found nothing wrong: a head with mismatches (or none at all) means
   * the launcher will fail the run, so that run resolves the ordinary way. A
   * remote execution has no head before its end: its run resolves the ordinary way.
   * @returns {boolean} whether the run was resolved now (its head was at hand)
   */
  resolveBeforeTeardown() {
    if (!this.host.resultBeforeTeardown || typeof this.execution.observed !== 'function') return false;
    const head = this.execution.receiptHead;
    if (head) return this.resolveWithHead(head);
    this.execution.observed().then((observed) => this.resolveWithHead(observed));
    return false;
  }

  /** @returns {boolean} whether this call resolved the run */
  resolveWithHead(head) {
    if (this.finished || this.early || !cleanHead(head)) return false;
    this.early = { resolveFinal: null };
    const final = new Promise((resolve) => { this.early.resolveFinal = resolve; });
    this.resolve({ termination: this.termination, receipt: head, exit: null, settled: this.settled, runnerVersion: this.runnerVersion, final });
    // The pool may refill now: nobody's result waits for this sandbox's teardown (lib/pool.js refillAfter).
    this.execution._resultDelivered?.();
    return true;
  }

  terminationFrom(frame) {
    const dropped = frame.metrics?.consoleDroppedLines;
    if (this.confirmed.maxLogBytes !== null && Number.isSafeInteger(dropped) && dropped > 0) this.consoleLog.dropped(dropped);
    if (!frame.ok) return { ok: false, error: explainRunnerError(runnerError(frame.error), this.effectiveLimits, this.code) };
    const text = JSON.stringify(frame.result);
    const bytes = Buffer.byteLength(text, 'utf8');
    // Re-checked here: a runner's word is not enough for a limit the host promised its caller.
    if (bytes > this.effectiveLimits.maxResultBytes) return failed('result_limit', 'RESULT_LIMIT_EXCEEDED', `result is ${bytes} bytes, the limit is ${this.effectiveLimits.maxResultBytes}`);
    return { ok: true, result: frame.result, resultBytes: bytes };
  }

  /** A failure the host detected: decide (first cause wins) and tear down. */
  fail(kind, code, message) {
    this.decide(failed(kind, code, message));
    this.state = 'finished';
    this.abandonPendingCalls();
    this.reader.stop();
    this.stopSandbox();
  }

  cancel() {
    if (this.state === 'finished') return;
    this.decide(failed('cancelled', undefined, 'execution cancelled'));
    if (this.state === 'awaiting-ready') return this.fail('cancelled', undefined, 'execution cancelled');
    return this.sendCancel();
  }

  sendCancel() {
    this.abandonPendingCalls('CANCELLED');
    this.write(encodeFrame('cancel', { executionId: this.executionId }));
    this.after('cancel', CANCEL_GRACE_MS, () => this.stopSandbox());
  }

  /**
   * Run `fn` once no frame is being decoded off-thread: EOF and the sandbox's exit
   * come after the last frame the runner wrote, so they must not overtake it.
   * @returns {boolean} true when deferred
   */
  deferWhileDecoding(fn) {
    if (this.reader.held === null) return false;
    this.deferred.push(fn);
    return true;
  }

  onEof() {
    if (this.eof || this.deferWhileDecoding(() => this.onEof())) return;
    this.eof = true;
    if (this.state !== 'finished') {
      // Not fail(): the runner is probably exiting on its own; the exit grace below decides
      // whether it needs the stop ladder, and onExit adds its exit status to the message.
      const partial = this.reader.partialBytes > 0 ? ` (${this.reader.partialBytes} bytes of an unfinished frame)` : '';
      this.decide(failed('runner_exit', 'NO_TERMINAL_FRAME', `runner closed the protocol without an execution.result${partial}`));
      this.state = 'finished';
      this.abandonPendingCalls();
      this.reader.stop();
    }
    this.closeWrite();
    this.after('exit', EXIT_GRACE_MS, () => this.stopSandbox());
  }

  stopSandbox() {
    if (this.stopping || this.finished) return;
    this.stopping = true;
    this.execution.stop().catch(() => {});
    const bound = this.stop.graceMs + this.stop.forceMs + WAIT_BOUND_SLACK_MS;
    this.after('wait-bound', bound, () => this.containmentUnconfirmed(bound));
  }

  /**
   * wait() did not settle within the bound: the sandbox may still be running and has no receipt.
   * That outranks whatever ended the run (even an ok result): the run is not accounted for.
   */
  containmentUnconfirmed(bound) {
    const before = this.termination ? ` (the run had ended: ${this.termination.ok ? 'ok' : this.termination.error.code ?? this.termination.error.kind})` : '';
    this.termination = failed('sandbox', 'CONTAINMENT_UNCONFIRMED',
      `the sandbox did not finish within ${bound} ms of stop(); its admission slot stays held until it does${before}`);
    this.finish(null, this.termination);
  }

  stderrText() {
    return Buffer.concat(this.stderrChunks).toString('utf8').slice(0, STDERR_QUOTE_CHARS).trim();
  }

  onExit(exit) {
    if (this.deferWhileDecoding(() => this.onExit(exit))) return;
    if (this.termination?.error?.code === 'NO_TERMINAL_FRAME') {
      const status = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.returncode}`;
      const stderr = this.stderrText();
      this.termination.error.message += ` — runner ended with ${status}${stderr ? `; stderr: ${stderr}` : ''}`;
    }
    if (exit?.receipt?.stop?.containmentConfirmed === false) {
      // wait() now settles within the stop ladder's bound even when a process of the sandbox
      // outlived SIGKILL (the launcher gives up on it and says so in the receipt; it waits up
      // to 30 s more only while every process is already exiting, R12-2). That is the
      // same unaccounted-for run as a wait() that never settles, and outranks how the run ended.
      const before = this.termination ? ` (the run had ended: ${this.termination.ok ? 'ok' : this.termination.error.code ?? this.termination.error.kind})` : '';
      this.termination = failed('sandbox', 'CONTAINMENT_UNCONFIRMED',
        `the sandbox's processes could not be confirmed gone after stop() (receipt stop.containmentConfirmed: false)${before}`);
    }
    this.finish(exit, failed('runner_exit', 'NO_TERMINAL_FRAME', 'runner ended without an execution.result'));
  }

  onSpawnFailure(error) {
    const code = typeof error?.code === 'string' ? error.code : 'SPAWN_FAILED';
    const failure = failed('sandbox', code, `the sandbox failed: ${error?.message ?? String(error)}`);
    // A terminal frame said ok, but the launcher failed the run after it (its confinement did not
    // match the plan, or it left no receipt): the sandbox's verdict wins over the program's word.
    if (this.termination?.ok) this.termination = failure;
    const receipt = error?.details?.receipt;
    this.finish(null, failure, receipt && typeof receipt === 'object' ? receipt : undefined);
  }

  finish(exit, fallback, receipt = exit?.receipt) {
    if (this.finished) return;
    this.finished = true;
    this.state = 'finished';
    this.decide(fallback);
    this.clearTimers();
    this.abandonPendingCalls();
    this.unwatchSignal?.();
    const outcome = { termination: this.termination, receipt: receipt ?? {}, exit, settled: this.settled, runnerVersion: this.runnerVersion };
    // The launcher's digest, when this is the receipt it read back (a local run's wait()).
    if (exit && receipt === exit.receipt && typeof this.execution?.receiptDigest === 'string') outcome.receiptDigest = this.execution.receiptDigest;
    if (this.early) this.early.resolveFinal(outcome);
    else this.resolve(outcome);
  }
}

/** A head the early result may carry: the program was observed and matched the plan. */
function cleanHead(head) {
  const confinement = head?.confinement;
  return confinement?.observed?.status === 'observed' && Array.isArray(confinement.mismatches) && confinement.mismatches.length === 0;
}

module.exports = { Execution, CANCEL_GRACE_MS, EXIT_GRACE_MS, DEFAULT_STOP };
