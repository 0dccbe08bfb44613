/**
 * Character counting for subtitle limits: a "character" is one extended grapheme cluster
 * (Intl.Segmenter, granularity 'grapheme'), spaces included. "é" written as e + U+0301, a
 * flag emoji or a Thai consonant with its vowel mark each count as one.
 */

// Stateless: segment() returns a fresh iterator on every call, so sharing it holds no state.
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** True when every code unit is below U+0300 (no combining marks, no surrogates, no CR). */
function isSimple(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x300 || c === 0x0d) return false;
  }
  return true;
}

/** Number of grapheme clusters in `text`. */
export function countGraphemes(text: string): number {
  if (isSimple(text)) return text.length;
  let n = 0;
  for (const _ of GRAPHEMES.segment(text)) n++;
  return n;
}

/** The grapheme clusters of `text`, in order. */
export function splitGraphemes(text: string): string[] {
  if (isSimple(text)) return Array.from(text);
  return Array.from(GRAPHEMES.segment(text), (s) => s.segment);
}
