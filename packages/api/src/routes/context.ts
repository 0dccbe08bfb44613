/**
 * What every route module shares: the server context (service, store, keys, ...), the auth mode a
 * route declares (`config.auth`), who a request acts for, the base URL of the links it returns,
 * and the OpenAPI pieces of error responses. A route module exports `register<Name>Routes(app, ctx)`.
 */
import type { BlobStore, Logger } from '@dub/core';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { KeyRing, Principal, RateLimiter } from '../auth.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics.js';
import type { ResolvedApiOptions } from '../options.js';
import { requestBaseUrl } from '../request-checks.js';
import type { Access, DubService } from '../service.js';
import type { PairCapability } from '../validation.js';
import type { VoiceCatalog } from '../voices.js';

export interface ServerContext {
  service: DubService;
  store: BlobStore;
  db: Db;
  keys: KeyRing;
  limiter: RateLimiter;
  metrics: Metrics;
  voices: VoiceCatalog;
  options: ResolvedApiOptions;
  publicKeyPem: string;
  /** Where the cause of every 500 goes, with its request id. */
  logger: Logger;
  /** Whether the engines that run the work serve a language pair (validation.ts PairCapability); absent: not checked. */
  pairs?: PairCapability;
  /** Extra gauges for /metrics (outbox, queue). */
  gauges?: () => Promise<{ name: string; help: string; labels?: Record<string, string>; value: number }[]>;
}

/** key: an API key; public: none; key-or-studio: an API key or the signed studio link of the route's version. */
export type AuthMode = 'key' | 'public' | 'key-or-studio';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    access?: Access;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

/** OpenAPI responses of error statuses: the contract's `{detail}` body each. */
export const Err = { $ref: 'ErrorBody#' };
export const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, Err]));
export const security = [{ api_key: [] as string[] }];
export const VersionParams = Type.Object({ version_id: Type.String() });

export function baseUrlOf(req: FastifyRequest, opts: ResolvedApiOptions): string {
  return requestBaseUrl(req, opts.publicUrl);
}

/** The organization of the request's API key (routes with auth `key`). */
export function org(req: FastifyRequest): string {
  return req.principal!.org;
}

/** The organization a request acts for: its API key's, or the owner of the signed studio link's version. */
export async function orgOf(service: DubService, req: FastifyRequest, versionId: string): Promise<string> {
  const a = req.access!;
  return 'org' in a ? a.org : (await service.versions.versionRow(a, versionId)).org_id;
}

/** The `version_id` path parameter. */
export function versionIdOf(req: FastifyRequest): string {
  return (req.params as { version_id: string }).version_id;
}
