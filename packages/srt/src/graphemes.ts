/**
 * Character counting for subtitle limits: a "character" is one extended grapheme cluster
 * (Intl.Segmenter, granularity 'grapheme'), spaces included. "é" written as e + U+0301, a
 * flag emoji or a Thai consonant with its vowel mark each count as one.
 *
 * Fast path: a string with none of the code points that can join a cluster (marks, joiners,
 * variation selectors, Hangul jamo, regional indicators, emoji modifiers, tags, prepend and
 * spacing-mark letters, CR/LF) has one cluster per code point; anything else goes through
 * Intl.Segmenter. A property test checks both ways agree.
 */

// Stateless: segment() returns a fresh iterator on every call, so sharing it holds no state.
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

const JOINING =
  /[\p{M}\r\n\u200C\u200D\uFE00-\uFE0F\u0E33\u0EB3\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF\uFF9E\uFF9F\u0600-\u0605\u06DD\u070F\u0890\u0891\u08E2\u0D4E\u{110BD}\u{110CD}\u{111C2}\u{111C3}\u{1193F}\u{11941}\u{11A3A}\u{11A84}-\u{11A89}\u{11D46}\u{11F02}\u{113D1}\u{1F1E6}-\u{1F1FF}\u{1F3FB}-\u{1F3FF}\u{E0000}-\u{E0FFF}]/u;

/** True when every code unit is below U+0300 (no combining marks, no surrogates) and not CR. */
function isLatin(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x300 || c === 0x0d) return false;
  }
  return true;
}

function countCodePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}

/** Number of grapheme clusters in `text`. */
export function countGraphemes(text: string): number {
  if (isLatin(text)) return text.length;
  if (!JOINING.test(text)) return countCodePoints(text);
  let n = 0;
  for (const _ of GRAPHEMES.segment(text)) n++;
  return n;
}

/** Number of grapheme clusters, always through Intl.Segmenter (the reference for the fast path). */
export function countGraphemesSlow(text: string): number {
  let n = 0;
  for (const _ of GRAPHEMES.segment(text)) n++;
  return n;
}

/** The grapheme clusters of `text`, in order. */
export function splitGraphemes(text: string): string[] {
  if (isLatin(text)) return Array.from(text);
  if (!JOINING.test(text)) return Array.from(text);
  return Array.from(GRAPHEMES.segment(text), (s) => s.segment);
}
