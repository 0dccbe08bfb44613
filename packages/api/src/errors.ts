/**
 * One error class per condition the API answers a client with. The HTTP status, the error code
 * and whether the same request can succeed later (retryable) of every condition are decided here,
 * in one table (CONDITIONS); the classes take them from it and the error handler
 * (http-errors.ts) answers with `status` and `{detail: message}`. Bad input (400) and a missing
 * resource (404) are @dub/core's ValidationError and NotFoundError, a failing disk (503) its
 * StorageError: their rows below hold the values core gives them (errors.test.ts checks both).
 *
 * A decision never reads a message: code that must tell a conflict from bad input tests the class
 * (`instanceof ConcurrentUpdateError`) or `retryable`.
 */
import { DubError, NotFoundError, StorageError, ValidationError, type ErrorCode } from '@dub/core';

export interface Condition {
  status: number;
  code: ErrorCode;
  /** The same request can succeed later, unchanged (after a wait, or after re-reading). */
  retryable: boolean;
}

export const CONDITIONS = {
  /** Bad input: the detail names the field (core's ValidationError). */
  validation: { status: 400, code: 'validation_error', retryable: false },
  /** The action is not allowed in the resource's current status (generate when not ReadyToEdit). */
  invalid_state: { status: 400, code: 'invalid_state', retryable: false },
  /** What is asked for does not exist yet (no script, no transcript): it will once processing has run. */
  not_ready: { status: 400, code: 'not_ready', retryable: true },
  unauthorized: { status: 401, code: 'unauthorized', retryable: false },
  /** A signed link (studio, download, media) whose signature does not match. */
  link_invalid: { status: 403, code: 'forbidden', retryable: false },
  /** A signed link past its expiry. */
  link_expired: { status: 403, code: 'forbidden', retryable: false },
  /** A studio link asked for what only the API key may do. */
  link_not_allowed: { status: 403, code: 'forbidden', retryable: false },
  /** The organization's video-generation balance cannot cover the request (contract rule 3, generate). */
  insufficient_balance: { status: 403, code: 'insufficient_balance', retryable: false },
  /** An upload past the account's media size limit (DUB_MAX_MEDIA_BYTES). */
  media_size_limit: { status: 403, code: 'video_size_limit_reached', retryable: false },
  /** No such resource, or one of another organization (core's NotFoundError). */
  not_found: { status: 404, code: 'not_found', retryable: false },
  /** A worker event's asset or version is not in the database yet: the event is delivered again. */
  not_visible: { status: 404, code: 'not_found', retryable: true },
  /** The row changed between this request's read and its write: read again and retry. */
  concurrent_update: { status: 409, code: 'conflict', retryable: true },
  /** A signed download of a generation that revise removed. */
  gone: { status: 410, code: 'gone', retryable: false },
  /** If-Match does not name the current version of the script. */
  precondition_failed: { status: 412, code: 'precondition_failed', retryable: false },
  payload_too_large: { status: 413, code: 'payload_too_large', retryable: false },
  /** A path parameter longer than any id. */
  uri_too_long: { status: 414, code: 'validation_error', retryable: false },
  rate_limited: { status: 429, code: 'rate_limited', retryable: true },
  internal: { status: 500, code: 'internal_error', retryable: true },
  /** This installation cannot do it (line synthesis needs a filesystem blob store). */
  not_supported: { status: 501, code: 'engine_unavailable', retryable: false },
  /** The data disk failed (core's StorageError). */
  storage_unavailable: { status: 503, code: 'storage_unavailable', retryable: true },
  /** A part of the installation is missing (the studio page is not built): an operator must act. */
  unavailable: { status: 503, code: 'engine_unavailable', retryable: false },
  /** The API is stopping; another instance, or this one restarted, can answer. */
  shutting_down: { status: 503, code: 'engine_unavailable', retryable: true },
} as const satisfies Record<string, Condition>;

export type ConditionName = keyof typeof CONDITIONS;

/** Base of the API's own conditions: status, code and retryability come from CONDITIONS. */
export abstract class ApiError extends DubError {
  readonly condition: ConditionName;
  /** Response headers the answer carries (WWW-Authenticate, Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  protected constructor(condition: ConditionName, message: string, opts: { cause?: unknown; details?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    const c: Condition = CONDITIONS[condition];
    super(c.code, message, { status: c.status, retryable: c.retryable, ...(opts.cause !== undefined ? { cause: opts.cause } : {}), ...(opts.details ? { details: opts.details } : {}) });
    this.condition = condition;
    this.headers = opts.headers ?? {};
  }
}

/** 400: the action is not allowed in the current status (the detail names it). */
export class InvalidStateError extends ApiError {
  constructor(message: string, field = 'status') {
    super('invalid_state', message, { details: { field } });
    this.name = 'InvalidStateError';
  }
}

/** 400: not there yet (no script before preparation); asking again later succeeds. */
export class NotReadyError extends ApiError {
  constructor(message: string, field = 'status') {
    super('not_ready', message, { details: { field } });
    this.name = 'NotReadyError';
  }
}

/** 401 with `WWW-Authenticate: Bearer`. */
export class UnauthorizedError extends ApiError {
  constructor(message = 'missing or invalid API key (Authorization: Bearer <API_KEY>)') {
    super('unauthorized', message, { headers: { 'www-authenticate': 'Bearer' } });
    this.name = 'UnauthorizedError';
  }
}

/** What a signed link opens, as its refusals name it. */
export type LinkKind = 'studio link' | 'download link' | 'link';

/** 403: the signature of a signed link does not match (tampered, or another link's). */
export class LinkInvalidError extends ApiError {
  constructor(kind: LinkKind) {
    super('link_invalid', `the ${kind} signature is invalid`);
    this.name = 'LinkInvalidError';
  }
}

/** 403: a signed link past its expiry. */
export class LinkExpiredError extends ApiError {
  constructor(kind: LinkKind) {
    super('link_expired', `the ${kind} has expired`);
    this.name = 'LinkExpiredError';
  }
}

/** 403: a studio link used for what only the API key may do. */
export class LinkNotAllowedError extends ApiError {
  constructor(message: string) {
    super('link_not_allowed', message);
    this.name = 'LinkNotAllowedError';
  }
}

/** 403: the balance cannot cover it; the message starts with the contract's `insufficient_balance:`. */
export class InsufficientBalanceError extends ApiError {
  constructor(message: string) {
    super('insufficient_balance', message.startsWith('insufficient_balance:') ? message : `insufficient_balance: ${message}`);
    this.name = 'InsufficientBalanceError';
  }
}

/** 403: an upload past the account's media size limit (`video_size_limit_reached: ...`). */
export class MediaSizeLimitError extends ApiError {
  constructor(limitBytes: number) {
    super('media_size_limit', `video_size_limit_reached: the video exceeds the account's limit of ${limitBytes} bytes`, { details: { limit_bytes: limitBytes } });
    this.name = 'MediaSizeLimitError';
  }
}

/** 404 for a worker event whose asset or version is not visible (yet); retried (event-retry.ts). */
export class NotVisibleError extends ApiError {
  constructor(message: string) {
    super('not_visible', message);
    this.name = 'NotVisibleError';
  }
}

/** 409: the row changed between this request's read and its write. Retryable. */
export class ConcurrentUpdateError extends ApiError {
  constructor(what: string) {
    super('concurrent_update', `${what} changed concurrently; read it again and retry`);
    this.name = 'ConcurrentUpdateError';
  }
}

/** 410: the resource existed and was removed for good (a revised generation's download). */
export class GoneError extends ApiError {
  constructor(message: string) {
    super('gone', message);
    this.name = 'GoneError';
  }
}

/** 412: If-Match names another revision than the current one. */
export class PreconditionFailedError extends ApiError {
  constructor(message: string) {
    super('precondition_failed', message);
    this.name = 'PreconditionFailedError';
  }
}

/** 413: a body or part larger than its limit. */
export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super('payload_too_large', message);
    this.name = 'PayloadTooLargeError';
  }
}

/** 414: a path parameter longer than any id. */
export class UriTooLongError extends ApiError {
  constructor(message: string) {
    super('uri_too_long', message);
    this.name = 'UriTooLongError';
  }
}

/** 429 with `Retry-After` (seconds). */
export class RateLimitedError extends ApiError {
  constructor(limitPerMin: number, retryAfterS: number) {
    super('rate_limited', `rate limit of ${limitPerMin} requests per minute exceeded; retry in ${retryAfterS} s`, { headers: { 'retry-after': String(retryAfterS) } });
    this.name = 'RateLimitedError';
  }
}

/** 503: a part of the installation is missing; the detail says what to do. */
export class UnavailableError extends ApiError {
  constructor(message: string, cause?: unknown) {
    super('unavailable', message, { cause });
    this.name = 'UnavailableError';
  }
}

/** 501: this installation cannot do it; the detail says what it would need. */
export class NotSupportedError extends ApiError {
  constructor(message: string) {
    super('not_supported', message);
    this.name = 'NotSupportedError';
  }
}

/** 503: the API is shutting down. Retryable. */
export class ShuttingDownError extends ApiError {
  constructor(message = 'the API is shutting down') {
    super('shutting_down', message);
    this.name = 'ShuttingDownError';
  }
}

/** Core's classes for the conditions they cover, so that callers import every condition from here. */
export { NotFoundError, StorageError, ValidationError };

/** The condition of core's classes, for the table check and for callers that report by condition. */
export function conditionOf(e: DubError): ConditionName | undefined {
  if (e instanceof ApiError) return e.condition;
  if (e instanceof ValidationError) return 'validation';
  if (e instanceof NotFoundError) return 'not_found';
  if (e instanceof StorageError) return 'storage_unavailable';
  return undefined;
}
