/**
 * Decoded tokens -> timed segments: `<|t0|> text <|t1|>` pairs give segment times (relative to the
 * window, shifted by `offset`); text after the last timestamp ends at the window's end. Words are
 * timed by character share inside their segment, and each word's confidence is the mean
 * probability of the tokens that make it up.
 */
import { joinWords, round3, splitWords, spreadWords } from '../asr/text-words.js';
import type { AsrSegment } from '../asr/types.js';
import type { DecodedToken } from './decode.js';
import type { WhisperTokenizer } from './tokenizer.js';

function segmentFrom(tok: WhisperTokenizer, tokens: DecodedToken[], start: number, end: number, locale: string): AsrSegment | undefined {
  const ids = tokens.map((t) => t.id);
  const text = tok.decode(ids).trim();
  const words = splitWords(text, locale);
  if (!words.length) return undefined;
  // Character span of each token in the decoded text (before trimming).
  const raw = tok.decode(ids);
  const lead = raw.length - raw.trimStart().length;
  const spans: Array<[number, number, number]> = [];
  let prevLen = 0;
  for (let i = 0; i < ids.length; i++) {
    const len = tok.decode(ids.slice(0, i + 1)).length;
    spans.push([prevLen - lead, len - lead, tokens[i]!.probability]);
    prevLen = len;
  }
  const timed = spreadWords(words, start, Math.max(end, start));
  let pos = 0;
  for (const w of timed) {
    const at = text.indexOf(w.text, pos);
    const a = at < 0 ? pos : at;
    const b = a + w.text.length;
    pos = b;
    const probs = spans.filter(([s, e]) => e > a && s < b).map(([, , p]) => p);
    w.confidence = probs.length ? Math.round((probs.reduce((x, y) => x + y, 0) / probs.length) * 1000) / 1000 : 0;
  }
  return { start: round3(start), end: round3(Math.max(end, start)), text: joinWords(timed, locale), words: timed };
}

export function tokensToSegments(tok: WhisperTokenizer, tokens: readonly DecodedToken[], offset: number, windowSeconds: number, locale: string): AsrSegment[] {
  const out: AsrSegment[] = [];
  let start: number | undefined;
  let text: DecodedToken[] = [];
  for (const t of tokens) {
    if (tok.isTimestamp(t.id)) {
      const s = tok.timestampSeconds(t.id);
      if (text.length && start !== undefined) {
        const seg = segmentFrom(tok, text, offset + start, offset + s, locale);
        if (seg) out.push(seg);
        text = [];
        start = undefined;
      } else start = s;
    } else {
      start ??= out.length ? out[out.length - 1]!.end - offset : 0;
      text.push(t);
    }
  }
  if (text.length) {
    const seg = segmentFrom(tok, text, offset + (start ?? 0), offset + windowSeconds, locale);
    if (seg) out.push(seg);
  }
  return out;
}
