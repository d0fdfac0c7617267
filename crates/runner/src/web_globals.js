// The side-effect-free web globals of the runner (docs/runner.md, "Globals").
// Evaluated at most once per process, on the first access to one of the
// names web_globals.rs announces, as a function that receives the
// native helpers of web_globals.rs and publish.js's `publish`/`define`; it
// leaves nothing else behind. `Intl` is built apart (intl/intl.js). Nothing
// here reaches outside the process: no I/O, no timers.
(function (native, publish, define) {
  'use strict';
  const global = globalThis;

  // ---- DOMException (minimal: name, message, code) ----
  const DOM_CODES = { IndexSizeError: 1, InvalidCharacterError: 5, NotSupportedError: 9,
    SyntaxError: 12, TypeMismatchError: 17, QuotaExceededError: 22, DataCloneError: 25 };
  class DOMException extends Error {
    #name;
    constructor(message = '', name = 'Error') {
      super(String(message));
      this.#name = String(name);
    }
    get name() { return this.#name; }
    get code() { return DOM_CODES[this.#name] || 0; }
  }
  publish(global, 'DOMException', DOMException);

  // ---- UTF-8: TextEncoder / TextDecoder ----
  const UTF8_LABELS = ['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8'];
  const encodeUtf8 = (input) => native.utf8Encode(String(input).toWellFormed());
  const bytesOf = (input) => {
    if (input === undefined) return new Uint8Array(0);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    throw new TypeError('The "input" argument must be an ArrayBuffer or an ArrayBufferView');
  };
  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input = '') { return encodeUtf8(input); }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) throw new TypeError('destination must be a Uint8Array');
      const text = String(source);
      let read = 0, written = 0;
      for (const ch of text) {
        const bytes = encodeUtf8(ch);
        if (written + bytes.length > destination.length) break;
        destination.set(bytes, written);
        written += bytes.length;
        read += ch.length;
      }
      return { read, written };
    }
  }
  class TextDecoder {
    #fatal; #ignoreBOM;
    constructor(label = 'utf-8', options = {}) {
      const normalized = String(label).trim().toLowerCase();
      if (!UTF8_LABELS.includes(normalized)) {
        throw new RangeError(`The "${label}" encoding is not supported (only utf-8)`);
      }
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return 'utf-8'; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input, options = {}) {
      if (options && options.stream) throw new TypeError('TextDecoder: streaming is not supported');
      let bytes = bytesOf(input);
      if (!this.#ignoreBOM && bytes.length >= 3 && bytes[0] === 0xEF && bytes[1] === 0xBB && bytes[2] === 0xBF) {
        bytes = bytes.subarray(3);
      }
      const text = native.utf8Decode(bytes.slice(), this.#fatal);
      if (text == null) throw new TypeError('The encoded data was not valid for encoding utf-8');
      return text;
    }
  }
  publish(global, 'TextEncoder', TextEncoder);
  publish(global, 'TextDecoder', TextDecoder);

  // ---- atob / btoa (forgiving base64) ----
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  publish(global, 'btoa', function btoa(data) {
    if (arguments.length === 0) throw new TypeError('btoa requires 1 argument');
    const text = String(data);
    let out = '';
    for (let i = 0; i < text.length; i += 3) {
      const codes = [text.charCodeAt(i), text.charCodeAt(i + 1), text.charCodeAt(i + 2)];
      for (const code of codes) {
        if (code > 0xFF) throw new DOMException('Invalid character', 'InvalidCharacterError');
      }
      const [a, b, c] = codes;
      out += B64[a >> 2] + B64[((a & 3) << 4) | ((b || 0) >> 4)];
      out += Number.isNaN(b) ? '=' : B64[((b & 15) << 2) | ((c || 0) >> 6)];
      out += Number.isNaN(c) ? '=' : B64[c & 63];
    }
    return out;
  });
  publish(global, 'atob', function atob(data) {
    if (arguments.length === 0) throw new TypeError('atob requires 1 argument');
    let text = String(data).replace(/[\t\n\f\r ]/g, '');
    if (text.length % 4 === 0) text = text.replace(/==?$/, '');
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
      throw new DOMException('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    }
    let out = '', buffer = 0, bits = 0;
    for (const ch of text) {
      buffer = (buffer << 6) | B64.indexOf(ch);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += String.fromCharCode((buffer >> bits) & 0xFF);
      }
    }
    return out;
  });

  // ---- crypto (OS random number generator) ----
  const INTEGER_ARRAYS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
    Int32Array, Uint32Array, BigInt64Array, BigUint64Array];
  const crypto = Object.create(null);
  define(crypto, 'getRandomValues', function getRandomValues(array) {
    if (!INTEGER_ARRAYS.some((Type) => array instanceof Type)) {
      throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
    }
    if (array.byteLength > 65536) {
      throw new DOMException(`The ArrayBufferView's byte length (${array.byteLength}) exceeds 65536`, 'QuotaExceededError');
    }
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(native.randomBytes(array.byteLength));
    return array;
  });
  define(crypto, 'randomUUID', function randomUUID() {
    const b = native.randomBytes(16);
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  });
  Object.freeze(crypto);
  publish(global, 'crypto', crypto);

  // ---- structuredClone ----
  const cloneError = (what) => new DOMException(`${what} could not be cloned.`, 'DataCloneError');
  const ERROR_TYPES = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  function clone(value, seen) {
    if (typeof value === 'symbol') throw cloneError(String(value));
    if (typeof value === 'function') throw cloneError(String(value).slice(0, 40));
    if (value === null || typeof value !== 'object') return value;
    if (seen.has(value)) return seen.get(value);
    const tag = Object.prototype.toString.call(value).slice(8, -1);
    let copy;
    switch (tag) {
      case 'Boolean': case 'Number': case 'String': case 'BigInt':
        copy = Object(value.valueOf()); seen.set(value, copy); return copy;
      case 'Date': copy = new Date(value.getTime()); seen.set(value, copy); return copy;
      case 'RegExp': copy = new RegExp(value.source, value.flags); seen.set(value, copy); return copy;
      case 'ArrayBuffer': copy = value.slice(0); seen.set(value, copy); return copy;
      case 'DataView': {
        copy = new DataView(clone(value.buffer, seen), value.byteOffset, value.byteLength);
        seen.set(value, copy); return copy;
      }
      case 'Map': {
        copy = new Map(); seen.set(value, copy);
        for (const [k, v] of value) copy.set(clone(k, seen), clone(v, seen));
        return copy;
      }
      case 'Set': {
        copy = new Set(); seen.set(value, copy);
        for (const v of value) copy.add(clone(v, seen));
        return copy;
      }
      case 'Error': {
        const Type = ERROR_TYPES[value.name] || Error;
        copy = new Type(String(value.message)); seen.set(value, copy);
        if (value.stack !== undefined) define(copy, 'stack', String(value.stack));
        if ('cause' in value) define(copy, 'cause', clone(value.cause, seen));
        return copy;
      }
      case 'Array': copy = new Array(value.length); break;
      case 'Object': copy = {}; break;
      default:
        if (ArrayBuffer.isView(value)) {
          const buffer = clone(value.buffer, seen);
          copy = new value.constructor(buffer, value.byteOffset, value.length);
          seen.set(value, copy); return copy;
        }
        throw cloneError(`#<${tag}>`);
    }
    seen.set(value, copy);
    for (const key of Object.keys(value)) copy[key] = clone(value[key], seen);
    return copy;
  }
  publish(global, 'structuredClone', function structuredClone(value, options) {
    if (arguments.length === 0) throw new TypeError('structuredClone requires 1 argument');
    if (options && options.transfer && options.transfer.length) {
      throw new DOMException('structuredClone: transfer is not supported', 'DataCloneError');
    }
    return clone(value, new Map());
  });

  // ---- URLSearchParams (application/x-www-form-urlencoded) ----
  const decoder = new TextDecoder();
  const isHex = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
  function formDecode(text) {
    const source = encodeUtf8(text.replace(/\+/g, ' '));
    const bytes = [];
    for (let i = 0; i < source.length; i++) {
      if (source[i] === 37 && i + 2 < source.length && isHex(source[i + 1]) && isHex(source[i + 2])) {
        bytes.push(parseInt(String.fromCharCode(source[i + 1], source[i + 2]), 16));
        i += 2;
      } else {
        bytes.push(source[i]);
      }
    }
    return decoder.decode(new Uint8Array(bytes));
  }
  function formEncode(text) {
    let out = '';
    for (const byte of encodeUtf8(text)) {
      const safe = (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
        || byte === 42 || byte === 45 || byte === 46 || byte === 95;
      if (safe) out += String.fromCharCode(byte);
      else if (byte === 32) out += '+';
      else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
    }
    return out;
  }
  function parseForm(text) {
    const list = [];
    for (const piece of text.split('&')) {
      if (piece === '') continue;
      const at = piece.indexOf('=');
      const name = at < 0 ? piece : piece.slice(0, at);
      const value = at < 0 ? '' : piece.slice(at + 1);
      list.push([formDecode(name), formDecode(value)]);
    }
    return list;
  }
  // Private links between a URL and its searchParams, set by static blocks.
  let attachParams, reparseParams, setSearchFromParams;
  class URLSearchParams {
    #list = [];
    #url = null;
    static {
      attachParams = (params, url, search) => { params.#url = url; params.#list = parseForm(search.slice(1)); };
      reparseParams = (params, search) => { params.#list = parseForm(search.slice(1)); };
    }
    constructor(init = '') {
      if (init instanceof URLSearchParams) {
        this.#list = [...init].map(([k, v]) => [k, v]);
      } else if ((init !== null && typeof init === 'object') || typeof init === 'function') {
        if (typeof init[Symbol.iterator] === 'function') {
          for (const pair of init) {
            const entry = [...pair];
            if (entry.length !== 2) throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            this.#list.push([String(entry[0]), String(entry[1])]);
          }
        } else {
          for (const key of Object.keys(init)) this.#list.push([key, String(init[key])]);
        }
      } else {
        const text = String(init);
        this.#list = parseForm(text.startsWith('?') ? text.slice(1) : text);
      }
    }
    #update() { if (this.#url) setSearchFromParams(this.#url, this.toString()); }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([String(name), String(value)]); this.#update(); }
    delete(name, value) {
      const n = String(name);
      this.#list = this.#list.filter(([k, v]) => !(k === n && (value === undefined || v === String(value))));
      this.#update();
    }
    get(name) { const found = this.#list.find(([k]) => k === String(name)); return found ? found[1] : null; }
    getAll(name) { return this.#list.filter(([k]) => k === String(name)).map(([, v]) => v); }
    has(name, value) {
      return this.#list.some(([k, v]) => k === String(name) && (value === undefined || v === String(value)));
    }
    set(name, value) {
      const n = String(name);
      const first = this.#list.findIndex(([k]) => k === n);
      if (first < 0) {
        this.#list.push([n, String(value)]);
      } else {
        this.#list[first] = [n, String(value)];
        this.#list = this.#list.filter(([k], i) => k !== n || i === first);
      }
      this.#update();
    }
    sort() {
      // Stable, by UTF-16 code units of the names.
      this.#list = this.#list.map((e, i) => [e, i])
        .sort(([a, i], [b, j]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : i - j)).map(([e]) => e);
      this.#update();
    }
    forEach(callback, thisArg) { for (const [k, v] of this.#list) callback.call(thisArg, v, k, this); }
    *entries() { for (const [k, v] of this.#list) yield [k, v]; }
    *keys() { for (const [k] of this.#list) yield k; }
    *values() { for (const [, v] of this.#list) yield v; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this.#list.map(([k, v]) => `${formEncode(k)}=${formEncode(v)}`).join('&'); }
    get [Symbol.toStringTag]() { return 'URLSearchParams'; }
  }
  publish(global, 'URLSearchParams', URLSearchParams);

  // ---- URL (WHATWG parsing by the Rust `url` crate) ----
  // native.urlParse/urlSet return [href, origin, protocol, username, password,
  // host, hostname, port, pathname, search, hash] or throw a TypeError.
  const optionalBase = (base) => (base === undefined ? undefined : String(base));
  class URL {
    #parts; #params = null;
    static {
      setSearchFromParams = (url, query) => { url.#parts = native.urlSet(url.#parts[0], 'search', query); };
    }
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeError('URL requires at least 1 argument');
      this.#parts = native.urlParse(String(url), optionalBase(base));
    }
    static canParse(url, base) {
      try { native.urlParse(String(url), optionalBase(base)); return true; } catch { return false; }
    }
    static parse(url, base) { try { return new URL(url, base); } catch { return null; } }
    #set(part, value) {
      this.#parts = part === 'href' ? native.urlParse(String(value), undefined)
        : native.urlSet(this.#parts[0], part, String(value));
      if (this.#params && (part === 'search' || part === 'href')) reparseParams(this.#params, this.#parts[9]);
    }
    get href() { return this.#parts[0]; }
    set href(value) { this.#set('href', value); }
    get origin() { return this.#parts[1]; }
    get protocol() { return this.#parts[2]; }
    set protocol(value) { this.#set('protocol', value); }
    get username() { return this.#parts[3]; }
    set username(value) { this.#set('username', value); }
    get password() { return this.#parts[4]; }
    set password(value) { this.#set('password', value); }
    get host() { return this.#parts[5]; }
    set host(value) { this.#set('host', value); }
    get hostname() { return this.#parts[6]; }
    set hostname(value) { this.#set('hostname', value); }
    get port() { return this.#parts[7]; }
    set port(value) { this.#set('port', value); }
    get pathname() { return this.#parts[8]; }
    set pathname(value) { this.#set('pathname', value); }
    get search() { return this.#parts[9]; }
    set search(value) { this.#set('search', value); }
    get hash() { return this.#parts[10]; }
    set hash(value) { this.#set('hash', value); }
    get searchParams() {
      if (!this.#params) {
        this.#params = new URLSearchParams();
        attachParams(this.#params, this, this.#parts[9]);
      }
      return this.#params;
    }
    toString() { return this.#parts[0]; }
    toJSON() { return this.#parts[0]; }
    get [Symbol.toStringTag]() { return 'URL'; }
  }
  publish(global, 'URL', URL);

})
