/**
 * The OpenVoice V2 tone-colour converter on the tiny generated stand-in
 * (scripts/make-tiny-openvoice.py): its inputs and outputs are checked against the public
 * export's signature (fixtures/openvoice-signature.json, with its source), the spectrogram
 * front-end against a direct DFT of the export's definition, and the conversion plumbing end to
 * end through an espeak-ng engine.
 */
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { openVoiceSpectrogram, readOpenVoiceConfig, ToneColorConverter, tonePieces, withToneConversion, TONE_SIZE } from './engines/openvoice.js';
import { createEspeakEngine } from './engines/espeak-engine.js';

const DIR = fileURLToPath(new URL('../fixtures/openvoice-tiny', import.meta.url));
const SIGNATURE = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../fixtures/openvoice-signature.json', import.meta.url)), 'utf8')) as {
  source: string;
  files: Record<string, { inputs?: { name: string; dtype: string; rank: number }[]; outputs?: { index: number; dtype: string; rank?: number }[] }>;
};
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());

/** The export's spectrogram by its definition: numpy reflect pad, periodic Hann, direct DFT, sqrt(|X|^2 + 1e-6). */
function reference(y: Float32Array, nFft: number, hop: number, frames: number[]): number[][] {
  const pad = (nFft - hop) / 2;
  const p = (i: number) => (i < pad ? y[pad - i]! : i - pad >= y.length ? y[2 * (y.length - 1) - (i - pad)]! : y[i - pad]!);
  return frames.map((f) => {
    const out: number[] = [];
    for (const k of [0, 1, 7, 64, 200, 511, 512]) {
      let re = 0;
      let im = 0;
      for (let n = 0; n < nFft; n++) {
        const v = p(f * hop + n) * (0.5 - 0.5 * Math.cos((2 * Math.PI * n) / nFft));
        re += v * Math.cos((2 * Math.PI * k * n) / nFft);
        im -= v * Math.sin((2 * Math.PI * k * n) / nFft);
      }
      out.push(Math.sqrt(re * re + im * im + 1e-6));
    }
    return out;
  });
}

describe('OpenVoice V2 tone-colour converter (stand-in with the export signature)', () => {
  it('the stand-in has exactly the published export\'s inputs, dtypes and ranks', async () => {
    expect(SIGNATURE.source).toMatch(/season-studio\/MeloTTS-ONNX\/blob\/ddfb27be/);
    for (const file of ['tone_color_extract_model.onnx', 'tone_clone_model.onnx']) {
      const m = await sessions.get(`${DIR}/${file}`);
      const spec = SIGNATURE.files[file]!;
      const meta = m.session.inputMetadata.map((i) => ({ name: i.name, dtype: i.isTensor ? i.type : '?', rank: i.isTensor ? i.shape.length : -1 }));
      expect(meta).toEqual(spec.inputs!.map((i) => ({ name: i.name, dtype: i.dtype, rank: i.rank })));
      const out = m.session.outputMetadata[0]!;
      expect(out.isTensor && out.type).toBe(spec.outputs![0]!.dtype);
      if (spec.outputs![0]!.rank !== undefined && out.isTensor) expect(out.shape.length).toBe(spec.outputs![0]!.rank);
    }
    expect(readOpenVoiceConfig(`${DIR}/configuration.json`)).toEqual({ sampleRate: 22050, nFft: 1024, hop: 256, win: 1024 });
  });

  it('the spectrogram front-end equals the export\'s definition computed by a direct DFT', () => {
    const y = new Float32Array(22050);
    for (let i = 0; i < y.length; i++) y[i] = 0.3 * Math.sin(2 * Math.PI * 220 * i / 22050) + 0.1 * Math.sin(2 * Math.PI * 3100 * i / 22050 + 1) + (i % 97 === 0 ? 0.2 : 0);
    const c = { sampleRate: 22050, nFft: 1024, hop: 256, win: 1024 };
    const s = openVoiceSpectrogram(y, c);
    expect(s.bins).toBe(513);
    expect(s.frames).toBe(Math.floor((y.length + 2 * 384 - 1024) / 256) + 1);
    const frames = [0, 1, 40, s.frames - 1];
    const ref = reference(y, 1024, 256, frames);
    for (const [fi, f] of frames.entries()) {
      for (const [ki, k] of [0, 1, 7, 64, 200, 511, 512].entries()) expect(Math.abs(s.data[f * 513 + k]! - ref[fi]![ki]!)).toBeLessThan(1e-3 * Math.max(1, ref[fi]![ki]!));
    }
    expect(() => openVoiceSpectrogram(new Float32Array(100), c)).toThrow(/too short/);
  });

  it('extracts a 256-value tone, converts a line with the tone difference and tau, and converts espeak-ng output through the wrapper', async () => {
    const tc = await ToneColorConverter.load({ dir: DIR, sessions });
    const y = new Float32Array(22050).map((_, i) => 0.2 * Math.sin(2 * Math.PI * 150 * i / 22050));
    const tone = await tc.extractTone(y);
    expect(tone.length).toBe(TONE_SIZE);
    const same = await tc.convert(y, tone, 0.3);
    const frames = openVoiceSpectrogram(y, tc.config).frames;
    expect(same.length).toBe(frames * 256);
    const shifted = await tc.convert(y, tone.map((v) => v + 1), 0.5);
    // the stand-in scales by 1 + tau * mean(dest - src): 1.5 against 1
    expect(shifted[1000]! / same[1000]!).toBeCloseTo(1.5, 4);
    await expect(tc.convert(y, new Float32Array(3))).rejects.toThrow(/256 values/);

    const engine = withToneConversion(createEspeakEngine({ tmpDir: os.tmpdir() }), tc);
    expect(engine.capabilities.sampleRate).toBe(22050);
    const ctx = { logger: silentLogger };
    const voice = { variant: '', pitch: 50, wordsPerMinute: 165, amplitude: 100 };
    const plain = await engine.synthesize({ text: 'Hola a todos.', locale: 'es-ES', speed: 1, voice }, ctx);
    const converted = await engine.synthesize({ text: 'Hola a todos.', locale: 'es-ES', speed: 1, voice: { ...voice, toneColor: Array.from(tone) } }, ctx);
    expect(converted.sampleRate).toBe(22050);
    // the stand-in's output has one hop of samples per spectrogram frame
    expect(converted.channels[0]!.length).toBe(openVoiceSpectrogram(plain.channels[0]!, tc.config).frames * 256);
    await engine.dispose();
  });

  it('a speaker\'s speech is cut as se_extractor.py does: round(duration / 10 s) pieces (halves to even), at least one, near-equal, covering the clip', () => {
    const count = (seconds: number) => tonePieces(Math.round(seconds * 22050), 22050).length;
    expect([4, 6, 14.9, 15, 20, 24.9, 25, 25.1, 35, 45].map(count)).toEqual([1, 1, 1, 2, 2, 2, 2, 3, 4, 4]);
    for (const n of [1, 88200, 551250, 551251, 771750]) {
      const p = tonePieces(n, 22050);
      expect(p[0]!.start).toBe(0);
      expect(p.at(-1)!.end).toBe(n);
      for (let i = 1; i < p.length; i++) expect(p[i]!.start).toBe(p[i - 1]!.end);
      const lengths = p.map((x) => x.end - x.start);
      expect(Math.max(...lengths) - Math.min(...lengths)).toBeLessThanOrEqual(1);
    }
    expect(tonePieces(551250, 22050)).toEqual([{ start: 0, end: 275625 }, { start: 275625, end: 551250 }]);
    expect(() => tonePieces(0, 22050)).toThrow(/above 0/);
  });

  it('the reference tone of a 25 s clip is the mean of the tones of its two 12.5 s pieces (the extractor sees the pieces, not the whole clip)', async () => {
    const tc = await ToneColorConverter.load({ dir: DIR, sessions });
    // 25 s at 22.05 kHz: a low voice-like tone, then a brighter one after a third of the clip
    const y = new Float32Array(25 * 22050).map((_, i) => (i < 8 * 22050 ? 0.3 * Math.sin(2 * Math.PI * 110 * i / 22050) : 0.1 * Math.sin(2 * Math.PI * 2500 * i / 22050)));
    const spy = vi.spyOn(tc, 'extractTone');
    const tone = await tc.referenceTone(y);
    // the extractor saw the two halves, not the whole clip
    expect(spy.mock.calls.map(([c]) => [c.length, c[0], c[c.length - 1]])).toEqual([
      [275625, y[0], y[275624]],
      [275625, y[275625], y[551249]],
    ]);
    spy.mockRestore();
    const a = await tc.extractTone(y.subarray(0, 275625));
    const b = await tc.extractTone(y.subarray(275625));
    for (let i = 0; i < TONE_SIZE; i++) expect(tone[i]!).toBeCloseTo((a[i]! + b[i]!) / 2, 5);
    // a 4 s clip is one piece: its tone is the whole clip's
    const short = y.subarray(0, 4 * 22050);
    expect(Array.from(await tc.referenceTone(short))).toEqual(Array.from(await tc.extractTone(short)));
  });

  it('without the model installed, the resolver names the fetch command', () => {
    expect(() => ToneColorConverter.files({ modelsDir: '/nonexistent' })).toThrow(/npx dub models fetch openvoice-v2-tone-clone/);
  });
});
