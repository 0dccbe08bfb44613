import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav, readWav, resample, writeWav } from '@dub/media';
import { limitChunk, limiterGains, limiterHoldFrames, limiterReachFrames, PeakLimiter } from './limiter.js';
import { normalizeLoudness, INTER_SAMPLE_MARGIN_DB } from './normalize.js';
import { measureLoudness, STREAMING_LOUDNESS } from './loudness.js';
import { itWithMedia, media } from '../../../test/support/media.js';

const SR = 48000;
const H = limiterHoldFrames(SR);
/** How far a change of the input reaches in the output: 2H and the inter-sample interpolators. */
const R = limiterReachFrames(H);
let dir: string;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'limiter-test-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** Deterministic pseudo-random stereo signal: noise with loud bursts, so the limiter works often. */
function signal(frames: number, seed: number): Float32Array[] {
  let s = seed >>> 0;
  const rnd = (): number => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
  const ch = [new Float32Array(frames), new Float32Array(frames)];
  for (let i = 0; i < frames; i++) {
    const loud = Math.floor(i / 2400) % 3 === 0 ? 4 : 0.5;
    ch[0]![i] = rnd() * loud;
    ch[1]![i] = rnd() * loud * 0.7;
  }
  return ch;
}

/** The limiter over a whole signal, in chunks of `chunk` frames (as normalizeLoudness runs it). */
function limitAll(x: Float32Array[], gain: number, ceiling: number, chunk: number): Float32Array[] {
  const n = x[0]!.length;
  const out = x.map(() => new Float32Array(n));
  for (let from = 0; from < n; from += chunk) {
    const to = Math.min(n, from + chunk);
    const a = Math.max(0, from - R);
    const b = Math.min(n, to + R);
    const y = limitChunk(x.map((c) => c.subarray(a, b)), a, n, from, to, { gain, ceiling, hold: H });
    y.forEach((c, i) => out[i]!.set(c, from));
  }
  return out;
}

function pcm16(x: Float32Array[]): Int16Array {
  return pcm16Of(encodeWav({ sampleRate: SR, channels: x }, { format: 'pcm16' }));
}

/** The samples of a pcm16 WAV (after its data chunk header). */
function pcm16Of(wav: Buffer): Int16Array {
  const at = wav.indexOf('data', 12, 'latin1') + 8;
  return new Int16Array(wav.buffer.slice(wav.byteOffset + at, wav.byteOffset + wav.length - ((wav.length - at) & 1)));
}

describe('finite-memory lookahead limiter', () => {
  it('keeps every sample within the ceiling, and is transparent far from peaks', () => {
    const x = signal(SR, 1);
    const ceiling = 0.5;
    const peakOf = (y: Float32Array[]): number => Math.max(...y.map((c) => c.reduce((m, v) => Math.max(m, Math.abs(v)), 0)));
    expect(peakOf(limitAll(x, 1.5, ceiling, 10000))).toBeLessThanOrEqual(ceiling);
    // a 1 kHz tone 6 dB over the ceiling in bursts: limited to the ceiling, not under it
    const tone = [new Float32Array(SR)].map((c) => c.map((_, i) => Math.sin((2 * Math.PI * 1000 * i) / SR) * (Math.floor(i / 4800) % 2 ? 1 : 0.1)));
    const yt = limitAll(tone, 1, ceiling, 10000);
    expect(peakOf(yt)).toBeLessThanOrEqual(ceiling);
    expect(peakOf(yt)).toBeGreaterThan(ceiling * 0.99);
    // a quiet signal (sample peaks 0.15, 10 dB under the ceiling, inter-sample peaks too) passes with the gain only, bit for bit
    const q = x.map((c) => c.map((v) => v * 0.05));
    const yq = limitAll(q, 1.5, ceiling, 10000);
    for (let c = 0; c < 2; c++) for (let i = 0; i < SR; i += 97) expect(yq[c]![i]).toBe(Math.fround(q[c]![i]! * 1.5));
  });

  it('ramps the gain linearly over 2H into and out of an isolated peak, reaching the required gain at the peak', () => {
    const n = 20 * H;
    const required = new Float64Array(n + 4 * H).fill(1);
    const p = 10 * H;
    required[p + 2 * H] = 0.25;
    const g = limiterGains(required, H);
    expect(g[p]).toBeCloseTo(0.25, 6);
    expect(g[p - 2 * H - 1]).toBe(1);
    expect(g[p + 2 * H + 1]).toBe(1);
    expect(g[p - H]).toBeCloseTo(1 - 0.75 * (H + 1) / (2 * H + 1), 6);
  });

  it('is local: changing samples in [a, b] leaves the output outside [a - R, b + R] (R = 2H + 16) bit-identical, whatever the chunking', () => {
    const n = 3 * SR;
    const x = signal(n, 2);
    const edited = x.map((c) => c.slice());
    const [a, b] = [Math.round(1.2 * SR), Math.round(1.5 * SR)];
    const e = signal(b - a + 1, 99);
    for (let c = 0; c < 2; c++) edited[c]!.set(e[c]!.map((v) => v * 3), a);
    const y = limitAll(x, 1.2, 0.6, 65536);
    const z = limitAll(edited, 1.2, 0.6, 50021); // other chunk boundaries too
    const same = (i: number): boolean => y[0]![i] === z[0]![i] && y[1]![i] === z[1]![i];
    let differsInside = false;
    for (let i = 0; i < n; i++) {
      if (i < a - R || i > b + R) {
        if (!same(i)) throw new Error(`output differs at frame ${i}, outside [${a - R}, ${b + R}]`);
      } else if (!same(i)) differsInside = true;
    }
    expect(differsInside).toBe(true);
    // after the 16-bit conversion too (interleaved stereo)
    const py = pcm16(y);
    const pz = pcm16(z);
    for (let i = 0; i < n; i++) {
      if (i >= a - R && i <= b + R) continue;
      if (py[2 * i] !== pz[2 * i] || py[2 * i + 1] !== pz[2 * i + 1]) throw new Error(`pcm16 differs at frame ${i}`);
    }
    // the chunking of the run does not show in the output, nor does one limiter reused over chunks of varying sizes
    const y2 = limitAll(x, 1.2, 0.6, 50021);
    const lim = new PeakLimiter(2, { gain: 1.2, ceiling: 0.6, hold: H });
    const y3 = x.map(() => new Float32Array(n));
    for (let from = 0, k = 0; from < n; k++) {
      const to = Math.min(n, from + (k % 2 ? 7001 : 60000));
      const a0 = Math.max(0, from - R);
      const b0 = Math.min(n, to + R);
      lim.process(x.map((c) => c.subarray(a0, b0)), a0, n, from, to).forEach((c, i) => y3[i]!.set(c, from));
      from = to;
    }
    for (let c = 0; c < 2; c++) {
      expect(Buffer.compare(Buffer.from(y2[c]!.buffer), Buffer.from(y[c]!.buffer))).toBe(0);
      expect(Buffer.compare(Buffer.from(y3[c]!.buffer), Buffer.from(y[c]!.buffer))).toBe(0);
    }
  });
});

describe('normalizeLoudness (JavaScript BS.1770 + limiter)', () => {
  async function premix(name: string, x: Float32Array[]): Promise<string> {
    const file = path.join(dir, name);
    await writeWav(file, { sampleRate: SR, channels: x }, { format: 'float32' });
    return file;
  }

  it('writes the same bytes for the same input, exactly `frames` frames', async () => {
    const input = await premix('det.wav', signal(2 * SR, 3).map((c) => c.map((v) => v * 0.05)));
    const o = { target: STREAMING_LOUDNESS, sampleRate: SR, channels: 2, frames: 2 * SR + 1234 };
    const r1 = await normalizeLoudness(input, path.join(dir, 'det1.wav'), o);
    const r2 = await normalizeLoudness(input, path.join(dir, 'det2.wav'), o);
    expect(r1).toEqual(r2);
    expect(Buffer.compare(await fsp.readFile(path.join(dir, 'det1.wav')), await fsp.readFile(path.join(dir, 'det2.wav')))).toBe(0);
    const out = await readWav(path.join(dir, 'det1.wav'));
    expect(out.channels[0]!.length).toBe(2 * SR + 1234);
    expect(out.channels[0]!.subarray(2 * SR).every((v) => v === 0)).toBe(true);
    expect(Math.abs((await measureLoudness(path.join(dir, 'det1.wav'))).integrated - -16)).toBeLessThanOrEqual(0.5);
  });

  it('keeps a previous gain within the tolerance, so that an edited line changes the output only near it', async () => {
    const n = 6 * SR;
    const x = signal(n, 4).map((c) => c.map((v) => v * 0.08));
    const edited = x.map((c) => c.slice());
    const [a, b] = [2 * SR, Math.round(2.5 * SR)];
    for (const c of edited) for (let i = a; i <= b; i++) c[i] = c[i]! * 1.3;
    const o = { target: STREAMING_LOUDNESS, sampleRate: SR, channels: 2, frames: n };
    const first = await normalizeLoudness(await premix('a.wav', x), path.join(dir, 'a-out.wav'), o);
    expect(first.gainKept).toBe(false);
    expect(first.gainDb).toBe(Math.round(first.exactGainDb * 100) / 100);
    const second = await normalizeLoudness(await premix('b.wav', edited), path.join(dir, 'b-out.wav'), { ...o, previousGainDb: first.gainDb });
    expect(second.gainKept).toBe(true);
    expect(second.gainDb).toBe(first.gainDb);
    expect(second.exactGainDb).not.toBe(first.exactGainDb);
    const ya = pcm16Of(await fsp.readFile(path.join(dir, 'a-out.wav')));
    const yb = pcm16Of(await fsp.readFile(path.join(dir, 'b-out.wav')));
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const differs = ya[2 * i] !== yb[2 * i] || ya[2 * i + 1] !== yb[2 * i + 1];
      if (differs && (i < a - R || i > b + R)) throw new Error(`output differs at frame ${i}, outside the edit`);
      if (differs) changed++;
    }
    expect(changed).toBeGreaterThan(0);
    // beyond the tolerance the exact gain wins
    const third = await normalizeLoudness(await premix('b.wav', edited), path.join(dir, 'c-out.wav'), { ...o, previousGainDb: first.gainDb + 3 });
    expect(third.gainKept).toBe(false);
    expect(third.gainDb).toBe(Math.round(third.exactGainDb * 100) / 100);
    // silence: no gain
    const silent = await normalizeLoudness(await premix('s.wav', [new Float32Array(SR), new Float32Array(SR)]), path.join(dir, 's-out.wav'), { ...o, frames: SR });
    expect({ ...silent, hops: undefined }).toEqual({ inputIntegrated: Number.NEGATIVE_INFINITY, gainDb: 0, exactGainDb: 0, gainKept: false, hops: undefined });
    expect(silent.hops!.every((e) => e === 0)).toBe(true);
  });

  it('keeps the true peak measured by ffmpeg under the target ceiling on loud noise bursts', async () => {
    const input = await premix('loud.wav', signal(4 * SR, 5).map((c) => c.map((v) => v * 0.3)));
    const output = path.join(dir, 'loud-out.wav');
    await normalizeLoudness(input, output, { target: { integrated: -9, truePeak: -1.5, range: 11 }, sampleRate: SR, channels: 2, frames: 4 * SR });
    const m = await measureLoudness(output);
    expect(m.truePeak).toBeLessThanOrEqual(-1.5);
    expect(m.truePeak).toBeGreaterThan(-1.5 - INTER_SAMPLE_MARGIN_DB - 1); // the limiter did work near its ceiling
  });

  itWithMedia(['japanese.wav', 'music-coffee.wav'], 'keeps the true peak measured by ffmpeg under the target ceiling on real speech and music pushed loud', async () => {
    for (const name of ['japanese.wav', 'music-coffee.wav']) {
      const input = path.join(dir, `real-${name}`);
      await resample(media(name), input, { sampleRate: SR, channels: 2, format: 'float32' });
      const output = path.join(dir, `real-out-${name}`);
      const frames = (await readWav(input)).channels[0]!.length;
      for (const target of [STREAMING_LOUDNESS, { integrated: -8, truePeak: -1, range: 11 }]) {
        await normalizeLoudness(input, output, { target, sampleRate: SR, channels: 2, frames });
        const m = await measureLoudness(output);
        expect(m.truePeak, `${name} at ${target.integrated} LUFS`).toBeLessThanOrEqual(target.truePeak);
      }
    }
  });
});
