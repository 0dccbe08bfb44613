/**
 * Articulation rate: syllables per second of speech, pauses excluded (the measure of speaking
 * pace that listeners hear, as opposed to a speaking rate that counts the pauses too).
 *
 * - Syllables: vowel nuclei of espeak-ng's IPA for the text (`espeak-ng -q --ipa --tie=^ -v
 *   <voice>`, which covers every contract language). A vowel symbol starts a nucleus unless it is
 *   tied to the vowel before it (espeak-ng ties the parts of a diphthong: "a^ɪ"); a consonant
 *   with the syllabic mark (n̩) is a nucleus; a lax ɪ or ʊ right before another vowel is a glide.
 *   So "día" (ðˈia) has two, "aires" (ˈa^ɪɾes) two, "buongiorno" (bʊond^ʒˈɔrno) three.
 * - Speech time: the spans of the words (ASR word times) or of the non-silent frames of audio,
 *   with every silence of PAUSE_SECONDS or more between them left out, and shorter gaps (stop
 *   closures, the joins between words) kept.
 *
 * PAUSE_SECONDS is the usual 250 ms of pause research (Goldman-Eisler); it is fixed, not fitted to
 * any recording.
 */
import { getLocale, ValidationError } from '@dub/core';
import { runProcess } from '@dub/media';
import { frameLevels } from './activity.js';
import { INVERSE_SPEED, type SpeedResponse } from '../speed-response.js';

/** Silences this long or longer are pauses: left out of the speech time. */
export const PAUSE_SECONDS = 0.25;

const VOWELS = new Set([...'aeiouyæøœɐɑɒɔəɘɚɛɜɝɞɤɨɪɯɵʉʊʌʏɶᵻɩɷ']);
/** Marks that follow a symbol without ending it (length, stress inside a word is a separate char). */
const JOINERS = new Set(['^', '\u0361', '\u035C', '\u200D']);
const SYLLABIC = new Set(['\u0329', '\u030D']);
const COMBINING = /\p{M}/u;

/** Syllables (vowel nuclei) in espeak-ng IPA output; language-switch flags like "(en)" are ignored. */
export function countIpaSyllables(ipa: string): number {
  const s = ipa.normalize('NFD').replace(/\([a-z-]+\)/gi, ' ');
  let count = 0;
  let prevVowel = false; // the last base symbol was a vowel
  let tied = false; // a tie follows the last base symbol
  const chars = [...s];
  for (const [i, ch] of chars.entries()) {
    if (JOINERS.has(ch)) {
      tied = true;
      continue;
    }
    if (SYLLABIC.has(ch)) {
      if (!prevVowel) count++;
      prevVowel = true;
      continue;
    }
    if (COMBINING.test(ch) || ch === 'ː' || ch === 'ˑ') continue;
    const vowel = VOWELS.has(ch.toLowerCase());
    // lax ɪ/ʊ right before another vowel is a glide (espeak-ng's Italian "buon": bʊˈɔn)
    const glide = (ch === 'ɪ' || ch === 'ʊ') && VOWELS.has(chars[i + 1] ?? '');
    if (vowel && !glide && !(prevVowel && tied)) count++;
    prevVowel = vowel;
    tied = false;
  }
  return count;
}

export interface SyllableOptions {
  espeakPath?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * IPA read so far, by espeak-ng binary, voice and text: a line's syllables are counted for its
 * pace and again when it is fitted, and each call is a process (a fork of a process holding the
 * models, ~0.2 s of the event loop's time on a loaded 2-core machine). The most recent 2000.
 */
const ipaRead = new Map<string, string>();

/** espeak-ng's IPA for `text` read with `locale`'s espeak-ng voice (one line per clause). */
export async function espeakIpaOf(text: string, locale: string, o: SyllableOptions = {}): Promise<string> {
  const voice = getLocale(locale)?.espeakVoice;
  if (!voice) throw new ValidationError(`no espeak-ng voice reads "${locale}"`, { field: 'locale' });
  if (text.trim() === '') return '';
  const input = text.replace(/\s+/g, ' ');
  const key = `${o.espeakPath ?? 'espeak-ng'}\u0000${voice}\u0000${input}`;
  const known = ipaRead.get(key);
  if (known !== undefined) return known;
  // --stdin drops the input's last character: end it with a newline.
  const res = await runProcess(o.espeakPath ?? 'espeak-ng', ['-q', '--ipa', '--tie=^', '-v', voice, '--stdin'], {
    input: Buffer.from(input + '\n', 'utf8'),
    timeoutMs: o.timeoutMs ?? 30_000,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const ipa = res.stdout.toString('utf8');
  ipaRead.set(key, ipa);
  if (ipaRead.size > 2000) ipaRead.delete(ipaRead.keys().next().value!);
  return ipa;
}

/** Syllables of `text` in `locale`, from espeak-ng's phonemes. */
export async function countSyllables(text: string, locale: string, o: SyllableOptions = {}): Promise<number> {
  return countIpaSyllables(await espeakIpaOf(text, locale, o));
}

/** Seconds covered by `spans` (merged) with every gap of `pause` or more between them left out. */
export function speechSecondsOfSpans(spans: readonly { start: number; end: number }[], pause = PAUSE_SECONDS): number {
  const sorted = spans.filter((w) => w.end > w.start).sort((a, b) => a.start - b.start);
  let total = 0;
  let curStart = NaN;
  let curEnd = NaN;
  for (const w of sorted) {
    if (Number.isNaN(curEnd)) {
      curStart = w.start;
      curEnd = w.end;
    } else if (w.start - curEnd < pause) {
      curEnd = Math.max(curEnd, w.end);
    } else {
      total += curEnd - curStart;
      curStart = w.start;
      curEnd = w.end;
    }
  }
  if (!Number.isNaN(curEnd)) total += curEnd - curStart;
  return total;
}

/**
 * Seconds of speech in mono audio: its non-silent frames (10 ms) from the first to the last, less
 * every silence of `pause` or more. Silent: under -55 dBFS, or 35 dB under the loudest frame, or
 * within 6 dB of the noise floor (the 10th-percentile frame) when that is higher, up to 20 dB
 * under the loudest (a recording's background between words is a pause too).
 */
export function speechSecondsOfAudio(samples: Float32Array, sampleRate: number, pause = PAUSE_SECONDS): number {
  const frameSeconds = 0.01;
  const levels = frameLevels(samples, sampleRate, frameSeconds);
  const sorted = Float32Array.from(levels).sort();
  const loudest = sorted[sorted.length - 1] ?? -Infinity;
  const floor = sorted[Math.floor(0.1 * (sorted.length - 1))] ?? -Infinity;
  const thr = Math.max(-55, loudest - 35, Math.min(loudest - 20, floor + 6));
  const active = levels.map((l) => (l > thr ? 1 : 0));
  const spans: { start: number; end: number }[] = [];
  for (let i = 0; i < active.length; i++) {
    if (!active[i]) continue;
    let j = i;
    while (j + 1 < active.length && active[j + 1]) j++;
    spans.push({ start: i * frameSeconds, end: (j + 1) * frameSeconds });
    i = j;
  }
  return Math.min(samples.length / sampleRate, speechSecondsOfSpans(spans, pause));
}

/** Syllables per second, or null when there is no speech time or no syllable. */
export function articulationRate(syllables: number, speechSeconds: number): number | null {
  return syllables > 0 && speechSeconds > 0 ? syllables / speechSeconds : null;
}

/**
 * The natural range of each engine's rate input (the multiplier of its default rate it still
 * speaks well at): Kokoro's `speed`, espeak-ng's `-s` (words per minute times the multiplier),
 * Piper's `length_scale` (divided by it). null, with the reason, for an engine that takes none.
 * Fixed from the engines' documented ranges and listening, not fitted to any recording.
 */
export const ENGINE_PACE_RANGE: Readonly<Record<string, { min: number; max: number } | { min: null; max: null; reason: string }>> = Object.freeze({
  kokoro: { min: 0.8, max: 1.3 },
  'espeak-ng': { min: 0.75, max: 1.5 },
  piper: { min: 0.8, max: 1.3 },
  chatterbox: { min: null, max: null, reason: 'Chatterbox takes no rate input (its speech tokens come at the model\'s own pace): lines are spoken at its pace and only time-stretched' },
});

/** The rate input's step. */
export const PACE_STEP = 0.05;

/**
 * The rate input that brings an engine speaking at `engineRate` (syllables per second at its
 * default rate) to a speaker's `speakerRate`, within the engine's natural range, in steps of
 * PACE_STEP; 1 when either
 * rate is unknown or the engine takes no rate input. The speech must last engineRate/speakerRate
 * times its length at the default rate; `response` turns that length ratio into the rate input
 * (the engine's measured response, e.g. Kokoro's; default 1/speed: the rate ratio itself).
 */
export function paceFor(engineId: string, speakerRate: number | null, engineRate: number | null, response: SpeedResponse = INVERSE_SPEED): { pace: number; clamped: boolean; reason?: string } {
  const range = ENGINE_PACE_RANGE[engineId];
  if (!range || range.min === null) return { pace: 1, clamped: false, reason: range && 'reason' in range ? range.reason : `${engineId}: no known rate input` };
  if (!(speakerRate !== null && speakerRate > 0 && engineRate !== null && engineRate > 0)) return { pace: 1, clamped: false, reason: 'no articulation rate measured for the speaker or the voice' };
  const wanted = response.speedFor(engineRate / speakerRate);
  const pace = Math.min(range.max, Math.max(range.min, wanted));
  // in steps of PACE_STEP: an edited line seldom moves the pace (and so the synthesis) of its speaker's other lines
  return { pace: Math.round(Math.round(pace / PACE_STEP) * PACE_STEP * 1000) / 1000, clamped: pace !== wanted };
}
