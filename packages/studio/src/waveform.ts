/**
 * The source audio's waveform as the API serves it (GET /v1/versions/{id}/waveform: peak and RMS
 * level bytes per 20 ms window, base64) and what the timeline does with it: the level of each
 * drawn column, and the pauses that dragged segment edges snap to.
 */

import type { WaveformBody } from '@dub/core';

/** The API's body, declared once in @dub/core (core/src/waveform.ts). */
export type { WaveformBody };

export interface WaveformData {
  /** Windows per second. */
  rate: number;
  duration: number;
  floorDb: number;
  /** Level bytes per window: dBFS = floorDb * (1 - byte / 255). */
  peak: Uint8Array;
  rms: Uint8Array;
}

function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function decodeWaveform(body: WaveformBody): WaveformData {
  if (body.encoding !== 'u8-db') throw new Error(`unknown waveform encoding ${String(body.encoding)}`);
  const peak = fromBase64(body.peak);
  const rms = fromBase64(body.rms);
  if (peak.length !== body.count || rms.length !== body.count) throw new Error(`the waveform holds ${peak.length}/${rms.length} windows, not ${body.count}`);
  return { rate: body.rate, duration: body.duration, floorDb: body.floor_db, peak, rms };
}

/** dBFS of a level byte. */
export function levelDb(w: Pick<WaveformData, 'floorDb'>, level: number): number {
  return w.floorDb * (1 - level / 255);
}

/** Linear amplitude (0..1) of each level byte, as a lookup table. */
export function amplitudeTable(w: Pick<WaveformData, 'floorDb'>): Float32Array {
  const t = new Float32Array(256);
  for (let b = 1; b < 256; b++) t[b] = 10 ** (levelDb(w, b) / 20);
  return t;
}

/**
 * The highest peak byte of the windows under each of `columns` columns covering [t0, t1)
 * (a column narrower than a window repeats that window's value). Linear in columns + windows.
 */
export function columnPeaks(w: WaveformData, t0: number, t1: number, columns: number): Uint8Array {
  const out = new Uint8Array(Math.max(0, columns));
  if (columns <= 0 || !(t1 > t0)) return out;
  const per = (t1 - t0) / columns;
  const n = w.peak.length;
  for (let c = 0; c < columns; c++) {
    const a = Math.floor((t0 + c * per) * w.rate);
    const b = Math.max(a + 1, Math.floor((t0 + (c + 1) * per) * w.rate));
    let m = 0;
    for (let i = Math.max(0, a); i < Math.min(n, b); i++) if (w.peak[i]! > m) m = w.peak[i]!;
    out[c] = m;
  }
  return out;
}

export interface Span {
  start: number;
  end: number;
}

export interface SilenceOptions {
  /** Shortest pause in seconds (default 0.12). */
  minSeconds?: number;
}

/**
 * The pauses of the recording: runs of windows whose RMS is below a threshold placed halfway (in
 * dB) between the recording's floor (its 10th percentile RMS) and its speech level (90th
 * percentile), so it follows each recording's own levels rather than a fixed dBFS; a recording
 * whose floor and speech level are less than 6 dB apart has no pauses to find. Runs shorter than
 * `minSeconds` are not pauses.
 */
export function findSilences(w: WaveformData, opts: SilenceOptions = {}): Span[] {
  const n = w.rms.length;
  if (n === 0) return [];
  const hist = new Uint32Array(256);
  for (let i = 0; i < n; i++) hist[w.rms[i]!]!++;
  const pct = (p: number) => {
    const target = p * n;
    let acc = 0;
    for (let b = 0; b < 256; b++) {
      acc += hist[b]!;
      if (acc >= target) return b;
    }
    return 255;
  };
  const floor = levelDb(w, pct(0.1));
  const speech = levelDb(w, pct(0.9));
  if (speech - floor < 6) return [];
  const threshold = (floor + speech) / 2;
  const minWindows = Math.max(1, Math.round((opts.minSeconds ?? 0.12) * w.rate));
  const out: Span[] = [];
  let runStart = -1;
  for (let i = 0; i <= n; i++) {
    const quiet = i < n && levelDb(w, w.rms[i]!) < threshold;
    if (quiet && runStart < 0) runStart = i;
    else if (!quiet && runStart >= 0) {
      if (i - runStart >= minWindows) out.push({ start: runStart / w.rate, end: Math.min(w.duration, i / w.rate) });
      runStart = -1;
    }
  }
  return out;
}

/**
 * Where a dragged edge snaps: a segment's start snaps to where a pause ends (speech begins), its
 * end to where a pause begins (speech stops), when one lies within `radius` seconds of `t`;
 * otherwise undefined. Binary search: O(log pauses).
 */
export function snapEdge(t: number, edge: 'start' | 'end', silences: readonly Span[], radius: number): number | undefined {
  if (!silences.length || !(radius > 0)) return undefined;
  const key = (s: Span) => (edge === 'start' ? s.end : s.start);
  // first pause whose boundary is >= t - radius
  let lo = 0;
  let hi = silences.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(silences[mid]!) < t - radius) lo = mid + 1;
    else hi = mid;
  }
  let best: number | undefined;
  for (let i = lo; i < silences.length; i++) {
    const b = key(silences[i]!);
    if (b > t + radius) break;
    if (best === undefined || Math.abs(b - t) < Math.abs(best - t)) best = b;
  }
  return best;
}

/** The nearest pause boundary of the edge's kind before (dir -1) or after (dir 1) `t`, for keyboard nudging. */
export function nextBoundary(t: number, edge: 'start' | 'end', silences: readonly Span[], dir: -1 | 1): number | undefined {
  const eps = 1e-4;
  let best: number | undefined;
  for (const s of silences) {
    const b = edge === 'start' ? s.end : s.start;
    if (dir > 0 ? b > t + eps && (best === undefined || b < best) : b < t - eps && (best === undefined || b > best)) best = b;
  }
  return best;
}
