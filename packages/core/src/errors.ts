/**
 * One base class for every error the project raises. Decisions (HTTP status, retry or fail,
 * the seed's error code) read `code`, `retryable` and `status`; never the message.
 */

/** Asset error codes of the interface contract, plus the project's own documented codes. */
export const ASSET_ERROR_CODES = [
  'invalid_input',
  'unsupported_media',
  'empty_transcript',
  'missing_audio_track',
  'video_duration_limit_reached',
  'video_size_limit_reached',
  'time_out_of_range',
  'voice_over_library_required',
  'voice_over_with_lips_not_allowed',
  // Project codes (documented in the README): no ASR engine for the source language and no source_srt.
  'unsupported_source_language',
  // media_url/background_url/speech_url could not be fetched.
  'media_fetch_failed',
  // Any other processing failure of the asset (the detail says what).
  'processing_failed',
] as const;
export type AssetErrorCode = (typeof ASSET_ERROR_CODES)[number];

/** Version error codes of the interface contract, plus the project's own documented codes. */
export const VERSION_ERROR_CODES = [
  'general_error',
  'insufficient_balance',
  // Project code: no translation engine configured for the locale pair.
  'unsupported_language_pair',
] as const;
export type VersionErrorCode = (typeof VERSION_ERROR_CODES)[number];

export type ErrorCode =
  | AssetErrorCode
  | VersionErrorCode
  | 'validation_error'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  // API conditions (packages/api/src/errors.ts): an action the current status does not allow, a
  // resource not produced yet, a removed generation, an If-Match that does not match.
  | 'invalid_state'
  | 'not_ready'
  | 'gone'
  | 'precondition_failed'
  | 'rate_limited'
  | 'payload_too_large'
  | 'model_missing'
  | 'model_error'
  | 'engine_unavailable'
  | 'process_failed'
  | 'timeout'
  | 'aborted'
  | 'upstream_error'
  | 'storage_unavailable'
  | 'internal_error';

export interface DubErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** HTTP status the API answers with when this error reaches it. */
  status?: number;
  /** Extra structured data (field name, line number, ...). */
  details?: Record<string, unknown>;
}

export class DubError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, opts: DubErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DubError';
    this.code = code;
    this.retryable = opts.retryable ?? false;
    this.status = opts.status ?? 500;
    this.details = opts.details;
  }

  toJSON(): { code: ErrorCode; message: string; retryable: boolean; details?: Record<string, unknown> } {
    return { code: this.code, message: this.message, retryable: this.retryable, ...(this.details ? { details: this.details } : {}) };
  }
}

/** Bad input from a caller: HTTP 400. `field` names what was wrong. */
export class ValidationError extends DubError {
  constructor(message: string, opts: DubErrorOptions & { field?: string } = {}) {
    super('validation_error', message, { ...opts, status: 400, retryable: false, details: { ...opts.details, ...(opts.field ? { field: opts.field } : {}) } });
    this.name = 'ValidationError';
  }
  get field(): string | undefined {
    return this.details?.field as string | undefined;
  }
}

/** A malformed SRT document; `line` is 1-based. */
export class SrtParseError extends ValidationError {
  readonly line: number;
  constructor(message: string, line: number, opts: DubErrorOptions & { field?: string } = {}) {
    super(`line ${line}: ${message}`, { ...opts, details: { ...opts.details, line } });
    this.name = 'SrtParseError';
    this.line = line;
  }
}

/** A failure that belongs to an asset and moves it to Failed with one of the seed's codes. */
export class AssetError extends DubError {
  constructor(code: AssetErrorCode, message: string, opts: DubErrorOptions = {}) {
    super(code, message, { status: 400, ...opts, retryable: opts.retryable ?? false });
    this.name = 'AssetError';
  }
}

/** A failure that belongs to a version and moves it to Failed with a version error code. */
export class VersionError extends DubError {
  constructor(code: VersionErrorCode, message: string, opts: DubErrorOptions = {}) {
    super(code, message, { status: 400, ...opts, retryable: opts.retryable ?? false });
    this.name = 'VersionError';
  }
}

export class NotFoundError extends DubError {
  constructor(message: string, opts: DubErrorOptions = {}) {
    super('not_found', message, { ...opts, status: 404 });
    this.name = 'NotFoundError';
  }
}

/**
 * 409: the thing is held or changed by someone else (an event feed that has a subscriber
 * already). The same code and status as the API's ConcurrentUpdateError (api/src/errors.ts).
 */
export class ConflictError extends DubError {
  constructor(message: string, opts: DubErrorOptions = {}) {
    super('conflict', message, { ...opts, status: 409 });
    this.name = 'ConflictError';
  }
}

export class ModelMissingError extends DubError {
  readonly modelId: string;
  constructor(modelId: string, message: string, opts: DubErrorOptions = {}) {
    super('model_missing', message, { ...opts, retryable: false, details: { ...opts.details, model: modelId } });
    this.name = 'ModelMissingError';
    this.modelId = modelId;
  }
}

export class ModelError extends DubError {
  constructor(message: string, opts: DubErrorOptions = {}) {
    super('model_error', message, opts);
    this.name = 'ModelError';
  }
}

export class EngineUnavailableError extends DubError {
  constructor(message: string, opts: DubErrorOptions = {}) {
    super('engine_unavailable', message, { ...opts, retryable: false });
    this.name = 'EngineUnavailableError';
  }
}

/** A child process (ffmpeg, espeak-ng, ...) exited non-zero. */
export class ProcessError extends DubError {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stderrTail: string;
  constructor(message: string, opts: DubErrorOptions & { exitCode: number | null; signal?: string | null; stderrTail: string }) {
    super('process_failed', message, { ...opts, details: { ...opts.details, exitCode: opts.exitCode, signal: opts.signal ?? null } });
    this.name = 'ProcessError';
    this.exitCode = opts.exitCode;
    this.signal = opts.signal ?? null;
    this.stderrTail = opts.stderrTail;
  }
}

/** A remote service (translation API, media URL, callback receiver) failed. 408/429/5xx retry. */
export class UpstreamError extends DubError {
  readonly upstreamStatus: number | undefined;
  constructor(message: string, opts: DubErrorOptions & { upstreamStatus?: number } = {}) {
    const s = opts.upstreamStatus;
    const retryable = opts.retryable ?? (s === undefined || s === 408 || s === 429 || s >= 500);
    super('upstream_error', message, { ...opts, retryable, status: 502 });
    this.name = 'UpstreamError';
    this.upstreamStatus = s;
  }
}

export class TimeoutError extends DubError {
  constructor(message: string, opts: DubErrorOptions = {}) {
    super('timeout', message, { retryable: true, ...opts });
    this.name = 'TimeoutError';
  }
}

export class AbortedError extends DubError {
  constructor(message = 'operation aborted', opts: DubErrorOptions = {}) {
    super('aborted', message, { ...opts, retryable: true });
    this.name = 'AbortedError';
  }
}

const DISK_FAULTS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EIO: 'an input/output error of the disk',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EBUSY: 'the resource is busy',
};

/**
 * The disk under a store or queue failed (full, read-only, I/O error, permission): HTTP 503,
 * retryable. The message names the operation and the errno, never a server path.
 */
export class StorageError extends DubError {
  readonly errno: string;
  constructor(message: string, errno: string, opts: DubErrorOptions = {}) {
    super('storage_unavailable', message, { ...opts, retryable: true, status: 503, details: { ...opts.details, errno } });
    this.name = 'StorageError';
    this.errno = errno;
  }
}

/** The errno code of a Node.js system error (ENOENT, ENOSPC, ...), else undefined. */
export function errnoOf(e: unknown): string | undefined {
  const c = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof c === 'string' && /^E[A-Z]+$/.test(c) ? c : undefined;
}

/** True for the errors of a failing disk (see StorageError), not for a missing file. */
export function isDiskFault(e: unknown): boolean {
  const c = errnoOf(e);
  return c !== undefined && c in DISK_FAULTS;
}

/** A disk fault as a StorageError saying `what` failed; any other error unchanged. */
export function asStorageError(e: unknown, what: string): unknown {
  if (e instanceof DubError || !isDiskFault(e)) return e;
  const code = errnoOf(e)!;
  return new StorageError(`storage unavailable: ${what} failed: ${DISK_FAULTS[code]} (${code}); retry later`, code, { cause: e });
}

export function isDubError(e: unknown): e is DubError {
  return e instanceof DubError;
}

/** Wrap any thrown value into a DubError, keeping it as the cause. Unknown errors are retryable. */
export function toDubError(e: unknown): DubError {
  if (e instanceof DubError) return e;
  if (e instanceof Error && e.name === 'AbortError') return new AbortedError(e.message, { cause: e });
  const msg = e instanceof Error ? e.message : String(e);
  return new DubError('internal_error', msg, { cause: e, retryable: true });
}

/** Throw AbortedError when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError(typeof signal.reason === 'string' ? signal.reason : 'operation aborted', { cause: signal.reason });
}
