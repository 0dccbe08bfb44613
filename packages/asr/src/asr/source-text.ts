/**
 * The source transcript given as text (the asset's `source_srt`). SRT is read by @dub/srt's
 * tolerant reader (readSrt: what ffmpeg reads, the same cues; a file it refuses fails here with
 * its line, problem and fix) and its cue times are kept. Other textual formats the contract accepts:
 * - WebVTT (with its WEBVTT header): cues are read leniently; markup (<i>, <v Name>, {\an8}) is
 *   stripped (SRT cues too).
 * - Anything else is plain text: each non-empty line is one segment, and the lines are laid
 *   end to end over the detected speech (by character share), so no word lands in a pause.
 * Words inside a cue are timed by spreading the cue over its words by character share.
 */
import { checkSrt, looksLikeWebVtt, readSrt } from '@dub/srt';
import type { SpeechRegion } from '../vad/types.js';
import { joinWords, round3, splitWords, spreadWords } from './text-words.js';
import type { AsrSegment } from './types.js';

export type SourceTextFormat = 'srt' | 'vtt' | 'plain';

interface Cue {
  start: number;
  end: number;
  text: string;
}

export function stripMarkup(text: string): string {
  return text
    .replace(/<[^>]*>/g, '')
    .replace(/\{\\[^}]*\}/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
}

// Hours of at most 9 digits: with `\d+` the expression backtracked quadratically on a long run of
// digits (40,000 digits took 8.8 s); bounded, each position is tried a bounded number of ways.
const CUE_TIME = /((?:\d{1,9}:)?\d{1,2}:\d{2}[.,]\d{1,3})[ \t]*-->[ \t]*((?:\d{1,9}:)?\d{1,2}:\d{2}[.,]\d{1,3})/;

function seconds(ts: string): number {
  const [hms, frac = '0'] = ts.replace(',', '.').split('.');
  const parts = hms!.split(':').map(Number);
  while (parts.length < 3) parts.unshift(0);
  return parts[0]! * 3600 + parts[1]! * 60 + parts[2]! + Number(`0.${frac}`);
}

/** Lenient cue reader for WebVTT and near-SRT text: a timing line, then text lines until a blank line. */
export function parseCuesLenient(text: string): Cue[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const cues: Cue[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = CUE_TIME.exec(lines[i]!);
    if (!m) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== '' && !CUE_TIME.test(lines[j]!); j++) body.push(lines[j]!);
    i = j - 1;
    const t = stripMarkup(body.join(' '));
    const start = seconds(m[1]!);
    const end = seconds(m[2]!);
    if (t && end >= start) cues.push({ start, end, text: t });
  }
  return cues;
}

/**
 * WebVTT by its header; SRT when readSrt reads cues; plain text when it finds no timing line.
 * Throws readSrt's SrtParseError for text with timing lines that it refuses.
 */
export function detectSourceTextFormat(text: string): SourceTextFormat {
  if (looksLikeWebVtt(text)) return 'vtt';
  const c = checkSrt(text);
  if (c.ok) return 'srt';
  if (c.error.details?.reason !== 'no_cues') throw c.error;
  // No timing line readSrt can see (a time-shaped line with an arrow it refuses): plain text.
  return 'plain';
}

function cueSegment(c: Cue, locale: string): AsrSegment | undefined {
  const words = splitWords(c.text, locale);
  if (!words.length) return undefined;
  return { start: round3(c.start), end: round3(c.end), text: c.text, words: spreadWords(words, c.start, c.end) };
}

/** Lay `lines` end to end over the speech regions (or [0, duration] when there are none). */
export function spreadPlainText(lines: readonly string[], locale: string, regions: readonly SpeechRegion[], duration: number): AsrSegment[] {
  const spans = regions.length ? regions.map((r) => [r.start, r.end] as const) : duration > 0 ? [[0, duration] as const] : [];
  const total = spans.reduce((s, [a, b]) => s + (b - a), 0);
  // Position p in [0, total] of concatenated speech -> absolute time.
  const at = (p: number, endSide: boolean): number => {
    let acc = 0;
    for (const [a, b] of spans) {
      const len = b - a;
      if (p < acc + len || (endSide && p <= acc + len + 1e-9)) return a + Math.max(0, p - acc);
      acc += len;
    }
    return spans.length ? spans[spans.length - 1]![1] : 0;
  };
  const perLine = lines.map((l) => splitWords(stripMarkup(l), locale)).filter((w) => w.length);
  const chars = perLine.reduce((s, ws) => s + ws.reduce((t, w) => t + [...w].length, 0), 0);
  const segments: AsrSegment[] = [];
  let p = 0;
  for (const ws of perLine) {
    const words = ws.map((w) => {
      const d = (total * [...w].length) / chars;
      const word = { text: w, start: round3(at(p, false)), end: round3(at(p + d, true)), confidence: 1 };
      p += d;
      return word;
    });
    segments.push({ start: words[0]!.start, end: words[words.length - 1]!.end, text: joinWords(words, locale), words });
  }
  return segments;
}

export interface SourceTranscript {
  format: SourceTextFormat;
  segments: AsrSegment[];
}

/** Segments of a source transcript given as text. `regions` and `duration` place plain text. */
export function parseSourceTranscript(text: string, locale: string, regions: readonly SpeechRegion[], duration: number): SourceTranscript {
  const format = detectSourceTextFormat(text);
  if (format === 'plain') {
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
    return { format, segments: spreadPlainText(lines, locale, regions, duration) };
  }
  const cues: Cue[] = format === 'srt' ? readSrt(text).cues.map((c) => ({ start: c.start, end: c.end, text: stripMarkup(c.text) })) : parseCuesLenient(text);
  const segments = cues
    .sort((a, b) => a.start - b.start)
    .map((c) => cueSegment(c, locale))
    .filter((s): s is AsrSegment => !!s);
  return { format, segments };
}

/** Whether this text needs speech regions to be placed (plain text). */
export function sourceTextNeedsSpeech(text: string): boolean {
  return detectSourceTextFormat(text) === 'plain';
}
