import { ConflictError, DubError, StorageError as CoreStorageError } from '@dub/core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  CONDITIONS,
  ConcurrentUpdateError,
  conditionOf,
  GoneError,
  InsufficientBalanceError,
  InvalidStateError,
  LinkExpiredError,
  LinkInvalidError,
  LinkNotAllowedError,
  MediaSizeLimitError,
  NotFoundError,
  NotReadyError,
  NotSupportedError,
  NotVisibleError,
  PayloadTooLargeError,
  PreconditionFailedError,
  RateLimitedError,
  ShuttingDownError,
  StorageError,
  UnauthorizedError,
  UnavailableError,
  UriTooLongError,
  ValidationError,
  type ConditionName,
} from './errors.js';
import { createErrorReply } from './http-errors.js';

/** One instance of every class, with the status, code and retryability a client sees. */
const CASES: [DubError, ConditionName, number, string, boolean][] = [
  [new ValidationError('name: must not be empty'), 'validation', 400, 'validation_error', false],
  [new InvalidStateError('version ver_x is Generating; generate is allowed only when it is ReadyToEdit'), 'invalid_state', 400, 'invalid_state', false],
  [new NotReadyError('version ver_x has no script yet (status NotReady)'), 'not_ready', 400, 'not_ready', true],
  [new UnauthorizedError(), 'unauthorized', 401, 'unauthorized', false],
  [new LinkInvalidError('studio link'), 'link_invalid', 403, 'forbidden', false],
  [new LinkExpiredError('download link'), 'link_expired', 403, 'forbidden', false],
  [new LinkNotAllowedError('studio_url_request: a studio link cannot create studio links'), 'link_not_allowed', 403, 'forbidden', false],
  [new InsufficientBalanceError('generating 2 minutes needs more than the remaining 1 minutes'), 'insufficient_balance', 403, 'insufficient_balance', false],
  [new MediaSizeLimitError(1000), 'media_size_limit', 403, 'video_size_limit_reached', false],
  [new NotFoundError('asset ast_x not found'), 'not_found', 404, 'not_found', false],
  [new NotVisibleError('asset ast_x is not visible'), 'not_visible', 404, 'not_found', true],
  [new ConcurrentUpdateError('version ver_x'), 'concurrent_update', 409, 'conflict', true],
  [new GoneError('generation 1 of version ver_x is no longer available'), 'gone', 410, 'gone', false],
  [new PreconditionFailedError('the script changed since it was read'), 'precondition_failed', 412, 'precondition_failed', false],
  [new PayloadTooLargeError('body: larger than the limit'), 'payload_too_large', 413, 'payload_too_large', false],
  [new UriTooLongError('path: a path parameter is too long'), 'uri_too_long', 414, 'validation_error', false],
  [new RateLimitedError(60, 12), 'rate_limited', 429, 'rate_limited', true],
  [new NotSupportedError('line synthesis needs a filesystem blob store'), 'not_supported', 501, 'engine_unavailable', false],
  [new StorageError('storage unavailable: writing x failed', 'EROFS'), 'storage_unavailable', 503, 'storage_unavailable', true],
  [new UnavailableError('the studio page is not built'), 'unavailable', 503, 'engine_unavailable', false],
  [new ShuttingDownError(), 'shutting_down', 503, 'engine_unavailable', true],
];

describe('API error classes', () => {
  it.each(CASES.map((c) => [c[0].constructor.name, ...c] as const))('%s: status, code and retryable of its condition', (_name, err, condition, status, code, retryable) => {
    expect(err).toBeInstanceOf(DubError);
    expect(conditionOf(err)).toBe(condition);
    expect({ status: err.status, code: err.code, retryable: err.retryable }).toEqual({ status, code, retryable });
    // The table is the one source: a class's values are its row's.
    expect(CONDITIONS[condition]).toEqual({ status, code, retryable });
  });

  it('covers every condition of the table with a class (internal is any unknown error)', () => {
    const covered = new Set(CASES.map((c) => c[1]));
    const missing = (Object.keys(CONDITIONS) as ConditionName[]).filter((c) => !covered.has(c) && c !== 'internal');
    expect(missing).toEqual([]);
  });

  it('each condition is its own class', () => {
    const names = CASES.map((c) => c[0].constructor.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new ConcurrentUpdateError('x')).not.toBeInstanceOf(ValidationError);
    expect(new InvalidStateError('x')).not.toBeInstanceOf(ValidationError);
    expect(StorageError).toBe(CoreStorageError);
  });

  it('messages of the contract: insufficient_balance and video_size_limit_reached lead the detail', () => {
    expect(new InsufficientBalanceError('x').message).toBe('insufficient_balance: x');
    expect(new InsufficientBalanceError('insufficient_balance: y').message).toBe('insufficient_balance: y');
    expect(new MediaSizeLimitError(5).message).toMatch(/^video_size_limit_reached: /);
    expect(new LinkExpiredError('studio link').message).toBe('the studio link has expired');
    expect(new LinkInvalidError('download link').message).toBe('the download link signature is invalid');
    expect(new ConcurrentUpdateError('version ver_x').message).toBe('version ver_x changed concurrently; read it again and retry');
  });
});

describe('the error handler answers each class with its status', () => {
  async function answer(err: Error) {
    const logged: unknown[] = [];
    const logger = { error: (o: unknown) => logged.push(o), warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => logger } as never;
    const app = Fastify();
    const reply = createErrorReply({ logger, bodyLimit: 100 });
    app.setErrorHandler((e, req, r) => reply(e as Error, req, r));
    app.get('/x', async () => {
      throw err;
    });
    const r = await app.inject({ method: 'GET', url: '/x' });
    await app.close();
    return { status: r.statusCode, body: r.json() as { detail: string; request_id?: string }, headers: r.headers, logged };
  }

  it.each(CASES.map((c) => [c[0].constructor.name, c[0], c[2]] as const))('%s -> %i with {detail}', async (_name, err, status) => {
    const r = await answer(err);
    expect(r.status).toBe(status);
    if (status < 500) {
      expect(r.body).toEqual({ detail: err.message });
      expect(r.logged).toHaveLength(0);
    } else {
      expect(r.body.detail).toBe(`${err.message} (request id ${r.body.request_id})`);
      expect(r.logged).toHaveLength(1);
    }
  });

  it('carries the headers of its condition (WWW-Authenticate, Retry-After)', async () => {
    expect((await answer(new UnauthorizedError())).headers['www-authenticate']).toBe('Bearer');
    expect((await answer(new RateLimitedError(60, 12))).headers['retry-after']).toBe('12');
  });

  it('a plain Error is a logged 500 that hides its message', async () => {
    const r = await answer(new Error('secret path /var/x'));
    expect(r.status).toBe(500);
    expect(r.body.detail).toMatch(/^internal server error \(request id \S+\)$/);
    expect(r.logged).toHaveLength(1);
  });

  it('every class is an ApiError except the three core ones', () => {
    const core = CASES.filter((c) => !(c[0] instanceof ApiError)).map((c) => c[0].constructor.name);
    expect(core.sort()).toEqual(['NotFoundError', 'StorageError', 'ValidationError']);
  });

  it("core's ConflictError has the status and code of the API's conflict (409)", async () => {
    const e = new ConflictError('the event feed has a subscriber already');
    expect({ status: e.status, code: e.code }).toEqual({ status: CONDITIONS.concurrent_update.status, code: CONDITIONS.concurrent_update.code });
    expect((await answer(e)).status).toBe(409);
  });
});
