// Timers, Event/EventTarget and AbortController/AbortSignal, as Node 22
// has them (the `timers` extension, docs/runner.md). `native` keeps the
// schedule (timers.rs): schedule(id, delayMs), cancel(id), setRef(id, bool),
// reportError(error). Returns fire(id), which timers.rs calls when a timer
// is due. Evaluated once per world, in strict mode.
(function (native) {
  'use strict';
  const define = (target, name, value) => Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
  // Node's TIMEOUT_MAX: a delay outside 1..TIMEOUT_MAX becomes 1.
  const TIMEOUT_MAX = 2 ** 31 - 1;
  const live = new Map();
  let nextId = 1;

  function invalidCallback(value) {
    const shown = value === null ? 'null' : typeof value === 'object' ? 'an instance of ' + (value.constructor?.name ?? 'Object') : typeof value === 'undefined' ? 'undefined' : `type ${typeof value} (${String(value)})`;
    const error = new TypeError(`The "callback" argument must be of type function. Received ${shown}`);
    error.code = 'ERR_INVALID_ARG_TYPE';
    return error;
  }

  function delayOf(after) {
    const ms = Number(after);
    return ms >= 1 && ms <= TIMEOUT_MAX ? ms : 1;
  }

  // Node keeps a handle's ref state on the handle: hasRef() is true inside
  // the callback of a timeout that is firing.
  class Timeout {
    #id; #refed = true;
    constructor(id) { this.#id = id; }
    ref() { this.#refed = true; native.setRef(this.#id, true); return this; }
    unref() { this.#refed = false; native.setRef(this.#id, false); return this; }
    hasRef() { return this.#refed; }
    refresh() {
      const timer = live.get(this.#id);
      if (timer) native.schedule(this.#id, timer.delay);
      return this;
    }
    close() { clear(this); return this; }
    [Symbol.toPrimitive]() { return this.#id; }
  }
  class Immediate extends Timeout {}

  function start(kind, callback, delay, args, repeat) {
    if (typeof callback !== 'function') throw invalidCallback(callback);
    const id = nextId++;
    native.schedule(id, delay);
    const handle = kind === 'immediate' ? new Immediate(id) : new Timeout(id);
    live.set(id, { callback, args, delay, repeat, handle });
    return handle;
  }

  function clear(handle) {
    if (handle === null || handle === undefined) return;
    const id = typeof handle === 'object' ? Number(handle[Symbol.toPrimitive]?.()) : Number(handle);
    if (!live.has(id)) return;
    live.delete(id);
    native.cancel(id);
  }

  function fire(id) {
    const timer = live.get(id);
    if (!timer) return;
    if (!timer.repeat) live.delete(id);
    try {
      // Node calls the callback with the Timeout object as `this`.
      Reflect.apply(timer.callback, timer.handle, timer.args);
    } finally {
      // An interval runs again `delay` after its callback, unless it was cleared meanwhile.
      if (timer.repeat && live.get(id) === timer) native.schedule(id, timer.delay);
    }
  }

  const timerFunctions = {
    setTimeout(callback, after, ...args) { return start('timeout', callback, delayOf(after), args, false); },
    setInterval(callback, repeat, ...args) { return start('timeout', callback, delayOf(repeat), args, true); },
    // Node runs immediates in its check phase, after I/O; here they are timers due now.
    setImmediate(callback, ...args) { return start('immediate', callback, 0, args, false); },
    clearTimeout(handle) { clear(handle); },
    clearInterval(handle) { clear(handle); },
    clearImmediate(handle) { clear(handle); },
  };
  // The globals are announced lazily (accessors, timers.rs): one the code
  // assigned before this ran (a data property) is left as it is.
  const publish = (name, value) => {
    const current = Object.getOwnPropertyDescriptor(globalThis, name);
    if (!current || current.get) define(globalThis, name, value);
  };
  for (const [name, fn] of Object.entries(timerFunctions)) publish(name, fn);

  // ---- Event and EventTarget (the subset AbortSignal needs, with Node's names) ----
  const kStop = Symbol('stop');
  class Event {
    #type; #cancelable; #defaultPrevented = false; #target = null; #timeStamp;
    constructor(type, options = {}) {
      if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
      this.#type = String(type);
      this.#cancelable = Boolean(options?.cancelable);
      this.#timeStamp = Date.now();
      this[kStop] = false;
    }
    get type() { return this.#type; }
    get cancelable() { return this.#cancelable; }
    get defaultPrevented() { return this.#cancelable && this.#defaultPrevented; }
    get target() { return this.#target; }
    get currentTarget() { return this.#target; }
    get srcElement() { return this.#target; }
    get timeStamp() { return this.#timeStamp; }
    get isTrusted() { return false; }
    get bubbles() { return false; }
    get composed() { return false; }
    get eventPhase() { return this.#target ? 2 : 0; }
    preventDefault() { this.#defaultPrevented = true; }
    stopPropagation() {}
    stopImmediatePropagation() { this[kStop] = true; }
    composedPath() { return this.#target ? [this.#target] : []; }
    static setTarget(event, target) { event.#target = target; }
  }
  const setTarget = Event.setTarget;
  delete Event.setTarget;

  const kListeners = Symbol('listeners');
  class EventTarget {
    constructor() { this[kListeners] = new Map(); }
    addEventListener(type, listener, options) {
      if (listener === null || listener === undefined) return;
      const once = typeof options === 'object' && options !== null && Boolean(options.once);
      const signal = typeof options === 'object' && options !== null ? options.signal : undefined;
      if (signal?.aborted) return;
      const list = this[kListeners].get(type) ?? [];
      if (list.some((entry) => entry.listener === listener)) return;
      const entry = { listener, once };
      list.push(entry);
      this[kListeners].set(type, list);
      signal?.addEventListener('abort', () => this.removeEventListener(type, listener), { once: true });
    }
    removeEventListener(type, listener) {
      const list = this[kListeners].get(type);
      if (!list) return;
      const index = list.findIndex((entry) => entry.listener === listener);
      if (index >= 0) list.splice(index, 1);
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeError('The "event" argument must be an instance of Event.');
      setTarget(event, this);
      for (const entry of (this[kListeners].get(event.type) ?? []).slice()) {
        if (event[kStop]) break;
        if (entry.once) this.removeEventListener(event.type, entry.listener);
        try {
          if (typeof entry.listener === 'function') Reflect.apply(entry.listener, this, [event]);
          else if (typeof entry.listener?.handleEvent === 'function') entry.listener.handleEvent(event);
        } catch (error) {
          // As in Node: a listener's error does not stop the other listeners; it is uncaught.
          native.reportError(error);
        }
      }
      return !event.defaultPrevented;
    }
  }

  // ---- AbortController and AbortSignal ----
  const kAbort = Symbol('abort');
  let constructing = false;
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined;
    constructor() {
      if (!constructing) throw new TypeError('Illegal constructor');
      super();
      constructing = false;
      this.onabort = null;
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    [kAbort](reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
      const event = new Event('abort');
      if (typeof this.onabort === 'function') {
        try { Reflect.apply(this.onabort, this, [event]); } catch (error) { native.reportError(error); }
      }
      this.dispatchEvent(event);
    }
    static abort(reason) {
      const signal = newSignal();
      signal[kAbort](reason);
      return signal;
    }
    static timeout(ms) {
      const delay = Number(ms);
      if (!Number.isFinite(delay) || delay < 0 || delay > Number.MAX_SAFE_INTEGER) {
        const error = new RangeError(`The value of "delay" is out of range. It must be >= 0 && <= ${Number.MAX_SAFE_INTEGER}. Received ${String(ms)}`);
        error.code = 'ERR_OUT_OF_RANGE';
        throw error;
      }
      const signal = newSignal();
      // As in Node, this timer does not keep the run waiting by itself.
      globalThis.setTimeout(() => signal[kAbort](new DOMException('The operation was aborted due to timeout', 'TimeoutError')), delay).unref();
      return signal;
    }
    static any(signals) {
      const list = [...signals];
      for (const each of list) {
        if (!(each instanceof AbortSignal)) throw new TypeError('The "signals[0]" argument must be an instance of AbortSignal.');
      }
      const signal = newSignal();
      const first = list.find((each) => each.aborted);
      if (first) {
        signal[kAbort](first.reason);
        return signal;
      }
      for (const each of list) each.addEventListener('abort', () => signal[kAbort](each.reason), { once: true });
      return signal;
    }
  }
  function newSignal() {
    constructing = true;
    return new AbortSignal();
  }

  class AbortController {
    #signal = newSignal();
    get signal() { return this.#signal; }
    abort(reason) { this.#signal[kAbort](reason); }
  }

  for (const [name, value] of Object.entries({ Event, EventTarget, AbortSignal, AbortController })) {
    Object.defineProperty(value.prototype, Symbol.toStringTag, { value: name, configurable: true });
    publish(name, value);
  }
  return fire;
})
