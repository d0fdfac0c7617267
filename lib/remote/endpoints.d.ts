// Declarations of lib/remote/endpoints.js (hand-written, like index.d.ts):
// sessions spread over several cordon hosts, a refusal retried elsewhere.

import type { RemoteClient, RemoteSettings, RemoteTlsTarget, RemoteUnixTarget } from './index';

/** A headless Service whose A/AAAA records are the hosts: each dialled as tls://ADDRESS:PORT. */
export interface EndpointsService {
  /** e.g. "cordon-host-endpoints.cordon-hosts.svc.cluster.local"; also the TLS server name unless tls.servername says otherwise. */
  name: string;
  port: number;
  tls: RemoteTlsTarget['tls'];
  token?: string;
  /** Default: a new dns.promises.Resolver (the system's resolvers). */
  resolver?: { resolve4(name: string): Promise<string[]>; resolve6(name: string): Promise<string[]> };
  /** How long resolved records are used before resolving again (ms, default 5000). */
  refreshMs?: number;
}

export interface EndpointsSettings extends RemoteSettings {
  strategy?: 'round-robin' | 'random';
  /** Runs of one session in all, the first included (default 3, at most 100). */
  maxAttempts?: number;
  /** The longest a run waits for a refused host's retryAfterMs (ms, default 10000). */
  maxWaitMs?: number;
}

export interface EndpointAttempt {
  endpoint: string;
  attempt: number;
}

export interface Endpoints {
  /** Runs fn on one host; again on another while it rejects with a run that never started (refused with retryAfterMs, unreachable). */
  run<T>(fn: (client: RemoteClient, attempt: EndpointAttempt) => Promise<T> | T): Promise<T>;
  /** The endpoints known now: socket paths or tls:// URLs. */
  endpoints(): Promise<string[]>;
  /** Closes every client made here (their pools and sandboxes stop); idempotent. */
  close(): Promise<void>;
}

export declare function connectEndpoints(
  where: { endpoints: Array<RemoteUnixTarget | RemoteTlsTarget> } | { service: EndpointsService },
  settings?: EndpointsSettings,
): Endpoints;
export declare const DEFAULT_MAX_ATTEMPTS: number;
export declare const DEFAULT_MAX_WAIT_MS: number;
export declare const UNREACHABLE_BACKOFF_MS: number;
