/**
 * How a failed job becomes its failure event: the worker emits it when a handler fails for good,
 * and the API when the queue refuses a job for good (e.g. a job too large for the bus). The
 * decision reads the error's `code`, never its message.
 */
import { ASSET_ERROR_CODES, VERSION_ERROR_CODES, type AssetErrorCode, type VersionErrorCode } from './errors.js';
import type { Job } from './jobs.js';
import type { EmittedEvent } from './queue.js';

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
export function failureEvent(job: Job, err: { code: string; message: string }): EmittedEvent {
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
