// fetch, Request, Response and Headers: the WHATWG-shaped subset of the
// fetch extension (docs/runner.md, "fetch"). The host performs every
// request; `native` (fetch_bridge.rs) has send(request, bodyArrayBuffer)
// → [id, promise of {ok, response|error}] and abort(id). Evaluated once per
// world whose host confirmed the fetch extension, before the program runs, in
// strict mode (without the extension, fetch_disabled.js defines the refusing
// `fetch`).
(function (native) {
  'use strict';
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const NORMALIZED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
  const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];
  const REDIRECT_MODES = ['follow', 'manual', 'error'];
  const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
  const internal = Symbol('fetch internals');

  function normalizeValue(value) {
    return String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  }
  function checkHeader(name, value) {
    if (!TOKEN.test(name)) throw new TypeError(`Headers: "${name}" is an invalid header name.`);
    if (/[\0\r\n]/.test(value)) throw new TypeError(`Headers: "${value}" is an invalid header value.`);
  }

  class Headers {
    constructor(init = undefined) {
      this[internal] = [];
      if (init === undefined || init === null) return;
      if (typeof init !== 'object') throw new TypeError("Headers constructor: expected a sequence or record");
      if (init instanceof Headers) {
        for (const [name, value] of init[internal]) this[internal].push([name, value]);
      } else if (typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) {
          const entry = [...pair];
          if (entry.length !== 2) throw new TypeError('Headers constructor: expected name/value pair to be length 2, found ' + entry.length + '.');
          this.append(entry[0], entry[1]);
        }
      } else {
        for (const key of Object.keys(init)) this.append(key, init[key]);
      }
    }
    append(name, value) {
      const key = String(name).toLowerCase();
      const text = normalizeValue(value);
      checkHeader(String(name), text);
      this[internal].push([key, text]);
    }
    set(name, value) {
      const key = String(name).toLowerCase();
      const text = normalizeValue(value);
      checkHeader(String(name), text);
      const list = this[internal];
      const at = list.findIndex(([each]) => each === key);
      if (at === -1) { list.push([key, text]); return; }
      list[at] = [key, text];
      for (let i = list.length - 1; i > at; i -= 1) if (list[i][0] === key) list.splice(i, 1);
    }
    get(name) {
      const key = String(name).toLowerCase();
      const values = this[internal].filter(([each]) => each === key).map(([, value]) => value);
      return values.length === 0 ? null : values.join(', ');
    }
    getSetCookie() {
      return this[internal].filter(([each]) => each === 'set-cookie').map(([, value]) => value);
    }
    has(name) {
      const key = String(name).toLowerCase();
      return this[internal].some(([each]) => each === key);
    }
    delete(name) {
      const key = String(name).toLowerCase();
      this[internal] = this[internal].filter(([each]) => each !== key);
    }
    forEach(callback, thisArg = undefined) {
      for (const [name, value] of this) callback.call(thisArg, value, name, this);
    }
    // Sorted and combined, as WHATWG iterates (set-cookie stays one entry per value).
    *entries() {
      const names = [...new Set(this[internal].map(([name]) => name))].sort();
      for (const name of names) {
        if (name === 'set-cookie') for (const value of this.getSetCookie()) yield [name, value];
        else yield [name, this.get(name)];
      }
    }
    *keys() { for (const [name] of this.entries()) yield name; }
    *values() { for (const [, value] of this.entries()) yield value; }
    [Symbol.iterator]() { return this.entries(); }
    get [Symbol.toStringTag]() { return 'Headers'; }
  }

  /** BodyInit → {bytes: Uint8Array | null, type: default content-type | null}. */
  function extractBody(body) {
    if (body === undefined || body === null) return { bytes: null, type: null };
    if (typeof body === 'string') return { bytes: new TextEncoder().encode(body), type: 'text/plain;charset=UTF-8' };
    if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body.slice(0)), type: null };
    if (ArrayBuffer.isView(body)) return { bytes: new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), type: null };
    if (typeof URLSearchParams === 'function' && body instanceof URLSearchParams) {
      return { bytes: new TextEncoder().encode(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
    }
    return { bytes: new TextEncoder().encode(String(body)), type: 'text/plain;charset=UTF-8' };
  }

  // (Not a private method: responses built by fromState never ran a constructor.)
  function take(body) {
    const state = body[internal];
    if (state.used) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    state.used = true;
    return Promise.resolve(state.bytes ?? new Uint8Array(0));
  }

  /** The body mixin: one read, then bodyUsed. */
  class Body {
    constructor(bytes) { this[internal] = { ...this[internal], bytes, used: false }; }
    get bodyUsed() { return this[internal].used; }
    get body() { return null; }
    arrayBuffer() { return take(this).then((bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)); }
    bytes() { return take(this).then((bytes) => new Uint8Array(bytes)); }
    text() { return take(this).then((bytes) => new TextDecoder().decode(bytes)); }
    json() { return this.text().then((text) => JSON.parse(text)); }
    blob() { return Promise.reject(new TypeError('Body.blob() is not supported in Code Mode: use text(), json() or arrayBuffer()')); }
    formData() { return Promise.reject(new TypeError('Body.formData() is not supported in Code Mode: use text(), json() or arrayBuffer()')); }
  }

  function parseUrl(input) {
    try {
      return new URL(String(input));
    } catch {
      throw new TypeError(`Failed to parse URL from ${String(input)}`);
    }
  }

  class Request extends Body {
    constructor(input, init = {}) {
      const from = input instanceof Request ? input : null;
      const url = from ? from.url : parseUrl(input).href;
      let method = init.method !== undefined ? String(init.method) : from ? from.method : 'GET';
      if (!TOKEN.test(method)) throw new TypeError(`'${method}' is not a valid HTTP method.`);
      if (FORBIDDEN_METHODS.includes(method.toUpperCase())) throw new TypeError(`'${method}' HTTP method is unsupported.`);
      if (NORMALIZED_METHODS.includes(method.toUpperCase())) method = method.toUpperCase();
      const redirect = init.redirect !== undefined ? String(init.redirect) : from ? from.redirect : 'follow';
      if (!REDIRECT_MODES.includes(redirect)) throw new TypeError(`Request constructor: ${redirect} is not an accepted type. Expected one of follow, manual, error.`);
      const headers = new Headers(init.headers !== undefined ? init.headers : from ? from.headers : undefined);
      let bytes = from ? from[internal].bytes : null;
      if (init.body !== undefined && init.body !== null) {
        if (method === 'GET' || method === 'HEAD') throw new TypeError('Request with GET/HEAD method cannot have body.');
        const extracted = extractBody(init.body);
        bytes = extracted.bytes;
        if (extracted.type && !headers.has('content-type')) headers.set('content-type', extracted.type);
      }
      super(bytes);
      const signal = init.signal !== undefined ? init.signal : from ? from.signal : null;
      Object.assign(this[internal], { url, method, headers, redirect, signal });
    }
    get url() { return this[internal].url; }
    get method() { return this[internal].method; }
    get headers() { return this[internal].headers; }
    get redirect() { return this[internal].redirect; }
    get signal() { return this[internal].signal; }
    clone() {
      if (this.bodyUsed) throw new TypeError('Request.clone: Body has already been consumed.');
      return new Request(this);
    }
    get [Symbol.toStringTag]() { return 'Request'; }
  }

  class Response extends Body {
    constructor(body = null, init = {}) {
      const status = init.status === undefined ? 200 : Number(init.status);
      if (!Number.isInteger(status) || status < 200 || status > 599) throw new RangeError(`init["status"] must be in the range of 200 to 599, inclusive.`);
      const headers = new Headers(init.headers);
      const extracted = extractBody(body);
      if (extracted.type && !headers.has('content-type')) headers.set('content-type', extracted.type);
      super(extracted.bytes);
      Object.assign(this[internal], {
        status, statusText: init.statusText === undefined ? '' : String(init.statusText), headers, url: '', redirected: false, type: 'default',
      });
    }
    get status() { return this[internal].status; }
    get ok() { return this[internal].status >= 200 && this[internal].status <= 299; }
    get statusText() { return this[internal].statusText; }
    get headers() { return this[internal].headers; }
    get url() { return this[internal].url; }
    get redirected() { return this[internal].redirected; }
    get type() { return this[internal].type; }
    clone() {
      if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
      return fromState({ ...this[internal], headers: new Headers(this[internal].headers), used: false });
    }
    static json(data, init = {}) {
      const text = JSON.stringify(data);
      if (text === undefined) throw new TypeError('Value is not JSON serializable');
      const headers = new Headers(init.headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      return new Response(text, { ...init, headers });
    }
    static error() {
      return fromState({ status: 0, statusText: '', headers: new Headers(), url: '', redirected: false, type: 'error', bytes: null, used: false });
    }
    static redirect(url, status = 302) {
      if (!REDIRECT_STATUSES.includes(status)) throw new RangeError(`Invalid status code ${status}`);
      return fromState({ status, statusText: '', headers: new Headers([['location', parseUrl(url).href]]), url: '', redirected: false, type: 'default', bytes: null, used: false });
    }
    get [Symbol.toStringTag]() { return 'Response'; }
  }

  function fromState(state) {
    const response = Object.create(Response.prototype);
    response[internal] = state;
    return response;
  }

  function abortReason(signal) {
    return signal.reason !== undefined ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
  }

  function failure(error) {
    const message = typeof error?.message === 'string' ? error.message : 'unknown error';
    const cause = new Error(message);
    if (typeof error?.code === 'string') cause.code = error.code;
    return new TypeError(`fetch failed: ${message}`, { cause });
  }

  function fetch(input, init = undefined) {
    return new Promise((resolve, reject) => {
      const request = new Request(input, init ?? {});
      const { signal } = request;
      if (signal && signal.aborted) { reject(abortReason(signal)); return; }
      const bytes = request[internal].bytes;
      const [id, pending] = native.send({
        method: request.method, url: request.url, headers: request.headers[internal].map(([name, value]) => [name, value]), redirect: request.redirect,
      }, bytes ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) : undefined);
      let onAbort = null;
      if (signal && typeof signal.addEventListener === 'function') {
        onAbort = () => { native.abort(id); reject(abortReason(signal)); };
        signal.addEventListener('abort', onAbort, { once: true });
      }
      pending.then((reply) => {
        if (onAbort) signal.removeEventListener('abort', onAbort);
        if (!reply.ok) { reject(failure(reply.error)); return; }
        const { status, statusText, headers, url, redirected, body } = reply.response;
        resolve(fromState({
          status, statusText, headers: new Headers(headers), url, redirected, type: 'basic', bytes: new Uint8Array(body), used: false,
        }));
      });
    });
  }

  define('Headers', Headers);
  define('Request', Request);
  define('Response', Response);
  define('fetch', fetch);
});
