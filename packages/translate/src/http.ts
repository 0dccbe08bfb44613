/**
 * JSON over HTTP for the HTTP engines. Failures become UpstreamError: an HTTP status keeps its
 * number (408, 429 and 5xx retry, other 4xx do not), a Retry-After header is kept in
 * `details.retryAfterMs`, a network failure and an unparsable body are retryable. An aborted
 * signal propagates as the abort itself so the caller can tell a timeout from a cancel.
 */
import { UpstreamError } from '@dub/core';
import { parseRetryAfter } from './retry.js';

export interface PostJsonOptions {
  headers?: Record<string, string>;
  signal: AbortSignal;
  /** Name used in error messages, e.g. "deepl". */
  engine: string;
}

const SNIPPET = 300;

function snippet(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > SNIPPET ? `${t.slice(0, SNIPPET)}...` : t;
}

/** Strip credentials from a URL before it goes into a message. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}

export function postJson(url: string, body: unknown, opts: PostJsonOptions): Promise<unknown> {
  return requestJson(url, { method: 'POST', body: JSON.stringify(body) }, opts);
}

export function getJson(url: string, opts: PostJsonOptions): Promise<unknown> {
  return requestJson(url, { method: 'GET' }, opts);
}

async function requestJson(url: string, init: { method: string; body?: string }, opts: PostJsonOptions): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      ...init,
      headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), accept: 'application/json', ...opts.headers },
      signal: opts.signal,
    });
  } catch (e) {
    if (opts.signal.aborted) throw e;
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new UpstreamError(`${opts.engine}: request to ${safeUrl(url)} failed: ${cause?.code ?? cause?.message ?? (e as Error).message}`, {
      cause: e,
      retryable: true,
    });
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    if (opts.signal.aborted) throw e;
    throw new UpstreamError(`${opts.engine}: reading the reply of ${safeUrl(url)} failed: ${(e as Error).message}`, { cause: e, retryable: true });
  }
  if (!res.ok) {
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
    throw new UpstreamError(`${opts.engine}: ${safeUrl(url)} answered HTTP ${res.status}: ${snippet(text) || res.statusText}`, {
      upstreamStatus: res.status,
      details: { engine: opts.engine, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw malformedReply(opts.engine, `reply is not JSON: ${snippet(text)}`, e);
  }
}

/** A reply that does not have the promised shape: retried, then failed (never half-used). */
export function malformedReply(engine: string, what: string, cause?: unknown): UpstreamError {
  return new UpstreamError(`${engine}: malformed reply: ${what}`, { cause, retryable: true, details: { engine, reason: 'malformed_reply' } });
}
