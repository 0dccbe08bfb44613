import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, renderTimelineBuffer, resample, runFfmpeg, runProcess, writeWav } from '@dub/media';
import { mixReplace } from './mix-replace.js';
import { mixVoiceOver } from './mix-voice-over.js';
import { measureLoudness, EBU_R128_BROADCAST } from './loudness.js';
import { duckGainsDb } from './duck-envelope.js';

const SECONDS = 6;
const SEGMENTS = [0.4, 3.6];
let dir: string;
let speechFile: string;
let speechSeconds: number;
let background: string;
let original: string;

function mono(ch: Float32Array[]): Float32Array {
  if (ch.length === 1) return ch[0]!;
  const out = new Float32Array(ch[0]!.length);
  for (const c of ch) for (let i = 0; i < out.length; i++) out[i] = out[i]! + c[i]! / ch.length;
  return out;
}
function rmsDb(x: Float32Array, sr: number, from: number, to: number): number {
  let e = 0;
  const a = Math.round(from * sr);
  const b = Math.round(to * sr);
  for (let i = a; i < b; i++) e += x[i]! * x[i]!;
  return 10 * Math.log10(e / (b - a) + 1e-20);
}
/** Amplitude (dB) of one frequency over [from, to) seconds (Goertzel). */
function toneDb(x: Float32Array, sr: number, hz: number, from: number, to: number): number {
  const a = Math.round(from * sr);
  const n = Math.round((to - from) * sr);
  const k = (2 * Math.PI * hz) / sr;
  const coeff = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s = x[a + i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return 10 * Math.log10(power / (n * n) + 1e-20);
}
/** Lag (seconds) in [0, maxLag] where `y` best matches `x` delayed. */
function bestLag(x: Float32Array, y: Float32Array, sr: number, maxLag: number): number {
  let best = 0;
  let bestV = -Infinity;
  const n = Math.min(x.length, y.length, Math.round(3 * sr));
  for (let lag = 0; lag <= Math.round(maxLag * sr); lag++) {
    let v = 0;
    for (let i = 0; i + lag < n; i++) v += x[i]! * y[i + lag]!;
    if (v > bestV) {
      bestV = v;
      best = lag;
    }
  }
  return best / sr;
}
async function at8k(file: string): Promise<Float32Array> {
  const out = path.join(dir, `${path.basename(file)}-8k.wav`);
  await resample(file, out, { sampleRate: 8000, channels: 1, format: 'float32' });
  return (await readWav(out)).channels[0]!;
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mix-test-'));
  const line = path.join(dir, 'line.wav');
  await runProcess('espeak-ng', ['-v', 'es+f3', '-z', '-w', line, '--stdin'], { input: 'Buenas tardes, esto es una prueba.' });
  const l = await readWav(line);
  speechSeconds = l.channels[0]!.length / l.sampleRate;
  const sr = l.sampleRate;
  const tl = renderTimelineBuffer({ sampleRate: sr, channels: 1, frames: Math.round(SECONDS * sr) }, SEGMENTS.map((s) => ({ atFrame: Math.round(s * sr), audio: l.channels })));
  speechFile = path.join(dir, 'speech.wav');
  await writeWav(speechFile, { sampleRate: sr, channels: tl }, { format: 'float32' });
  background = path.join(dir, 'background.wav');
  await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${SECONDS}:c=pink:a=0.02:r=44100`, '-ac', '2', background]);
  original = path.join(dir, 'original.wav');
  await runFfmpeg(['-f', 'lavfi', '-i', `sine=f=40:d=${SECONDS}:r=44100`, '-af', 'volume=6dB', '-ac', '2', original]);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('mixReplace', () => {
  it('sums background and speech to the timeline length at -16 LUFS without clipping, speech in place', async () => {
    const output = path.join(dir, 'replace.wav');
    const r = await mixReplace({ background, speech: speechFile, output });
    const out = await readWav(output);
    expect(out.sampleRate).toBe(48000);
    expect(out.channels).toHaveLength(2);
    expect(out.channels[0]!.length).toBe(Math.round(SECONDS * 48000));
    expect(r.frames).toBe(Math.round(SECONDS * 48000));
    const loud = await measureLoudness(output);
    expect(Math.abs(loud.integrated - -16)).toBeLessThanOrEqual(1);
    expect(loud.truePeak).toBeLessThanOrEqual(-1);
    const x = mono(out.channels);
    // speech windows are far louder than the background-only windows
    const inSpeech = rmsDb(x, 48000, SEGMENTS[0]! + 0.2, SEGMENTS[0]! + speechSeconds - 0.2);
    const between = rmsDb(x, 48000, SEGMENTS[0]! + speechSeconds + 0.1, SEGMENTS[1]! - 0.1);
    expect(inSpeech - between).toBeGreaterThan(10);
    // not shifted: the speech lines up with the timeline at lag 0
    expect(bestLag(await at8k(speechFile), await at8k(output), 8000, 0.05)).toBeLessThanOrEqual(0.001);
  });

  it('reaches the EBU R128 broadcast target when asked, and an explicit length', async () => {
    const output = path.join(dir, 'replace-r128.wav');
    await mixReplace({ background, speech: speechFile, output, loudness: EBU_R128_BROADCAST, durationSeconds: 4.5 });
    const loud = await measureLoudness(output);
    expect(Math.abs(loud.integrated - -23)).toBeLessThanOrEqual(1);
    expect((await readWav(output)).channels[0]!.length).toBe(4.5 * 48000);
  });

  it('writes byte-identical output for the same inputs, and keeps a previous gain within the tolerance', async () => {
    const a = path.join(dir, 'det-a.wav');
    const b = path.join(dir, 'det-b.wav');
    const ra = await mixReplace({ background, speech: speechFile, output: a });
    const rb = await mixReplace({ background, speech: speechFile, output: b });
    expect(Buffer.compare(await fsp.readFile(a), await fsp.readFile(b))).toBe(0);
    expect(rb).toMatchObject({ gainDb: ra.gainDb, exactGainDb: ra.exactGainDb, gainKept: false });
    expect(ra.gainDb).toBe(Math.round((-16 - ra.inputIntegrated) * 100) / 100);
    // louder background: the exact gain moves by less than the tolerance, the previous one is kept
    const c = path.join(dir, 'det-c.wav');
    const rc = await mixReplace({ background, speech: speechFile, output: c, backgroundGainDb: 1, previousGainDb: ra.gainDb, gainToleranceDb: 0.5 });
    expect(rc.gainKept).toBe(true);
    expect(rc.gainDb).toBe(ra.gainDb);
    expect(Math.abs(rc.exactGainDb - ra.exactGainDb)).toBeGreaterThan(0);
    expect(Math.abs(rc.exactGainDb - ra.exactGainDb)).toBeLessThanOrEqual(0.5);
    const rd = await mixReplace({ background, speech: speechFile, output: c, backgroundGainDb: 1, previousGainDb: ra.gainDb, gainToleranceDb: 0 });
    expect(rd.gainKept).toBe(false);
    expect(rd.gainDb).toBe(Math.round(rd.exactGainDb * 100) / 100);
  });

  it('mixes a plain tone over noise at a fractional length (ffmpeg layout renegotiation regression)', async () => {
    const tone = path.join(dir, 'tone.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', 'sine=f=300:d=5.5:r=22050', '-c:a', 'pcm_f32le', tone]);
    const output = path.join(dir, 'replace-tone.wav');
    const r = await mixReplace({ background, speech: tone, output, durationSeconds: 5.5 });
    expect(r.frames).toBe(264000);
    expect((await readWav(output)).channels[0]!.length).toBe(264000);
    expect(Math.abs((await measureLoudness(output)).integrated - -16)).toBeLessThanOrEqual(1);
  });
});

describe('mixVoiceOver', () => {
  it('ducks the original by about duckDb under the delayed speech and keeps it elsewhere', async () => {
    const output = path.join(dir, 'vo.wav');
    const r = await mixVoiceOver({ original, speech: speechFile, output, duckDb: 12, delaySeconds: 0.3 });
    expect(r.frames).toBe(Math.round(SECONDS * 48000));
    const x = mono((await readWav(output)).channels);
    const open = toneDb(x, 48000, 40, 0, 0.5);
    const s = SEGMENTS[0]! + 0.3;
    const ducked = toneDb(x, 48000, 40, s + 0.4, s + speechSeconds - 0.4);
    expect(open - ducked).toBeGreaterThan(10.5);
    expect(open - ducked).toBeLessThan(13.5);
    // back to full level in the long gap between the lines
    const [g0, g1] = [s + speechSeconds + 0.45, SEGMENTS[1]! + 0.3 - 0.2];
    expect(g1 - g0).toBeGreaterThan(0.2);
    const gap = toneDb(x, 48000, 40, g0, g1);
    expect(Math.abs(open - gap)).toBeLessThan(1);
    const loud = await measureLoudness(output);
    expect(Math.abs(loud.integrated - -16)).toBeLessThanOrEqual(1);
    expect(loud.truePeak).toBeLessThanOrEqual(-1);
  });

  it('delays the dubbed speech by the configured time (cross-correlation peak)', async () => {
    for (const delay of [0.25, 0.5]) {
      const output = path.join(dir, `vo-${delay}.wav`);
      await mixVoiceOver({ original, speech: speechFile, output, delaySeconds: delay });
      const lag = bestLag(await at8k(speechFile), await at8k(output), 8000, 0.8);
      expect(Math.abs(lag - delay)).toBeLessThanOrEqual(0.002);
    }
  });
});

describe('duck envelope', () => {
  it('ramps down before speech and up after it, bridging short pauses', () => {
    const act = new Uint8Array(300);
    act.fill(1, 100, 150);
    act.fill(1, 170, 200); // 0.2 s pause: bridged
    const g = duckGainsDb(act, 48000, { duckDb: 12, attackSeconds: 0.1, releaseSeconds: 0.2, delayFrames: 0, frames: 300 * 480 });
    expect(g[50]).toBe(0);
    expect(g[95]).toBeLessThan(0);
    expect(g[95]).toBeGreaterThan(-12);
    expect(g[100]).toBe(-12);
    expect(g[160]).toBe(-12);
    expect(g[210]).toBeGreaterThan(-12);
    expect(g[230]).toBe(0);
  });
});
