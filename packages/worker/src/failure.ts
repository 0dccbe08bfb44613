/**
 * How a failed job becomes its failure event, and errors as plain data (they cross the
 * worker-thread boundary). The decision reads `code` and `retryable`, never the message.
 */
import { DubError, toDubError, type ErrorCode } from '@dub/core';

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

/** The failure mapping lives in @dub/core (the API uses it too). */
export { assetErrorCode, failureEvent, versionErrorCode } from '@dub/core';
