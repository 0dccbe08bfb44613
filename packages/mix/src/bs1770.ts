/**
 * ITU-R BS.1770-4 integrated loudness and sample peak, in JavaScript, streaming.
 *
 * K-weighting is the pre-filter (a high shelf, about +4 dB above 1.7 kHz) followed by the RLB
 * high-pass (about 38 Hz). Both are second-order sections derived for any sample rate from their
 * analog prototypes by the bilinear transform with the same centre frequencies, gain and Q as
 * libebur128 (at 48 kHz they give the coefficients printed in BS.1770). The mean square of the
 * K-weighted signal is taken over 400 ms blocks with 75 % overlap (a 100 ms hop), summed over
 * the channels (weight 1.0: mono and stereo), and gated: absolute gate -70 LUFS, then relative
 * gate 10 LU under the loudness of the blocks above the absolute gate.
 */
import type { WavReader } from '@dub/media';

/** BS.1770 absolute gate, LUFS. */
export const ABSOLUTE_GATE_LUFS = -70;
/** BS.1770 relative gate, LU under the absolute-gated loudness. */
export const RELATIVE_GATE_LU = -10;

/** Biquad coefficients, normalised (a0 = 1). */
export interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

/** The two K-weighting sections for `sampleRate`: [pre-filter high shelf, RLB high-pass]. */
export function kWeightingFilters(sampleRate: number): [Biquad, Biquad] {
  // Pre-filter: analog high shelf, f0 1681.97 Hz, +4.0 dB, Q 0.7072; shelf mid-gain exponent as in BS.1770's 48 kHz design.
  let f0 = 1681.974450955533;
  const gainDb = 3.999843853973347;
  let q = 0.7071752369554196;
  let k = Math.tan((Math.PI * f0) / sampleRate);
  const vh = Math.pow(10, gainDb / 20);
  const vb = Math.pow(vh, 0.4996667741545416);
  let a0 = 1 + k / q + k * k;
  const shelf: Biquad = {
    b0: (vh + (vb * k) / q + k * k) / a0,
    b1: (2 * (k * k - vh)) / a0,
    b2: (vh - (vb * k) / q + k * k) / a0,
    a1: (2 * (k * k - 1)) / a0,
    a2: (1 - k / q + k * k) / a0,
  };
  // RLB: analog second-order high-pass, f0 38.14 Hz, Q 0.5003; unity gain numerator 1, -2, 1.
  f0 = 38.13547087602444;
  q = 0.5003270373238773;
  k = Math.tan((Math.PI * f0) / sampleRate);
  a0 = 1 + k / q + k * k;
  const highPass: Biquad = { b0: 1, b1: -2, b2: 1, a1: (2 * (k * k - 1)) / a0, a2: (1 - k / q + k * k) / a0 };
  return [shelf, highPass];
}

/** Loudness (LUFS) of a mean square summed over channels; -Infinity for 0. */
export function energyToLufs(energy: number): number {
  return energy > 0 ? -0.691 + 10 * Math.log10(energy) : Number.NEGATIVE_INFINITY;
}
const lufsToEnergy = (lufs: number): number => Math.pow(10, (lufs + 0.691) / 10);

export interface Bs1770Measurement {
  /** Integrated (gated) loudness, LUFS; -Infinity when no block passes the absolute gate. */
  integrated: number;
  /** Largest absolute sample value over all channels (linear). */
  samplePeak: number;
  /** Number of 400 ms blocks, and how many passed both gates. */
  blocks: number;
  gatedBlocks: number;
  /** K-weighted energy of each complete 100 ms hop (measureWavBs1770 only): what a later update of a part of the signal starts from. */
  hops?: Float64Array;
}

/**
 * Streaming BS.1770 meter: `push` planar windows of any length (the filter state and the
 * partial 100 ms hop carry over), `result()` at any time. Memory: one number per 100 ms.
 */
export class LoudnessMeter {
  private readonly filters: [Biquad, Biquad];
  /** Per channel: x1, x2, y1, y2 of the shelf, y1, y2 of the high-pass (its input is the shelf's output), then the channel's sum of squares in the current hop. */
  private readonly state: Float64Array[];
  private readonly hop: number;
  private hopFill = 0;
  private hops: number[] = [];
  private peak = 0;

  constructor(
    readonly sampleRate: number,
    readonly channels: number,
  ) {
    if (!(sampleRate > 0) || !Number.isFinite(sampleRate)) throw new RangeError(`invalid sample rate ${sampleRate}`);
    if (!Number.isInteger(channels) || channels < 1) throw new RangeError(`invalid channel count ${channels}`);
    this.filters = kWeightingFilters(sampleRate);
    this.state = Array.from({ length: channels }, () => new Float64Array(8));
    this.hop = meterHopFrames(sampleRate);
  }

  /** Add planar frames (one array per channel, equal lengths). */
  push(channels: readonly Float32Array[] | readonly Float64Array[]): void {
    if (channels.length !== this.channels) throw new RangeError(`expected ${this.channels} channels, got ${channels.length}`);
    const n = channels[0]?.length ?? 0;
    let at = 0;
    while (at < n) {
      const take = Math.min(n - at, this.hop - this.hopFill);
      for (let c = 0; c < this.channels; c++) this.filterSquares(c, channels[c]!, at, at + take);
      this.hopFill += take;
      at += take;
      if (this.hopFill === this.hop) {
        // each channel's sum runs sample by sample through the hop, so the result does not depend on how the input was split
        let e = 0;
        for (const st of this.state) {
          e += st[6]!;
          st[6] = 0;
        }
        this.hops.push(e);
        this.hopFill = 0;
      }
    }
  }

  /** K-weight channel `c` over [from, to), adding the squares to the channel's running hop sum; tracks the sample peak. */
  private filterSquares(c: number, x: ArrayLike<number>, from: number, to: number): void {
    const [p, h] = this.filters;
    const s = this.state[c]!;
    let [x1, x2, y1, y2, z1, z2] = [s[0]!, s[1]!, s[2]!, s[3]!, s[4]!, s[5]!];
    let sum = s[6]!;
    let peak = this.peak;
    for (let i = from; i < to; i++) {
      const x0 = x[i]!;
      const a = x0 < 0 ? -x0 : x0;
      if (a > peak) peak = a;
      const y0 = p.b0 * x0 + p.b1 * x1 + p.b2 * x2 - p.a1 * y1 - p.a2 * y2;
      // high-pass numerator 1, -2, 1 on the shelf output
      const z0 = y0 - 2 * y1 + y2 - h.a1 * z1 - h.a2 * z2;
      x2 = x1;
      x1 = x0;
      y2 = y1;
      y1 = y0;
      z2 = z1;
      z1 = z0;
      sum += z0 * z0;
    }
    // flush denormal-sized states (decaying silence) to zero: same result, no slow arithmetic
    const tiny = (v: number): number => (Math.abs(v) < 1e-30 ? 0 : v);
    s[0] = tiny(x1);
    s[1] = tiny(x2);
    s[2] = tiny(y1);
    s[3] = tiny(y2);
    s[4] = tiny(z1);
    s[5] = tiny(z2);
    s[6] = sum;
    this.peak = peak;
  }

  /** K-weighted energy (sum of squares over the channels) of every complete 100 ms hop pushed so far. */
  hopEnergies(): Float64Array {
    return Float64Array.from(this.hops);
  }

  /** Integrated loudness and sample peak of everything pushed so far (complete 400 ms blocks only). */
  result(): Bs1770Measurement {
    return { ...integratedFromHops(this.hops, this.hop), samplePeak: this.peak };
  }
}

/** Frames per 100 ms hop of the meter at `sampleRate`. */
export const meterHopFrames = (sampleRate: number): number => Math.round(sampleRate / 10);

/**
 * Integrated loudness from the K-weighted energies of consecutive 100 ms hops (LoudnessMeter's
 * hopEnergies): 400 ms blocks every hop, gated at -70 LUFS and 10 LU under the first gate's mean.
 */
export function integratedFromHops(e: ArrayLike<number>, hop: number): Omit<Bs1770Measurement, 'samplePeak'> {
  const blocks = Math.max(0, e.length - 3);
  const norm = 4 * hop;
  const block = new Float64Array(blocks);
  for (let j = 0; j < blocks; j++) block[j] = (e[j]! + e[j + 1]! + e[j + 2]! + e[j + 3]!) / norm;
  const gated = (threshold: number): { mean: number; count: number } => {
    let sum = 0;
    let count = 0;
    for (let j = 0; j < blocks; j++) {
      if (block[j]! > threshold) {
        sum += block[j]!;
        count++;
      }
    }
    return { mean: count > 0 ? sum / count : 0, count };
  };
  const abs = gated(lufsToEnergy(ABSOLUTE_GATE_LUFS));
  if (abs.count === 0) return { integrated: Number.NEGATIVE_INFINITY, blocks, gatedBlocks: 0 };
  const rel = gated(Math.max(lufsToEnergy(ABSOLUTE_GATE_LUFS), lufsToEnergy(energyToLufs(abs.mean) + RELATIVE_GATE_LU)));
  return { integrated: rel.count > 0 ? energyToLufs(rel.mean) : Number.NEGATIVE_INFINITY, blocks, gatedBlocks: rel.count };
}

/** EBU Tech 3342 loudness range: relative gate, LU under the absolute-gated short-term loudness. */
export const LRA_RELATIVE_GATE_LU = -20;

/**
 * Loudness range (EBU Tech 3342, LU) from the K-weighted energies of consecutive 100 ms hops:
 * short-term loudness of every 3 s block ending on a hop (once 3 s have been read, as ffmpeg's
 * ebur128 counts them), absolute gate -70 LUFS, relative gate 20 LU under the gated blocks' mean
 * energy, then the 95th minus the 10th percentile of what passed (the value of rank
 * round(p x N), as ffmpeg reads its histogram). 0 when no block passes.
 */
export function loudnessRangeFromHops(e: ArrayLike<number>, hop: number): number {
  const blocks = e.length - 29;
  if (blocks <= 0) return 0;
  const norm = 30 * hop;
  const abs = lufsToEnergy(ABSOLUTE_GATE_LUFS);
  const passed: number[] = [];
  let sum = 0;
  for (let j = 0; j < blocks; j++) {
    let s = 0;
    for (let k = j; k < j + 30; k++) s += e[k]!;
    const energy = s / norm;
    if (energy >= abs) {
      passed.push(energy);
      sum += energy;
    }
  }
  if (!passed.length) return 0;
  const relative = (sum / passed.length) * Math.pow(10, LRA_RELATIVE_GATE_LU / 10);
  const kept = passed.filter((x) => x >= relative).sort((a, b) => a - b);
  const at = (p: number): number => energyToLufs(kept[Math.max(0, Math.round(p * kept.length) - 1)]!);
  return kept.length ? at(0.95) - at(0.1) : 0;
}

/** BS.1770 integrated loudness and sample peak of planar audio in memory. */
export function measureBs1770(channels: readonly Float32Array[], sampleRate: number): Bs1770Measurement {
  const m = new LoudnessMeter(sampleRate, channels.length);
  m.push(channels);
  return m.result();
}

/** BS.1770 integrated loudness and sample peak of frames [0, endFrame) of a WAV, read in windows. */
export async function measureWavBs1770(reader: WavReader, endFrame = reader.frames, windowFrames = 1 << 16): Promise<Bs1770Measurement> {
  const m = new LoudnessMeter(reader.sampleRate, reader.channelCount);
  for await (const w of reader.windows(windowFrames, 0, endFrame)) m.push(w.channels);
  return { ...m.result(), hops: m.hopEnergies() };
}
