/**
 * Decoded tokens -> timed segments: `<|t0|> text <|t1|>` pairs give segment times (relative to the
 * window, shifted by `offset`); text after the last timestamp ends at the window's end. Words are
 * timed by their tokens' cross-attention times where the decoding has them (`aligned`), else by
 * character share inside their segment, and each word's confidence is the mean probability of the
 * tokens that make it up.
 */
import { getLocale } from '@dub/core';
import { joinWords, round3, splitWords, spreadWords } from '../asr/text-words.js';
import type { AsrSegment } from '../asr/types.js';
import type { DecodedToken } from './decode.js';
import type { WhisperTokenizer } from './tokenizer.js';

function segmentFrom(tok: WhisperTokenizer, tokens: DecodedToken[], start: number, end: number, locale: string, offset: number): AsrSegment | undefined {
  const ids = tokens.map((t) => t.id);
  const text = tok.decode(ids).trim();
  const words = splitWords(text, locale);
  if (!words.length) return undefined;
  // Character span of each token in the decoded text (before trimming).
  const raw = tok.decode(ids);
  const lead = raw.length - raw.trimStart().length;
  const spans: Array<[number, number, number, number | undefined, number | undefined]> = [];
  let prevLen = 0;
  for (let i = 0; i < ids.length; i++) {
    const len = tok.decode(ids.slice(0, i + 1)).length;
    spans.push([prevLen - lead, len - lead, tokens[i]!.probability, tokens[i]!.start, tokens[i]!.end]);
    prevLen = len;
  }
  const aligned = tokens.every((t) => t.start !== undefined && t.end !== undefined);
  const timed = spreadWords(words, start, Math.max(end, start));
  let pos = 0;
  for (const w of timed) {
    const at = text.indexOf(w.text, pos);
    const a = at < 0 ? pos : at;
    const b = a + w.text.length;
    pos = b;
    const mine = spans.filter(([s, e]) => e > a && s < b);
    const probs = mine.map(([, , p]) => p);
    w.confidence = probs.length ? Math.round((probs.reduce((x, y) => x + y, 0) / probs.length) * 1000) / 1000 : 0;
    if (aligned && mine.length) {
      w.start = round3(offset + mine[0]![3]!);
      w.end = round3(offset + Math.max(mine[0]![3]!, mine[mine.length - 1]![4]!));
      w.aligned = true;
    }
  }
  return { start: round3(start), end: round3(Math.max(end, start)), text: joinWords(timed, locale), words: timed };
}

export function tokensToSegments(tok: WhisperTokenizer, tokens: readonly DecodedToken[], offset: number, windowSeconds: number, locale: string): AsrSegment[] {
  // The `<|t0|> text <|t1|>` groups, in window seconds.
  const groups: { tokens: DecodedToken[]; start: number; end: number }[] = [];
  let start: number | undefined;
  let text: DecodedToken[] = [];
  for (const t of tokens) {
    if (tok.isTimestamp(t.id)) {
      const s = tok.timestampSeconds(t.id);
      if (text.length && start !== undefined) {
        groups.push({ tokens: text, start, end: s });
        text = [];
        start = undefined;
      } else start = s;
    } else {
      start ??= groups.length ? groups[groups.length - 1]!.end : 0;
      text.push(t);
    }
  }
  if (text.length) groups.push({ tokens: text, start: start ?? 0, end: windowSeconds });
  if (getLocale(locale)?.spaceSeparated !== false) joinSplitWords(tok, groups);
  const out: AsrSegment[] = [];
  for (const g of groups) {
    if (!g.tokens.length) continue;
    const seg = segmentFrom(tok, g.tokens, offset + g.start, offset + g.end, locale, offset);
    if (seg) out.push(seg);
  }
  return out;
}

/**
 * Whisper may put a timestamp inside a word (" a" <|8.76|><|8.76|> "sterisk." for "asterisk"):
 * in a language written with spaces, a group whose text starts with no space, right after a
 * group ending in a letter, begins with the rest of that word. Those tokens (up to the first one
 * that starts with a space) move to the group before, which then ends where their share of the
 * group's characters ends; the line cut that follows never splits a word.
 */
function joinSplitWords(tok: WhisperTokenizer, groups: { tokens: DecodedToken[]; start: number; end: number }[]): void {
  for (let i = 1; i < groups.length; i++) {
    const prev = groups[i - 1]!;
    const g = groups[i]!;
    if (!prev.tokens.length || !g.tokens.length) continue;
    if (!/\p{L}$/u.test(tok.decode(prev.tokens.map((t) => t.id)))) continue;
    const first = tok.decode([g.tokens[0]!.id]);
    if (!/^[\p{L}\p{N}]/u.test(first)) continue;
    let n = 1;
    while (n < g.tokens.length && !/^\s/u.test(tok.decode([g.tokens[n]!.id]))) n++;
    const total = [...tok.decode(g.tokens.map((t) => t.id)).trim()].length || 1;
    const moved = [...tok.decode(g.tokens.slice(0, n).map((t) => t.id))].length;
    const at = n === g.tokens.length ? g.end : g.start + ((g.end - g.start) * moved) / total;
    prev.tokens.push(...g.tokens.slice(0, n));
    prev.end = Math.max(prev.end, at);
    g.tokens = g.tokens.slice(n);
    g.start = Math.max(g.start, at);
  }
}
