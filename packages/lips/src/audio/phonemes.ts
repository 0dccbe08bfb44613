/**
 * Viseme shaping from the dubbed text: espeak-ng turns each word into IPA phonemes (one call for
 * all words, one word per clause), the phonemes share the word's time evenly, and each phoneme
 * gets an openness weight (open vowels 1, bilabials p b m 0, ...). The result is a weight per
 * video frame, NaN where no word is spoken.
 */
import { getLocale, resolveContext, type PartialContext } from '@dub/core';
import { runProcess } from '@dub/media';
import type { TimedWord } from '../types.js';

const WEIGHTS: [RegExp, number][] = [
  [/[aɑæɐä]/u, 1],
  [/[oɔɒ]/u, 0.8],
  [/[eɛəɜɚʌœø]/u, 0.75],
  [/[iɪyʏɨ]/u, 0.5],
  [/[uʊɯ]/u, 0.45],
  [/[pbm]/u, 0],
  [/[fvɱ]/u, 0.15],
  [/[wʍ]/u, 0.3],
];
const IGNORED = /[ˈˌːˑ\u0361\u035c.\-_'’|]/gu;

/** Openness weight of one IPA phoneme symbol. */
export function phonemeOpenness(symbol: string): number {
  for (const [re, w] of WEIGHTS) if (re.test(symbol)) return w;
  return 0.35;
}

/** IPA symbols of a word as espeak-ng writes them, stress and length marks removed. */
export function splitIpa(ipa: string): string[] {
  return [...ipa.replace(IGNORED, '').replace(/\s+/g, '')].filter((c) => !/\p{M}/u.test(c));
}

export interface PhonemeOptions {
  espeakPath?: string;
  timeoutMs?: number;
}

/** IPA per word (one espeak-ng run); words espeak-ng cannot read get no phonemes. */
export async function phonemizeWords(words: readonly string[], locale: string, opts: PhonemeOptions = {}, context: PartialContext = {}): Promise<string[][]> {
  const ctx = resolveContext(context);
  const voice = getLocale(locale)?.espeakVoice;
  if (!voice || words.length === 0) return words.map(() => []);
  const clean = words.map((w) => w.replace(/[.!?;:,\n\r]+/g, ' ').trim() || '-');
  const input = clean.map((w) => `${w}.`).join('\n') + '\n';
  const r = await runProcess(opts.espeakPath ?? 'espeak-ng', ['-q', '--ipa', '-v', voice, '--stdin'], {
    input,
    timeoutMs: opts.timeoutMs ?? 60_000,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const lines = r.stdout.toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  // one clause per word; when espeak-ng merged or split clauses the count differs: give up on shaping
  if (lines.length !== words.length) return words.map(() => []);
  return lines.map(splitIpa);
}

/** Openness weight per video frame from timed words and their phonemes (NaN outside words). */
export function visemeWeights(words: readonly TimedWord[], phonemes: readonly string[][], fps: number, frameCount: number, times?: ArrayLike<number>): Float32Array {
  const out = new Float32Array(frameCount).fill(Number.NaN);
  // frame centres (variable frame rate: half a frame after each frame's own time)
  const centre = (i: number): number => (times && i < times.length ? times[i]! + 0.5 / fps : (i + 0.5) / fps);
  const firstAtOrAfter = (t: number): number => {
    let lo = 0;
    let hi = frameCount;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (centre(mid) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  words.forEach((w, k) => {
    const ph = phonemes[k] ?? [];
    if (!ph.length || !(w.end > w.start)) return;
    const first = times ? firstAtOrAfter(w.start) : Math.max(0, Math.ceil(w.start * fps - 0.5));
    const last = times ? firstAtOrAfter(w.end + 1e-9) - 1 : Math.min(frameCount - 1, Math.floor(w.end * fps - 0.5));
    for (let i = first; i <= last; i++) {
      const t = centre(i);
      const j = Math.min(ph.length - 1, Math.floor(((t - w.start) / (w.end - w.start)) * ph.length));
      out[i] = phonemeOpenness(ph[j]);
    }
  });
  return out;
}
