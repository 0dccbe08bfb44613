/**
 * How a failed job becomes its failure event, and errors as plain data (they cross the
 * worker-thread boundary). The decision reads `code` and `retryable`, never the message.
 */
import { ASSET_ERROR_CODES, DubError, VERSION_ERROR_CODES, toDubError, type AssetErrorCode, type EmittedEvent, type ErrorCode, type Job, type VersionErrorCode } from '@dub/core';

/** A thrown error as data. */
export interface JobError {
  code: string;
  message: string;
  retryable: boolean;
  name: string;
  details?: Record<string, unknown>;
}

export function toJobError(e: unknown): JobError {
  const d = toDubError(e);
  return { code: d.code, message: d.message, retryable: d.retryable, name: d.name, ...(d.details ? { details: d.details } : {}) };
}

/** A JobError back into a DubError (same code and retryable). */
export function fromJobError(e: JobError): DubError {
  const d = new DubError(e.code as ErrorCode, e.message, { retryable: e.retryable, ...(e.details ? { details: e.details } : {}) });
  d.name = e.name;
  return d;
}

const ASSET_CODES = new Set<string>(ASSET_ERROR_CODES);
const VERSION_CODES = new Set<string>(VERSION_ERROR_CODES);

export function assetErrorCode(code: string): AssetErrorCode {
  return ASSET_CODES.has(code) ? (code as AssetErrorCode) : 'processing_failed';
}

export function versionErrorCode(code: string): VersionErrorCode {
  return VERSION_CODES.has(code) ? (code as VersionErrorCode) : 'general_error';
}

/**
 * The failure event of a job: prepare-asset -> asset_failed (the asset error code, else
 * processing_failed); prepare-version -> version_failed and generate-version ->
 * version_generate_failed (the version error code, else general_error).
 */
export function failureEvent(job: Job, err: JobError): EmittedEvent {
  const detail = err.message || err.code;
  switch (job.type) {
    case 'prepare-asset':
      return { type: 'asset_failed', error: { error_code: assetErrorCode(err.code), detail } };
    case 'prepare-version':
      return { type: 'version_failed', version_id: job.version.version_id, error: { error_code: versionErrorCode(err.code), detail } };
    case 'generate-version':
      return { type: 'version_generate_failed', version_id: job.version_id, generation: job.generation, error: { error_code: versionErrorCode(err.code), detail } };
  }
}
