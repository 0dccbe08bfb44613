/**
 * What a reviewer checks on each line as they type: its length in characters and its reading
 * speed against the chosen SRT profile, and the writing direction of a locale. The page cannot
 * import @dub/srt or @dub/core at run time (no bundler: the browser loads these modules as they
 * are), so the few constants it needs are copied here; unit tests check them against the
 * packages they come from (SRT_PROFILE_LIMITS, the locale table's `rtl`).
 */
import type { SrtProfileName } from '@dub/core';

export interface ReadingLimits {
  /** Most characters per second (the block's characters over its duration). */
  maxCharsPerSecond: number;
  /** Most characters in one subtitle block; a longer line becomes several blocks. */
  maxBlockChars: number;
  maxLineChars: number;
}

/** The four profiles' reading limits (@dub/srt SRT_PROFILE_LIMITS). */
export const READING_LIMITS: Readonly<Record<SrtProfileName, ReadingLimits>> = Object.freeze({
  regular: { maxCharsPerSecond: 21, maxBlockChars: 70, maxLineChars: 42 },
  mobile: { maxCharsPerSecond: 17, maxBlockChars: 45, maxLineChars: 22 },
  global_regular: { maxCharsPerSecond: 21, maxBlockChars: 70, maxLineChars: 42 },
  global_mobile: { maxCharsPerSecond: 17, maxBlockChars: 45, maxLineChars: 22 },
});

const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Characters as the SRT profiles count them: grapheme clusters, spaces included, ends trimmed, runs of white space as one. */
export function countChars(text: string): number {
  const t = text.trim().replace(/\s+/g, ' ');
  if (/^[\u0000-\u02ff]*$/.test(t)) return t.length;
  let n = 0;
  for (const _ of GRAPHEMES.segment(t)) n++;
  return n;
}

export interface ReadingStats {
  chars: number;
  /** Characters per second over the segment's duration (Infinity for an empty span with text). */
  cps: number;
  limit: number;
  /** Reading speed above the profile's limit. */
  tooFast: boolean;
  /** Subtitle blocks this line needs at the profile's block size (at least 1 when there is text). */
  blocks: number;
}

export function readingStats(text: string, start: number, end: number, profile: SrtProfileName): ReadingStats {
  const lim = READING_LIMITS[profile];
  const chars = countChars(text);
  const dur = end - start;
  const cps = chars === 0 ? 0 : dur > 0 ? chars / dur : Infinity;
  return { chars, cps, limit: lim.maxCharsPerSecond, tooFast: cps > lim.maxCharsPerSecond + 1e-9, blocks: chars === 0 ? 0 : Math.ceil(chars / lim.maxBlockChars) };
}

/** Languages written right to left among the locales (the locale table's `rtl`), by language subtag. */
const RTL_LANGUAGES = new Set(['ar', 'he', 'ur', 'fa', 'ps', 'sd', 'yi', 'dv', 'ckb', 'ug']);

export function isRtlLocale(locale: string): boolean {
  return RTL_LANGUAGES.has(locale.split('-')[0]!.toLowerCase());
}

/** `dir` attribute value for text in `locale`. */
export function dirOf(locale: string): 'rtl' | 'ltr' {
  return isRtlLocale(locale) ? 'rtl' : 'ltr';
}
