/**
 * Options of formatSubtitles: public partial options resolved once into complete internal ones.
 */
import { getLocale, ValidationError } from '@dub/core';

export interface FormatSubtitlesOptions {
  /**
   * Locale code of the text (contract spelling, e.g. "ja-JP"). Decides whether words are separated
   * by spaces; without it each segment's script is detected (CJK and Thai are not space-separated).
   */
  locale?: string;
  /** Smallest silence between two blocks, seconds (default 0.08). */
  minGap?: number;
  /** Smallest block duration where the time around it allows, seconds (default 0.7). */
  minDuration?: number;
  /**
   * Cross-segment profiles only: a silence at least this long always ends a block, seconds
   * (default 1.5).
   */
  maxPause?: number;
  /** End of the media, seconds: the last block never extends past it (default: unbounded). */
  mediaDuration?: number;
}

export interface ResolvedFormatOptions {
  locale: string | undefined;
  /** From the locale table; undefined: detect per segment from the script. */
  spaceSeparated: boolean | undefined;
  /** ISO 639-1 (or 639-3) language of the locale, for the break-word tables. */
  language: string | undefined;
  minGapMs: number;
  minDurationMs: number;
  maxPauseMs: number;
  mediaEndMs: number;
}

export const DEFAULT_MIN_GAP = 0.08;
export const DEFAULT_MIN_DURATION = 0.7;
export const DEFAULT_MAX_PAUSE = 1.5;

function seconds(name: string, v: number | undefined, dflt: number): number {
  const x = v ?? dflt;
  if (!(x >= 0) || !Number.isFinite(x)) throw new ValidationError(`${name} must be a finite number of seconds >= 0`, { field: name });
  return x;
}

export function resolveFormatOptions(opts: FormatSubtitlesOptions = {}): ResolvedFormatOptions {
  const info = opts.locale === undefined ? undefined : getLocale(opts.locale);
  const language = info ? info.iso639_1 || info.iso639_3 : opts.locale?.split(/[-_]/)[0]?.toLowerCase();
  const media = opts.mediaDuration;
  if (media !== undefined && !(media >= 0 && Number.isFinite(media))) {
    throw new ValidationError('mediaDuration must be a finite number of seconds >= 0', { field: 'mediaDuration' });
  }
  return {
    locale: opts.locale,
    spaceSeparated: info?.spaceSeparated,
    language: language || undefined,
    minGapMs: Math.round(seconds('minGap', opts.minGap, DEFAULT_MIN_GAP) * 1000),
    minDurationMs: Math.round(seconds('minDuration', opts.minDuration, DEFAULT_MIN_DURATION) * 1000),
    maxPauseMs: Math.round(seconds('maxPause', opts.maxPause, DEFAULT_MAX_PAUSE) * 1000),
    mediaEndMs: media === undefined ? Number.POSITIVE_INFINITY : Math.round(media * 1000),
  };
}
