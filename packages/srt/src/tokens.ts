/**
 * The word stream the formatter lays out: segments become timed tokens (integer milliseconds).
 *
 * - Segments are taken in start-time order (stable sort).
 * - A segment's `words`, where given, are its tokens (whitespace inside a word collapses to one
 *   space; empty words are dropped). Otherwise its `text` is tokenized: on whitespace for
 *   space-separated languages, with Intl.Segmenter (granularity 'word') for languages written
 *   without spaces (CJK, Thai), punctuation staying attached to its word. Estimated timings share
 *   the segment's duration by each token's character count.
 * - A token longer than the profile's line limit is split into pieces of at most that many
 *   graphemes (no hyphen is added), so it can still be shown; the pieces share its time.
 */
import { ValidationError } from '@dub/core';
import { countGraphemes, splitGraphemes } from './graphemes.js';
import { toMs } from './timestamp.js';
import type { SubtitleSegment } from './types.js';

export interface Token {
  text: string;
  /** Grapheme count of `text`. */
  len: number;
  start: number;
  end: number;
  /** 1 when a space joins this token to the previous one on the same line, else 0. */
  glue: 0 | 1;
  /** Index of the segment (in start order) the token comes from. */
  seg: number;
  speaker: string | undefined;
  /** The segment's language separates words with spaces. */
  spaced: boolean;
  /** This token continues the previous token (a piece of a word longer than a line). */
  midWord: boolean;
}

/** Scripts written without spaces between words. */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;
const SPACED_WORD = /[\p{L}\p{N}\p{M}]+/gu;
const UNSPACED_START = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{P}\p{S}]/u;
const UNSPACED_END = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{P}\p{S}]$/u;
/** Punctuation that closes or trails (attaches to the word before it). */
const TRAILING_PUNCT = /^[\p{Pe}\p{Pf}\p{Po}]+$/u;
/** Punctuation that opens (attaches to the word after it). */
const OPENING_PUNCT = /^[\p{Ps}\p{Pi}]+$/u;
const WS = /\s+/u;

/**
 * Whether text separates its words with spaces, from its script: false when it has at least as
 * many Han, kana, Thai, Lao, Khmer or Myanmar characters as words in other scripts (so
 * "我用 iPhone 拍照" is unspaced, an English sentence quoting one Chinese word is not).
 */
export function detectSpaceSeparated(text: string): boolean {
  const unspaced = text.match(UNSPACED_SCRIPT)?.length ?? 0;
  if (unspaced === 0) return true;
  return unspaced < (text.replace(UNSPACED_SCRIPT, ' ').match(SPACED_WORD)?.length ?? 0);
}

/** Glue between two tokens of an unspaced language given as separate words: a space only between
 * two tokens that both touch letters/digits of a spaced script ("iPhone 15"). */
function unspacedGlue(prev: string, next: string): 0 | 1 {
  return UNSPACED_END.test(prev) || UNSPACED_START.test(next) ? 0 : 1;
}

interface RawToken {
  text: string;
  glue: 0 | 1;
  start?: number;
  end?: number;
}

function fromWords(seg: SubtitleSegment, spaced: boolean): RawToken[] {
  const out: RawToken[] = [];
  for (const w of seg.words!) {
    const parts = w.text.split(WS).filter((p) => p !== '');
    if (parts.length === 0) continue;
    // A "word" holding spaces is several words: they share its time by character count.
    const total = parts.reduce((a, p) => a + p.length, 0);
    let acc = 0;
    parts.forEach((text, k) => {
      const prev = out.length > 0 ? out[out.length - 1]!.text : undefined;
      let glue: 0 | 1 = 1;
      if (k > 0) glue = 1;
      else if (TRAILING_PUNCT.test(text)) glue = 0;
      else if (!spaced) glue = /^\s/u.test(w.text) || (prev !== undefined && unspacedGlue(prev, text) === 1) ? 1 : 0;
      const start = w.start + ((w.end - w.start) * acc) / total;
      acc += text.length;
      const end = parts.length === 1 ? w.end : w.start + ((w.end - w.start) * acc) / total;
      out.push({ text, glue, start, end });
    });
  }
  return out;
}

function fromSpacedText(text: string): RawToken[] {
  return text.split(WS).filter((t) => t !== '').map((t) => ({ text: t, glue: 1 as const }));
}

function fromUnspacedText(text: string, segmenter: Intl.Segmenter): RawToken[] {
  const out: RawToken[] = [];
  let space = false;
  let prefix = '';
  let prefixGlue: 0 | 1 = 0;
  const word = (s: string, glue: 0 | 1): void => {
    if (prefix !== '') out.push({ text: prefix + s, glue: prefixGlue });
    else out.push({ text: s, glue });
    prefix = '';
  };
  for (const part of segmenter.segment(text)) {
    const s = part.segment;
    if (s.trim() === '') {
      space = out.length > 0 || prefix !== '';
      continue;
    }
    if (part.isWordLike) word(s, space ? 1 : 0);
    else if (OPENING_PUNCT.test(s)) {
      if (prefix === '') prefixGlue = space ? 1 : 0;
      prefix += s;
    } else if (out.length > 0 && prefix === '' && (!space || TRAILING_PUNCT.test(s))) {
      out[out.length - 1]!.text += s;
    } else word(s, space ? 1 : 0);
    space = false;
  }
  if (prefix !== '') {
    if (out.length > 0) out[out.length - 1]!.text += prefix;
    else out.push({ text: prefix, glue: 0 });
  }
  return out;
}

/** A word segmenter for the locale; a tag Intl does not accept falls back to the default locale. */
function wordSegmenter(locale: string | undefined): Intl.Segmenter {
  try {
    return new Intl.Segmenter(locale, { granularity: 'word' });
  } catch {
    return new Intl.Segmenter(undefined, { granularity: 'word' });
  }
}

export interface TokenizeConfig {
  spaceSeparated: boolean | undefined;
  locale: string | undefined;
  maxLineChars: number;
}

function checkTime(name: string, v: number): void {
  if (!Number.isFinite(v)) throw new ValidationError(`subtitle segment ${name} must be a finite number`, { field: 'segments' });
}

/** Turn segments into the formatter's token stream. */
export function tokenize(segments: readonly SubtitleSegment[], cfg: TokenizeConfig): Token[] {
  const ordered = segments.map((s, i) => ({ s, i })).sort((a, b) => a.s.start - b.s.start || a.i - b.i).map((x) => x.s);
  let segmenter: Intl.Segmenter | undefined;
  const tokens: Token[] = [];
  ordered.forEach((seg, segIndex) => {
    checkTime('start', seg.start);
    checkTime('end', seg.end);
    const hasWords = seg.words !== undefined && seg.words.some((w) => w.text.trim() !== '');
    const sample = hasWords ? seg.words!.map((w) => w.text).join('') : seg.text;
    const spaced = cfg.spaceSeparated ?? detectSpaceSeparated(sample);
    let raw: RawToken[];
    if (hasWords) raw = fromWords(seg, spaced);
    else if (spaced) raw = fromSpacedText(seg.text);
    else raw = fromUnspacedText(seg.text, (segmenter ??= wordSegmenter(cfg.locale)));
    if (raw.length === 0) return;
    const lens = raw.map((t) => countGraphemes(t.text));
    const segStart = Math.max(0, toMs(seg.start));
    const segEnd = Math.max(segStart, toMs(seg.end));
    const total = lens.reduce((a, b) => a + b, 0);
    let acc = 0;
    raw.forEach((t, k) => {
      let start: number;
      let end: number;
      if (t.start !== undefined && t.end !== undefined) {
        checkTime('word start', t.start);
        checkTime('word end', t.end);
        start = Math.max(0, toMs(t.start));
        end = Math.max(start, toMs(t.end));
      } else {
        start = segStart + Math.round(((segEnd - segStart) * acc) / total);
        end = segStart + Math.round(((segEnd - segStart) * (acc + lens[k]!)) / total);
      }
      acc += lens[k]!;
      let glue = t.glue;
      if (k === 0 && tokens.length > 0) {
        const prev = tokens[tokens.length - 1]!;
        glue = spaced && prev.spaced ? 1 : unspacedGlue(prev.text, t.text);
      }
      pushToken(tokens, { text: t.text, len: lens[k]!, start, end, glue, seg: segIndex, speaker: seg.speaker, spaced, midWord: false }, cfg.maxLineChars);
    });
  });
  return tokens;
}

/** Append a token, splitting it into line-sized pieces when it is longer than a line. */
function pushToken(tokens: Token[], tok: Token, maxLineChars: number): void {
  if (tok.len <= maxLineChars) {
    tokens.push(tok);
    return;
  }
  const g = splitGraphemes(tok.text);
  const dur = tok.end - tok.start;
  for (let at = 0; at < g.length; at += maxLineChars) {
    const piece = g.slice(at, at + maxLineChars);
    const stop = Math.min(g.length, at + maxLineChars);
    tokens.push({
      ...tok,
      text: piece.join(''),
      len: piece.length,
      start: tok.start + Math.round((dur * at) / g.length),
      end: tok.start + Math.round((dur * stop) / g.length),
      glue: at === 0 ? tok.glue : 0,
      midWord: at > 0,
    });
  }
}
