/**
 * Speech regions from per-frame probabilities: hysteresis (speech starts at `threshold`, ends
 * below `negThreshold`), a silence must last `minSilence` to end a region, regions shorter than
 * `minSpeech` are dropped, each region is padded by `padding` and overlapping ones merged.
 */
import type { SpeechRegion } from './types.js';

export interface RegionOptions {
  threshold: number;
  negThreshold: number;
  /** Seconds. */
  minSpeech: number;
  minSilence: number;
  padding: number;
}

export function speechRegions(probs: Float32Array, frameSeconds: number, duration: number, o: RegionOptions): SpeechRegion[] {
  const minSilenceFrames = Math.max(1, Math.round(o.minSilence / frameSeconds));
  const raw: Array<[number, number]> = [];
  let start = -1;
  let silenceFrom = -1;
  for (let i = 0; i < probs.length; i++) {
    const p = probs[i]!;
    if (start < 0) {
      if (p >= o.threshold) {
        start = i;
        silenceFrom = -1;
      }
      continue;
    }
    if (p >= o.threshold) silenceFrom = -1;
    else if (p < o.negThreshold) {
      if (silenceFrom < 0) silenceFrom = i;
      if (i + 1 - silenceFrom >= minSilenceFrames) {
        raw.push([start, silenceFrom]);
        start = -1;
        silenceFrom = -1;
      }
    }
  }
  if (start >= 0) raw.push([start, silenceFrom >= 0 ? silenceFrom : probs.length]);

  const out: SpeechRegion[] = [];
  for (const [a, b] of raw) {
    if ((b - a) * frameSeconds < o.minSpeech) continue;
    let sum = 0;
    for (let i = a; i < b; i++) sum += probs[i]!;
    const region = {
      start: Math.max(0, a * frameSeconds - o.padding),
      end: Math.min(duration, b * frameSeconds + o.padding),
      probability: sum / (b - a),
    };
    const prev = out[out.length - 1];
    if (prev && region.start <= prev.end) {
      const la = prev.end - prev.start;
      const lb = region.end - region.start;
      prev.probability = (prev.probability * la + region.probability * lb) / (la + lb);
      prev.end = Math.max(prev.end, region.end);
    } else out.push(region);
  }
  for (const r of out) {
    r.start = round3(r.start);
    r.end = round3(r.end);
  }
  return out;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Seconds of speech in `regions`. */
export function speechSeconds(regions: readonly { start: number; end: number }[]): number {
  return regions.reduce((s, r) => s + (r.end - r.start), 0);
}
