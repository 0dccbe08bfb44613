import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWav } from '@dub/media';
import { hannWindow, melFilterbank, MelWindows, normaliseMel, WAV2LIP_MEL } from './audio/mel.js';
import { applyVisemes, mouthTargets, opennessFromLevels } from './audio/openness.js';
import { phonemeOpenness, phonemizeWords, splitIpa, visemeWeights } from './audio/phonemes.js';
import { frameLevels } from './audio/speech-envelope.js';
import { dubbedSpeech, isLoudAt } from './media.test-helper.js';

let dir: string;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-audio-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function tone(name: string, hz: number, seconds: number, amp: number): Promise<string> {
  const sr = 16000;
  const x = Float32Array.from({ length: Math.round(seconds * sr) }, (_, i) => amp * Math.sin((2 * Math.PI * hz * i) / sr));
  const file = path.join(dir, `${name}.wav`);
  await writeWav(file, { sampleRate: sr, channels: [x] }, { format: 'float32' });
  return file;
}

describe('Wav2Lip mel front-end', () => {
  it('Slaney mel filterbank: 80 triangles over 401 bins between 55 and 7600 Hz, area-normalised', () => {
    const fb = melFilterbank();
    expect(fb).toHaveLength(80);
    expect(fb[0]).toHaveLength(401);
    const hzOf = (k: number): number => (k * 16000) / 800;
    const peak = (row: Float32Array): number => row.indexOf(Math.max(...row));
    expect(hzOf(peak(fb[0]))).toBeGreaterThan(55);
    expect(hzOf(peak(fb[0]))).toBeLessThan(150);
    expect(hzOf(peak(fb[79]))).toBeGreaterThan(6500);
    expect(hzOf(peak(fb[79]))).toBeLessThan(7600);
    for (let m = 1; m < 80; m++) expect(peak(fb[m])).toBeGreaterThanOrEqual(peak(fb[m - 1]));
    // Slaney normalisation: each triangle's height is 2 / its width in Hz, so area ~ 1 in Hz x bins
    const area = (row: Float32Array): number => row.reduce((s, v) => s + v, 0) * (16000 / 800);
    expect(area(fb[40])).toBeGreaterThan(0.8);
    expect(area(fb[40])).toBeLessThan(1.2);
  });

  it('periodic Hann window; normalisation maps the floor to -4 and clips at 4', () => {
    const w = hannWindow(800);
    expect(w[0]).toBe(0);
    expect(w[400]).toBeCloseTo(1, 9);
    expect(w[200]).toBeCloseTo(0.5, 9);
    expect(normaliseMel(0)).toBe(-4);
    expect(normaliseMel(1e6)).toBe(4);
    // 0 dB amplitude -> -20 dB after the reference level -> 8 * 0.8 - 4 = 2.4
    expect(normaliseMel(1)).toBeCloseTo(2.4, 6);
  });

  it('a 1 kHz tone lights the mel band of 1 kHz; silence is -4; windows of 16 frames, 80 per second', async () => {
    const mels = await MelWindows.open(await tone('tone', 1000, 2, 0.5));
    expect(mels.frames).toBe(1 + Math.floor(32000 / 200));
    const w = await mels.windowFor(15, 30); // starts at mel frame 40
    expect(w).toHaveLength(80 * 16);
    const band = (m: number): number => w[m * 16 + 8];
    let best = 0;
    for (let m = 0; m < 80; m++) if (band(m) > band(best)) best = m;
    const fb = melFilterbank();
    const centreHz = (fb[best].indexOf(Math.max(...fb[best])) * 16000) / 800;
    expect(Math.abs(centreHz - 1000)).toBeLessThan(120);
    expect(band(best)).toBeGreaterThan(band(5) + 2);
    // the last video frames take the last 16 mel frames
    const end = await mels.windowFor(10_000, 30);
    expect(end[best * 16]).toBeGreaterThan(0);
    expect(end[best * 16 + 15]).toBeGreaterThan(0);
    await mels.close();
    const quiet = await MelWindows.open(await tone('silence', 1000, 1, 0));
    const s = await quiet.windowFor(3, 25);
    expect(Math.max(...s)).toBe(-4);
    await quiet.close();
    expect(WAV2LIP_MEL.windowFrames).toBe(16);
  });
});

describe('mouth openness from speech', () => {
  it('frame levels follow the loud and silent spans; openness is 0 when silent and high when loud', async () => {
    const wav = await dubbedSpeech(path.join(dir, 'dub.wav'), 3);
    const levels = await frameLevels(wav, 30, 90);
    const open = opennessFromLevels(levels);
    for (let i = 0; i < 90; i++) {
      const t = (i + 0.5) / 30;
      const near = [0.3, 1.2, 2.0, 2.7].some((e) => Math.abs(t - e) < 0.12);
      if (near) continue;
      if (isLoudAt(t)) expect(open[i], `frame ${i}`).toBeGreaterThan(0.35);
      else expect(open[i], `frame ${i}`).toBeLessThan(0.05);
    }
  });

  it('targets: open with the dub, close where only the source speaks, nothing where both are silent', () => {
    const dub = Float32Array.from([0.8, 0, 0]);
    const src = Float32Array.from([0.5, 0.6, 0]);
    const t = mouthTargets(dub, src);
    expect(t[0]).toBeCloseTo(0.8, 6);
    expect(t[1]).toBeCloseTo(-0.6, 6);
    expect(t[2]).toBe(0);
    expect(Array.from(mouthTargets(dub))).toEqual(Array.from(dub));
  });

  it('espeak-ng phonemes: one IPA string per word; bilabials close, open vowels open', async () => {
    const ph = await phonemizeWords(['mama', 'papá', 'hola'], 'es-ES');
    expect(ph).toHaveLength(3);
    expect(ph[0].join('')).toMatch(/^mama$/);
    expect(phonemeOpenness('m')).toBe(0);
    expect(phonemeOpenness('a')).toBe(1);
    expect(phonemeOpenness('i')).toBeLessThan(phonemeOpenness('o'));
    expect(splitIpa('həlˈoʊ')).toEqual(['h', 'ə', 'l', 'o', 'ʊ']);
    const w = visemeWeights([{ text: 'mama', start: 0, end: 0.4 }], ph, 10, 6);
    expect(Array.from(w.slice(0, 4))).toEqual([0, 1, 0, 1]);
    expect(Number.isNaN(w[5])).toBe(true);
    const shaped = applyVisemes(Float32Array.from([1, 1, 1, 1, 1, 1]), w);
    expect(shaped[0]).toBeLessThan(0.35);
    expect(shaped[1]).toBe(1);
    expect(shaped[5]).toBe(1);
  });
});
