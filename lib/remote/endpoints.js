'use strict';

// Sessions spread over several `cordon host`s (deploy/k8s: the pods behind a
// headless Service), in plain JavaScript like the rest of cordon/remote.
// connectEndpoints() takes a list of targets, or a Service name whose A/AAAA
// records are resolved through dns.promises (again once they are older than
// refreshMs), and runs each session on the next endpoint, round-robin or at
// random. A run that never started — the host answered `refused` with a
// retryAfterMs (its session cap or the tenant's quota), or could not be
// reached — is run again on another endpoint, at most maxAttempts times in
// all. A refused endpoint is not tried again before its retryAfterMs; when
// every endpoint is waiting, the run waits for the first to be free, never
// longer than maxWaitMs. Anything else (a bad policy, a run that started and
// failed) is the caller's result, not retried: it would fail the same way
// elsewhere, or it already ran.

const crypto = require('node:crypto');
const dns = require('node:dns');
const net = require('node:net');
const { CordonError } = require('../errors');
const { isPlainObject } = require('../plain-json');
const { connectRemote } = require('./index');

const DEFAULT_MAX_ATTEMPTS = 3;
/** The longest a run waits for a refused endpoint's retryAfterMs (ms). */
const DEFAULT_MAX_WAIT_MS = 10_000;
/** How long an unreachable endpoint is left alone (ms): a pod going away, or not yet ready. */
const UNREACHABLE_BACKOFF_MS = 1_000;
/** How long a Service's resolved records are used before resolving again (ms). */
const DEFAULT_REFRESH_MS = 5_000;
/** Ceilings of the settings: a run is bounded however it is configured. */
const MAX_ATTEMPTS = 100;
const MAX_WAIT_MS = 600_000;
const SETTING_KEYS = new Set(['strategy', 'maxAttempts', 'maxWaitMs', 'slackMs', 'runnerProgram']);
const SERVICE_KEYS = new Set(['name', 'port', 'tls', 'token', 'resolver', 'refreshMs']);
/** The codes of a run that never started on that endpoint: safe to run elsewhere. */
const UNREACHABLE = 'ERR_CORDON_REMOTE_UNREACHABLE';

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function integerIn(name, value, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

function checkSettings(settings) {
  if (!isPlainObject(settings)) throw invalid('connectEndpoints settings must be an object such as {strategy: "round-robin"}');
  for (const key of Object.keys(settings)) {
    if (!SETTING_KEYS.has(key)) throw invalid(`unknown connectEndpoints setting "${key}"; known: ${[...SETTING_KEYS].join(', ')}`);
  }
  const { strategy = 'round-robin', maxAttempts = DEFAULT_MAX_ATTEMPTS, maxWaitMs = DEFAULT_MAX_WAIT_MS, ...client } = settings;
  if (strategy !== 'round-robin' && strategy !== 'random') throw invalid('strategy must be "round-robin" or "random"');
  return {
    strategy,
    maxAttempts: integerIn('maxAttempts', maxAttempts, 1, MAX_ATTEMPTS),
    maxWaitMs: integerIn('maxWaitMs', maxWaitMs, 0, MAX_WAIT_MS),
    client,
  };
}

function checkService(service) {
  if (!isPlainObject(service)) throw invalid('service must be {name, port, tls, token?}');
  for (const key of Object.keys(service)) {
    if (!SERVICE_KEYS.has(key)) throw invalid(`unknown service option "${key}"; known: ${[...SERVICE_KEYS].join(', ')}`);
  }
  const { name, port, tls, token, resolver = new dns.promises.Resolver(), refreshMs = DEFAULT_REFRESH_MS } = service;
  if (typeof name !== 'string' || !/^[A-Za-z0-9.-]{1,253}$/.test(name)) throw invalid('service.name must be a DNS name such as "cordon-host-endpoints.cordon-hosts.svc.cluster.local"');
  integerIn('service.port', port, 1, 65535);
  integerIn('service.refreshMs', refreshMs, 0, MAX_WAIT_MS);
  if (!resolver || typeof resolver.resolve4 !== 'function' || typeof resolver.resolve6 !== 'function') {
    throw invalid('service.resolver must be a dns.promises.Resolver');
  }
  return { name, port, tls, token, resolver, refreshMs };
}

/** A DNS answer of no records of that family is an empty list, not an error. */
async function records(resolve, name) {
  try {
    return await resolve(name);
  } catch (error) {
    if (error.code === 'ENODATA' || error.code === 'ENOTFOUND') return [];
    throw error;
  }
}

/** One target per A and AAAA record of the Service, verified against its name. */
async function resolveService(service) {
  const [v4, v6] = await Promise.all([
    records((n) => service.resolver.resolve4(n), service.name),
    records((n) => service.resolver.resolve6(n), service.name),
  ]).catch((error) => {
    throw new CordonError(UNREACHABLE, `cannot resolve ${service.name}: ${error.code ?? error.message}`, { cause: error });
  });
  const addresses = [...v4, ...v6].filter((address) => net.isIP(address) !== 0);
  if (addresses.length === 0) throw new CordonError(UNREACHABLE, `${service.name} has no A or AAAA record: no host is ready`);
  return addresses.map((address) => ({
    url: `tls://${net.isIPv6(address) ? `[${address}]` : address}:${service.port}`,
    tls: { servername: service.name, ...service.tls },
    ...(service.token !== undefined ? { token: service.token } : {}),
  }));
}

/** Where a run that never started may be retried, or null when it must not be. */
function retryAfter(error) {
  if (error?.code === UNREACHABLE) return UNREACHABLE_BACKOFF_MS;
  if (error?.details?.refused === true && Number.isFinite(error.details.retryAfterMs)) return Math.max(0, error.details.retryAfterMs);
  return null;
}

/** The endpoints, their clients and how long each is to be left alone; one per connectEndpoints(). */
class Spread {
  constructor({ strategy, maxAttempts, maxWaitMs, client }, service) {
    Object.assign(this, { strategy, maxAttempts, maxWaitMs, clientSettings: client, service });
    this.clients = new Map(); // label → {label, client, notBefore, lastError, inFlight, retired}
    this.retiring = new Set(); // forgotten entries whose runs are still in flight
    this.fixed = null;
    this.resolved = { at: -Infinity, entries: [] };
    this.cursor = 0;
    this.closing = null;
  }

  /** The entry of `target`, made once per label (connectRemote checks it now: fail closed). */
  open(target) {
    const label = isPlainObject(target) ? target.socket ?? target.url : undefined;
    if (!this.clients.has(label)) {
      const client = connectRemote(target, this.clientSettings);
      this.clients.set(label, { label, client, notBefore: 0, lastError: null, inFlight: 0, retired: false });
    }
    return this.clients.get(label);
  }

  async current() {
    if (this.fixed) return this.fixed;
    if (Date.now() - this.resolved.at >= this.service.refreshMs) {
      this.resolved = { at: Date.now(), entries: (await resolveService(this.service)).map((t) => this.open(t)) };
      this.retire(new Set(this.resolved.entries.map((e) => e.label)));
    }
    return this.resolved.entries;
  }

  /**
   * Forgets the endpoints a new resolution no longer lists (pods gone), so
   * the clients kept stay bounded by the records: each is closed once no
   * run of this module is in flight on it (closing stops its sandboxes).
   */
  retire(listed) {
    for (const entry of this.clients.values()) {
      if (listed.has(entry.label)) continue;
      this.clients.delete(entry.label);
      entry.retired = true;
      if (entry.inFlight === 0) entry.client.close();
      else this.retiring.add(entry);
    }
  }

  /** The endpoints in the order this attempt prefers them: from the cursor, or shuffled. */
  ordered(entries) {
    if (this.strategy === 'random') {
      const copy = [...entries];
      for (let i = copy.length - 1; i > 0; i -= 1) {
        const j = crypto.randomInt(i + 1);
        [copy[i], copy[j]] = [copy[j], copy[i]];
      }
      return copy;
    }
    const start = this.cursor % entries.length;
    this.cursor = (start + 1) % entries.length;
    return [...entries.slice(start), ...entries.slice(0, start)];
  }

  /** The next endpoint, free now and untried by this run if possible, else the first to be free. */
  choose(entries, tried) {
    const now = Date.now();
    const order = this.ordered(entries);
    const free = order.filter((e) => e.notBefore <= now);
    const pick = free.find((e) => !tried.has(e.label)) ?? free[0];
    if (pick) return { entry: pick, waitMs: 0 };
    const first = order.reduce((a, b) => (b.notBefore < a.notBefore ? b : a));
    return { entry: first, waitMs: first.notBefore - now };
  }

  /**
   * Steps: choose an endpoint (waiting for one if all asked to wait, within
   * maxWaitMs), run fn there, and on a run that never started mark that
   * endpoint and go again, at most maxAttempts times. The runs fn starts
   * should settle before its promise does (return their wait()): a host the
   * Service no longer lists is closed once no fn is in flight on it.
   */
  async run(fn) {
    if (typeof fn !== 'function') throw invalid('run needs a function (client, {endpoint, attempt}) => Promise');
    const attempts = [];
    const tried = new Set();
    for (;;) {
      if (this.closing) throw new CordonError('ERR_CORDON_CLOSED', 'this endpoints client is closed');
      const { entry, waitMs } = this.choose(await this.current(), tried);
      if (waitMs > this.maxWaitMs) {
        throw exhausted(entry.lastError, attempts, `every endpoint asks to wait, the first ${waitMs} ms more, over maxWaitMs ${this.maxWaitMs}`);
      }
      tried.add(entry.label);
      entry.inFlight += 1; // before the wait: a refresh meanwhile must not close this client under us
      try {
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        return await fn(entry.client, { endpoint: entry.label, attempt: attempts.length + 1 });
      } catch (error) {
        const backoff = retryAfter(error);
        if (backoff === null) throw error;
        entry.notBefore = Date.now() + backoff;
        entry.lastError = error;
        attempts.push({ endpoint: entry.label, code: error.code });
        if (attempts.length >= this.maxAttempts) throw exhausted(error, attempts, `${this.maxAttempts} attempts`);
      } finally {
        entry.inFlight -= 1;
        if (entry.retired && entry.inFlight === 0 && this.retiring.delete(entry)) entry.client.close();
      }
    }
  }

  close() {
    const open = [...this.clients.values(), ...this.retiring];
    this.closing ??= Promise.all(open.map((e) => e.client.close())).then(() => undefined);
    return this.closing;
  }
}

/** The last refusal, its code kept, with every attempt in details.attempts. */
function exhausted(last, attempts, why) {
  const tried = attempts.length > 0 ? `; tried ${attempts.map((a) => a.endpoint).join(', ')}` : '';
  return new CordonError(last.code, `${last.message} (${why}${tried})`, { cause: last, details: { ...last.details, attempts } });
}

/**
 * @param {{endpoints: object[]} | {service: {name: string, port: number, tls: object, token?: string, resolver?: object, refreshMs?: number}}} where
 * @param {{strategy?: 'round-robin'|'random', maxAttempts?: number, maxWaitMs?: number, slackMs?: number, runnerProgram?: string}} [settings]
 * @returns {{run: (fn: Function) => Promise<any>, endpoints: () => Promise<string[]>, close: () => Promise<void>}}
 */
function connectEndpoints(where, settings = {}) {
  if (!isPlainObject(where) || (where.endpoints === undefined) === (where.service === undefined) || Object.keys(where).length !== 1) {
    throw invalid('connectEndpoints needs exactly one of {endpoints: [target, …]} or {service: {name, port, tls}}');
  }
  const checked = checkSettings(settings);
  const spread = new Spread(checked, where.service === undefined ? null : checkService(where.service));
  if (where.endpoints !== undefined) {
    if (!Array.isArray(where.endpoints) || where.endpoints.length === 0) throw invalid('endpoints must be a non-empty array of targets');
    spread.fixed = where.endpoints.map((target) => spread.open(target));
  }
  return Object.freeze({
    run: (fn) => spread.run(fn),
    /** The endpoints known now (a Service's: as last resolved). */
    endpoints: async () => (await spread.current()).map((e) => e.label),
    /** Closes every client made here (their pools and sandboxes stop); idempotent. */
    close: () => spread.close(),
  });
}

module.exports = { connectEndpoints, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_WAIT_MS, UNREACHABLE_BACKOFF_MS };
