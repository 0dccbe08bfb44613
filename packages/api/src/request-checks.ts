/**
 * Checks of what every request carries before a route reads it: the Host header (the base of
 * the links the API returns when DUB_PUBLIC_URL is unset) and the ids in the path (only the shape
 * an id can have reaches the database: a NUL byte or a control character never does).
 */
import { NotFoundError, ValidationError } from '@dub/core';
import type { FastifyRequest } from 'fastify';
import { clip } from './http-errors.js';

/** host[:port] with a DNS name or IPv4 address, or an IPv6 literal in brackets. */
const HOST = /^(?:[A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Why the Host header is refused (RFC 9112 3.2: absent in HTTP/1.1, or not a host[:port]), or undefined. */
export function hostProblem(req: FastifyRequest): string | undefined {
  const host = req.headers.host;
  if (host === undefined) return req.raw.httpVersion === '1.1' ? 'Host header: required in HTTP/1.1' : undefined;
  if (!HOST.test(host)) return `Host header: ${JSON.stringify(clip(host, 60))} is not a host[:port]`;
  return undefined;
}

/** The base URL of links for a request: DUB_PUBLIC_URL, or the request's scheme and Host. */
export function requestBaseUrl(req: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const problem = hostProblem(req) ?? (req.headers.host === undefined ? 'Host header: required to build the links of the answer (or set DUB_PUBLIC_URL)' : undefined);
  if (problem) throw new ValidationError(problem, { field: 'host' });
  return `${req.protocol}://${req.headers.host}`;
}

/** The path parameters that are ids, with the prefix their ids have. */
const ID_PARAMS: Record<string, { prefix: string; what: string }> = {
  asset_id: { prefix: 'ast_', what: 'asset' },
  version_id: { prefix: 'ver_', what: 'version' },
  dubbing_id: { prefix: 'dub_', what: 'dubbing' },
};
const ID_BODY = /^[A-Za-z0-9]{1,64}$/;

/** 404 for a path id that cannot exist (wrong prefix, characters outside [A-Za-z0-9]). */
export function checkPathIds(params: unknown): void {
  if (!params || typeof params !== 'object') return;
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    const spec = ID_PARAMS[name];
    if (!spec || typeof value !== 'string') continue;
    if (!value.startsWith(spec.prefix) || !ID_BODY.test(value.slice(spec.prefix.length))) {
      throw new NotFoundError(`${spec.what} ${JSON.stringify(clip(value, 40))} not found (not an id: ${spec.prefix} and letters or digits)`);
    }
  }
}

