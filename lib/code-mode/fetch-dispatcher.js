'use strict';

// One program `fetch`, from the runner's `fetch.request` to the host's
// `fetch.result`. Steps — every refusal answers ok:false with a stable code
// (the program sees `TypeError: fetch failed: <message>`, the code as
// `error.cause.code`):
//   1. count against network.maxRequests        REQUEST_LIMIT_EXCEEDED
//   2. parse the URL; body within maxRequestBytes INVALID_URL, REQUEST_TOO_LARGE
//   3. admit the hop (fetch-admission.js)       the engine's refusal reason, upper-cased
//   4. exchange (fetch-hop.js)                  CONNECT_FAILED, TLS_FAILED, RESPONSE_TOO_LARGE, REQUEST_FAILED
//   5. a redirect: follow (re-admitted from 3, at most maxRedirects: TOO_MANY_REDIRECTS),
//      'manual' (the 3xx as it is) or 'error' (REDIRECT_REFUSED)
// The whole fetch is bounded by network.timeoutMs (TIMEOUT) and by the run:
// abandon() aborts everything in flight (RUN_ENDED). Every hop, refused or
// not, leaves a network receipt shaped like the egress engine's.

const { admitHop } = require('./fetch-admission');
const { sendHop, HopError } = require('./fetch-hop');
const { redactValue } = require('./redact');

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Receipts kept per run, as the engine keeps (the rest are counted in networkReceiptsDropped). */
const MAX_RECEIPTS = 4096;

function refusal(code, message) {
  return { ok: false, error: { code, message: String(message).slice(0, 1024).toWellFormed() } };
}

class FetchDispatcher {
  /**
   * @param {{network: object, rules: object, events: import('./events').EventLog, invocationId: string}} options
   */
  constructor({ network, rules, events, invocationId }) {
    this.network = network;
    this.rules = rules;
    this.events = events;
    this.invocationId = invocationId;
    this.requests = 0;
    this.receipts = [];
    this.receiptsDropped = 0;
    /** fetch id → {controller, started, reported} of each fetch in flight. */
    this.inFlight = new Map();
  }

  /**
   * Perform one fetch.request. Never rejects.
   * @param {{id: number, request: {method: string, url: string, headers: [string, string][], redirect: string, body?: string}}} frame
   */
  async dispatch(frame) {
    const { id, request } = frame;
    const started = performance.now();
    this.requests += 1;
    this.events.emit('fetch.requested', { fetchId: id, parentId: this.executionIdOf(), ...describeRequest(request) });
    const controller = new AbortController();
    const flight = { controller, started, reported: false };
    this.inFlight.set(id, flight);
    const timer = setTimeout(() => controller.abort(new HopError('TIMEOUT', `the request took longer than the host's network.timeoutMs ${this.network.timeoutMs} ms`, 'timeout')), this.network.timeoutMs);
    let outcome;
    try {
      outcome = this.requests > this.network.maxRequests
        ? refusal('REQUEST_LIMIT_EXCEEDED', `at most ${this.network.maxRequests} requests per run (the host's network.maxRequests)`)
        : await this.perform(id, request, controller.signal);
    } catch (error) {
      outcome = refusal('HOST_ERROR', error?.message ?? String(error));
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(id);
    }
    const durationMs = Math.round(performance.now() - started);
    if (flight.reported) return outcome; // abandoned: already reported as failed
    if (outcome.ok) {
      const { status } = outcome.response;
      this.events.emit('fetch.completed', { fetchId: id, parentId: this.executionIdOf(), status, durationMs, responseBytes: outcome.bytes });
    } else {
      this.events.emit('fetch.failed', { fetchId: id, parentId: this.executionIdOf(), durationMs, error: { code: outcome.error.code } });
    }
    return outcome;
  }

  executionIdOf() {
    return this.events.executionId;
  }

  /** The program aborted fetch `id`: its answer is the AbortError it already threw. */
  abort(id) {
    this.inFlight.get(id)?.controller.abort(new HopError('ABORTED', 'the program aborted the request', 'cancelled'));
  }

  /**
   * The run ended: abort every fetch in flight and report it failed now, so that no
   * event follows execution.finished (as calls.js does for tool calls).
   */
  abandon() {
    for (const [id, flight] of this.inFlight) {
      flight.reported = true;
      flight.controller.abort(new HopError('RUN_ENDED', 'the run ended', 'cancelled'));
      this.events.emit('fetch.failed', { fetchId: id, parentId: this.executionIdOf(), durationMs: Math.round(performance.now() - flight.started), error: { code: 'RUN_ENDED' } });
    }
    this.inFlight.clear();
  }

  async perform(id, request, signal) {
    let url;
    try {
      url = new URL(request.url);
    } catch {
      return refusal('INVALID_URL', `${request.url.slice(0, 200)} is not a URL`);
    }
    const body = request.body === undefined ? null : Buffer.from(request.body, 'base64');
    if (body && body.length > this.network.maxRequestBytes) {
      return refusal('REQUEST_TOO_LARGE', `the request body is ${body.length} bytes, over the host's network.maxRequestBytes ${this.network.maxRequestBytes}`);
    }
    let hop = { url, method: request.method, headers: request.headers, body };
    for (let redirects = 0; ; redirects += 1) {
      const answer = await this.oneHop(id, hop, signal);
      if (!answer.ok) return answer;
      const location = answer.response.headers.find(([name]) => name === 'location')?.[1];
      if (!REDIRECT_STATUSES.has(answer.response.status) || location === undefined || request.redirect === 'manual') {
        return finish(answer.response, hop.url, redirects > 0);
      }
      if (request.redirect === 'error') return refusal('REDIRECT_REFUSED', `redirect mode is "error" and ${hop.url.host} answered ${answer.response.status}`);
      if (redirects >= this.network.maxRedirects) return refusal('TOO_MANY_REDIRECTS', `more than ${this.network.maxRedirects} redirects`);
      let next;
      try {
        next = new URL(location, hop.url);
      } catch {
        return refusal('INVALID_URL', `the redirect location ${location.slice(0, 200)} is not a URL`);
      }
      hop = redirected(hop, next, answer.response.status);
    }
  }

  /** Admission, exchange and the receipt of one hop. */
  async oneHop(id, hop, signal) {
    const startedAt = new Date();
    const t0 = performance.now();
    const admitted = await admitHop(hop.url, this.network, this.rules, signal);
    const receipt = {
      fetchId: id, frontend: 'fetch', protocol: hop.url.protocol === 'https:' ? 'HTTPS' : 'HTTP', method: hop.method,
      host: admitted.host, port: admitted.port, pinnedAddress: null, result: admitted.ok ? 'allowed' : admitted.reason,
      startedAt: startedAt.toISOString(),
    };
    if (!admitted.ok) {
      this.record({ ...receipt, durationMs: Math.round(performance.now() - t0), bytesFromClient: 0, bytesToClient: 0 });
      return refusal(admitted.reason.toUpperCase().replace(/-/g, '_'), admitted.message);
    }
    try {
      const response = await sendHop({ admitted, ...hop, network: this.network, signal });
      this.record({
        ...receipt, pinnedAddress: response.address, end: 'closed', status: response.status,
        durationMs: Math.round(performance.now() - t0), bytesFromClient: response.bytesOut, bytesToClient: response.bytesIn,
      });
      return { ok: true, response };
    } catch (error) {
      const failure = error instanceof HopError ? error : new HopError('REQUEST_FAILED', error?.message ?? String(error), 'error');
      this.record({
        ...receipt, pinnedAddress: failure.connected === false ? null : failure.address ?? null,
        result: failure.code === 'CONNECT_FAILED' ? 'connect-failed' : 'allowed', end: failure.end ?? 'error',
        durationMs: Math.round(performance.now() - t0), bytesFromClient: failure.bytesOut ?? 0, bytesToClient: failure.bytesIn ?? 0,
      });
      return refusal(failure.code, failure.message);
    }
  }

  record(receipt) {
    if (receipt.result !== 'allowed') delete receipt.end;
    const full = { id: this.receipts.length + this.receiptsDropped + 1, ...receipt, invocationId: this.invocationId };
    if (this.receipts.length < MAX_RECEIPTS) this.receipts.push(Object.freeze(full));
    else this.receiptsDropped += 1;
  }
}

/** What a redirect changes: WHATWG's method rewrite, and no Authorization across origins. */
function redirected(hop, next, status) {
  const toGet = (status === 303 && hop.method !== 'HEAD') || ((status === 301 || status === 302) && hop.method === 'POST');
  let { headers } = hop;
  if (toGet) headers = headers.filter(([name]) => !['content-type', 'content-encoding', 'content-language', 'content-location'].includes(name));
  if (next.origin !== hop.url.origin) headers = headers.filter(([name]) => name !== 'authorization');
  return { url: next, method: toGet ? 'GET' : hop.method, headers, body: toGet ? null : hop.body };
}

function finish(response, url, wasRedirected) {
  return {
    ok: true,
    bytes: response.body.length,
    response: {
      status: response.status, statusText: response.statusText, headers: response.headers, url: url.href, redirected: wasRedirected,
      body: response.body.toString('base64'),
    },
  };
}

/**
 * The request as events show it: method, origin and path kept (what debugging
 * needs); query values and header values go through the tool-argument
 * redaction (secret-looking names → "[REDACTED]", other strings → their size).
 */
function describeRequest(request) {
  let url;
  try {
    url = new URL(request.url);
  } catch {
    return { method: request.method, url: { type: 'string', utf8Bytes: Buffer.byteLength(request.url) } };
  }
  const query = {};
  for (const [key, value] of url.searchParams) query[key] = value;
  const headers = {};
  for (const [name, value] of request.headers) headers[name] = value;
  return {
    method: request.method,
    origin: url.origin,
    path: url.pathname,
    query: redactValue(query),
    headers: redactValue(headers),
    requestBytes: request.body === undefined ? 0 : Buffer.byteLength(request.body, 'base64'),
  };
}

module.exports = { FetchDispatcher };
