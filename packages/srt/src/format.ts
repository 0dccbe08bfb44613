/**
 * Subtitle formatting for the four profiles.
 *
 * Character counting: a character is one grapheme cluster (Intl.Segmenter, granularity
 * 'grapheme'), spaces included; the line break between the two lines of a block is not counted.
 * Characters per second = the block's characters (both lines) / its duration.
 *
 * Guarantees, for every profile: every block has one or two lines within the line limit and at
 * most the block limit of characters; no word is lost, duplicated or reordered (a word longer
 * than a line is cut into line-sized pieces, without hyphen); blocks are in time order, never
 * overlap and are at least `minGap` apart. Best effort, reported in `violations` when the input's
 * timing makes it impossible: the reading speed (blocks extend into the following, then the
 * preceding silence, and the segmentation prefers splits that meet it) and the minimum duration.
 *
 * regular/mobile lay out each input segment on its own (a block never spans two segments);
 * global_regular/global_mobile lay out one word stream across sentences and segments, breaking at
 * sentence ends, speaker changes and pauses, then clause punctuation, then before conjunctions and
 * articles, and always at a silence of `maxPause` or more.
 */
import { ValidationError } from '@dub/core';
import { breakWordsFor } from './break-words.js';
import { segmentBlocks } from './blocks.js';
import { computeBreaks } from './breaks.js';
import { layoutBlock } from './layout.js';
import { resolveFormatOptions, type FormatSubtitlesOptions } from './options.js';
import { SRT_PROFILE_LIMITS, type SrtProfileName } from './profiles.js';
import { timeBlocks } from './timing.js';
import { tokenize } from './tokens.js';
import type { SrtCue, SubtitleSegment } from './types.js';

export type SrtViolationKind = 'reading_speed' | 'min_duration';

/** A limit the input's timing did not allow the formatter to meet for one cue. */
export interface SrtViolation {
  /** 1-based index of the cue. */
  cue: number;
  kind: SrtViolationKind;
  /** Characters per second (reading_speed) or seconds (min_duration) the cue got. */
  value: number;
  /** The limit it misses. */
  limit: number;
}

export interface FormatReport {
  cues: SrtCue[];
  violations: SrtViolation[];
}

/** Format segments into cues for a profile, with the list of limits the timing could not meet. */
export function formatSubtitlesWithReport(segments: readonly SubtitleSegment[], profile: SrtProfileName, opts: FormatSubtitlesOptions = {}): FormatReport {
  const limits = SRT_PROFILE_LIMITS[profile];
  if (limits === undefined) throw new ValidationError(`unknown SRT profile "${String(profile)}"`, { field: 'srt_profile' });
  const o = resolveFormatOptions(opts);
  const tokens = tokenize(segments, { spaceSeparated: o.spaceSeparated, locale: o.locale, maxLineChars: limits.maxLineChars });
  if (tokens.length === 0) return { cues: [], violations: [] };
  const breaks = computeBreaks(tokens, { crossSegment: limits.crossSegment, maxPauseMs: o.maxPauseMs, breakWords: breakWordsFor(o.language) });
  const lim = {
    maxBlockChars: limits.maxBlockChars,
    maxLineChars: limits.maxLineChars,
    maxCharsPerSecond: limits.maxCharsPerSecond,
    minGapMs: o.minGapMs,
    minDurationMs: o.minDurationMs,
    mediaEndMs: o.mediaEndMs,
  };
  const ends = segmentBlocks(tokens, breaks, lim);
  let from = 0;
  const layouts = ends.map((to) => {
    const l = layoutBlock(tokens, from, to, breaks, limits.maxLineChars, limits.maxBlockChars);
    from = to;
    return l;
  });
  const times = timeBlocks(tokens, ends, layouts.map((l) => l.chars), lim);
  const cues: SrtCue[] = [];
  const violations: SrtViolation[] = [];
  layouts.forEach((l, b) => {
    const { start, end } = times[b]!;
    const cue = b + 1;
    const dur = end - start;
    if (l.chars * 1000 > limits.maxCharsPerSecond * dur) {
      violations.push({ cue, kind: 'reading_speed', value: (l.chars * 1000) / dur, limit: limits.maxCharsPerSecond });
    }
    if (dur < o.minDurationMs) violations.push({ cue, kind: 'min_duration', value: dur / 1000, limit: o.minDurationMs / 1000 });
    cues.push({ index: cue, start: start / 1000, end: end / 1000, text: l.lines.join('\n') });
  });
  return { cues, violations };
}

/** Format segments into cues for a profile (see formatSubtitlesWithReport for the diagnostics). */
export function formatSubtitles(segments: readonly SubtitleSegment[], profile: SrtProfileName, opts: FormatSubtitlesOptions = {}): SrtCue[] {
  return formatSubtitlesWithReport(segments, profile, opts).cues;
}
