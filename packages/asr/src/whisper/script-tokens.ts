/**
 * The text tokens of a Whisper vocabulary written in a script a locale is not written in, for
 * decoding speech whose language and script are known (back-transcription of the dubbed lines:
 * the text that was spoken is ours). Whisper's byte-level vocabulary can put any script in any
 * language's text; on a voice it hears badly, the greedy text of a Portuguese line once held
 * Hebrew letters. Suppressing those tokens keeps the decoder among readings in the right script.
 *
 * Allowed: the locale's own script (core's `script`: Jpan is Han, Hiragana and Katakana; Kore is
 * Hangul and Han), Latin (names, brands and glossary terms stay in Latin letters in every
 * language), and Unicode's Common and Inherited scripts (digits, punctuation, combining marks).
 * A token is suppressed when it holds a whole character of another script, or ends in a partial
 * UTF-8 sequence none of whose completions is an allowed character (e.g. the lead byte of the
 * Hebrew block). A token that starts inside a character (continuation bytes) is left alone: its
 * first byte cannot tell the script.
 */
import { getLocale, type Script } from '@dub/core';
import type { WhisperTokenizer } from './tokenizer.js';

const UNICODE_SCRIPTS: Record<Script, readonly string[]> = {
  Latn: ['Latin'],
  Arab: ['Arabic'],
  Cyrl: ['Cyrillic'],
  Hans: ['Han'],
  Hant: ['Han'],
  Grek: ['Greek'],
  Hebr: ['Hebrew'],
  Deva: ['Devanagari'],
  Jpan: ['Han', 'Hiragana', 'Katakana'],
  Kore: ['Hangul', 'Han'],
  Taml: ['Tamil'],
  Thai: ['Thai'],
};

/** The Unicode scripts text in `locale` may use (undefined: a locale the contract does not list). */
export function allowedScripts(locale: string): string[] | undefined {
  const info = getLocale(locale);
  if (!info) return undefined;
  return [...new Set(['Common', 'Inherited', 'Latin', ...UNICODE_SCRIPTS[info.script]])];
}

const cache = new WeakMap<WhisperTokenizer, Map<string, number[]>>();

/**
 * The ids of `tok`'s text tokens written in a script `locale` is not written in (sorted; empty
 * for a locale the contract does not list). Computed once per tokenizer and script set.
 */
export function otherScriptTokens(tok: WhisperTokenizer, locale: string): number[] {
  const scripts = allowedScripts(locale);
  if (!scripts) return [];
  const key = scripts.join(',');
  let byScripts = cache.get(tok);
  if (!byScripts) cache.set(tok, (byScripts = new Map()));
  const hit = byScripts.get(key);
  if (hit) return hit;
  const allowed = new RegExp(`^[${scripts.map((s) => `\\p{Script=${s}}`).join('')}]$`, 'u');
  const ok = (cp: number) => allowed.test(String.fromCodePoint(cp));
  const ids: number[] = [];
  for (let id = 0; id < tok.eot; id++) if (!bytesAllowed(tok.decodeBytes([id]), ok)) ids.push(id);
  byScripts.set(key, ids);
  return ids;
}

/** Sequence length of a UTF-8 lead byte (0: a continuation byte or not a lead). */
function sequenceLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/** Whether a token's bytes hold only allowed characters (see the file comment for partial sequences). */
export function bytesAllowed(bytes: Uint8Array, ok: (cp: number) => boolean): boolean {
  let i = 0;
  // continuation bytes of a character begun in an earlier token
  while (i < bytes.length && bytes[i]! >= 0x80 && bytes[i]! < 0xc0) i++;
  while (i < bytes.length) {
    const n = sequenceLength(bytes[i]!);
    if (n === 0) return true; // not UTF-8 at this point: no verdict
    if (i + n <= bytes.length) {
      let cp = n === 1 ? bytes[i]! : bytes[i]! & (0xff >> (n + 1));
      for (let k = 1; k < n; k++) {
        const c = bytes[i + k]!;
        if (c < 0x80 || c >= 0xc0) return true;
        cp = (cp << 6) | (c & 0x3f);
      }
      if (!ok(cp)) return false;
      i += n;
      continue;
    }
    // a partial sequence at the token's end: allowed when some completion is
    const have = bytes.length - i;
    let prefix = bytes[i]! & (0xff >> (n + 1));
    for (let k = 1; k < have; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c >= 0xc0) return true;
      prefix = (prefix << 6) | (c & 0x3f);
    }
    const free = 6 * (n - have);
    const lo = Math.max(prefix << free, n === 2 ? 0x80 : n === 3 ? 0x800 : 0x10000);
    const hi = Math.min(((prefix + 1) << free) - 1, 0x10ffff);
    for (let cp = lo; cp <= hi; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (ok(cp)) return true;
    }
    return false;
  }
  return true;
}
