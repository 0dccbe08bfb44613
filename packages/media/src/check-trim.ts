/**
 * Validation of the asset's start_time / end_time against the video duration.
 * Order of checks (documented in the README):
 *  1. a value that is not a finite number, or negative -> invalid_input;
 *  2. end_time <= start_time -> invalid_input (the contract's end_time rule);
 *  3. start_time >= duration or end_time > duration -> time_out_of_range.
 */
import { AssetError } from '@dub/core';

export interface TrimRange {
  /** Seconds from the beginning. */
  start: number;
  /** Seconds from the beginning (exclusive). */
  end: number;
}

/** Tolerance (seconds) for an end_time a hair past a container duration rounded by ffprobe. */
export const TRIM_TOLERANCE_SEC = 0.001;

/** Validate and resolve the trim window; missing values default to 0 and the duration. */
export function checkTrim(duration: number, startTime?: number | null, endTime?: number | null): TrimRange {
  for (const [field, v] of [['start_time', startTime], ['end_time', endTime]] as const) {
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new AssetError('invalid_input', `${field} must be a number`, { details: { field } });
    if (v < 0) throw new AssetError('invalid_input', `${field} must not be negative`, { details: { field } });
  }
  const start = startTime ?? 0;
  if (endTime !== undefined && endTime !== null && endTime <= start) {
    throw new AssetError('invalid_input', `end_time (${endTime}) must be greater than start_time (${start})`, { details: { field: 'end_time' } });
  }
  if (start >= duration) {
    throw new AssetError('time_out_of_range', `start_time (${start}) is outside the video duration (${duration})`, { details: { field: 'start_time', duration } });
  }
  if (endTime !== undefined && endTime !== null && endTime > duration + TRIM_TOLERANCE_SEC) {
    throw new AssetError('time_out_of_range', `end_time (${endTime}) is outside the video duration (${duration})`, { details: { field: 'end_time', duration } });
  }
  const end = endTime === undefined || endTime === null ? duration : Math.min(endTime, duration);
  return { start, end };
}
