/**
 * Words of a text and their timing when only a span is known: each word gets a share of the span
 * proportional to its characters. Space-separated languages split on whitespace; Chinese,
 * Japanese, Thai and Cantonese split with Intl.Segmenter, punctuation kept with the word before.
 */
import { getLocale, languageOf } from '@dub/core';
import type { AsrWord } from './types.js';

export function splitWords(text: string, locale: string): string[] {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (!clean) return [];
  const info = getLocale(locale);
  if (!info || info.spaceSeparated) return clean.split(' ');
  const seg = new Intl.Segmenter(languageOf(locale), { granularity: 'word' });
  const out: string[] = [];
  let pending = '';
  for (const s of seg.segment(clean)) {
    if (s.segment.trim() === '') continue;
    if (s.isWordLike) {
      if (pending && out.length === 0) {
        out.push(pending + s.segment);
        pending = '';
      } else {
        if (pending) out[out.length - 1] += pending;
        pending = '';
        out.push(s.segment);
      }
    } else if (out.length) out[out.length - 1] += s.segment;
    else pending += s.segment;
  }
  if (pending) out.push(pending);
  return out;
}

/** Time `words` across [start, end] by character share. */
export function spreadWords(words: readonly string[], start: number, end: number, confidence = 1): AsrWord[] {
  const total = words.reduce((s, w) => s + Math.max(1, [...w].length), 0);
  const out: AsrWord[] = [];
  let t = start;
  for (const w of words) {
    const d = ((end - start) * Math.max(1, [...w].length)) / total;
    out.push({ text: w, start: round3(t), end: round3(t + d), confidence });
    t += d;
  }
  if (out.length) out[out.length - 1]!.end = round3(end);
  return out;
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Join words into segment text (no spaces for languages written without them). */
export function joinWords(words: readonly { text: string }[], locale: string): string {
  const info = getLocale(locale);
  return words.map((w) => w.text).join(info && !info.spaceSeparated ? '' : ' ');
}
