/**
 * The gain curve that lowers the original under the dubbed speech. Speech activity comes from
 * 10 ms frames of the (delayed) speech track above an absolute level; pauses shorter than
 * `holdSeconds` stay ducked; the gain starts falling `attackSeconds` before speech (the whole
 * timeline is known, so the duck can anticipate) and rises back over `releaseSeconds` after it.
 */
import type { AudioSource } from '@dub/media';

export const DUCK_FRAME_SECONDS = 0.01;

export interface DuckEnvelopeOptions {
  /** Reduction under speech, dB (positive). */
  duckDb: number;
  /** Speech frames louder than this (dBFS) count as active (default -50). */
  thresholdDb?: number;
  attackSeconds: number;
  releaseSeconds: number;
  /** Pauses shorter than this stay ducked (default 0.4 s). */
  holdSeconds?: number;
  /** Frames of delay applied to the speech before mixing. */
  delayFrames: number;
  /** Length of the envelope in output frames. */
  frames: number;
}

/** Per-10-ms-frame activity of a source (mean power over its channels). */
export async function speechActivity(source: AudioSource, thresholdDb: number): Promise<Uint8Array> {
  const hop = Math.max(1, Math.round(DUCK_FRAME_SECONDS * source.sampleRate));
  const n = Math.ceil(source.frames / hop);
  const active = new Uint8Array(n);
  const win = hop * 1024;
  const thr = Math.pow(10, thresholdDb / 10);
  for (let s = 0; s < source.frames; s += win) {
    const ch = await source.read(s, Math.min(win, source.frames - s));
    const len = ch[0]?.length ?? 0;
    for (let f = 0; f * hop < len; f++) {
      let e = 0;
      const end = Math.min(len, (f + 1) * hop);
      for (const c of ch) for (let i = f * hop; i < end; i++) e += c[i]! * c[i]!;
      if (e / ((end - f * hop) * ch.length) > thr) active[s / hop + f] = 1;
    }
  }
  return active;
}

/** Gain in dB per frame (0 = untouched, -duckDb = fully ducked) on the output timeline. */
export function duckGainsDb(activity: Uint8Array, sampleRate: number, o: DuckEnvelopeOptions): Float32Array {
  const hop = Math.max(1, Math.round(DUCK_FRAME_SECONDS * sampleRate));
  const n = Math.ceil(o.frames / hop);
  const shift = Math.round(o.delayFrames / hop);
  const target = new Uint8Array(n);
  for (let i = 0; i < activity.length; i++) if (activity[i] && i + shift < n && i + shift >= 0) target[i + shift] = 1;
  // close short pauses
  const hold = Math.round((o.holdSeconds ?? 0.4) / DUCK_FRAME_SECONDS);
  let last = -1;
  for (let i = 0; i < n; i++) {
    if (!target[i]) continue;
    if (last >= 0 && i - last > 1 && i - last <= hold) target.fill(1, last + 1, i);
    last = i;
  }
  const g = new Float32Array(n);
  for (let i = 0; i < n; i++) g[i] = target[i] ? -o.duckDb : 0;
  // release: rise by at most duckDb per releaseSeconds going forward
  const up = o.duckDb / Math.max(1, o.releaseSeconds / DUCK_FRAME_SECONDS);
  for (let i = 1; i < n; i++) g[i] = Math.min(g[i]!, g[i - 1]! + up);
  // attack: the fall starts attackSeconds early (going backward, rise by at most duckDb per attack)
  const down = o.duckDb / Math.max(1, o.attackSeconds / DUCK_FRAME_SECONDS);
  for (let i = n - 2; i >= 0; i--) g[i] = Math.min(g[i]!, g[i + 1]! + down);
  return g;
}

/** Linear gain for output frame `frame`, interpolated between frame centres. */
export function gainAt(gainsDb: Float32Array, hop: number, frame: number): number {
  const pos = frame / hop - 0.5;
  const i = Math.max(0, Math.min(gainsDb.length - 1, Math.floor(pos)));
  const j = Math.min(gainsDb.length - 1, i + 1);
  const t = Math.max(0, Math.min(1, pos - i));
  return Math.pow(10, (gainsDb[i]! * (1 - t) + gainsDb[j]! * t) / 20);
}
