/**
 * The voice plan: espeak-ng voices matched to each speaker (pitch, rate, timbre); a neural voice
 * (Piper, here the tiny generated stand-in with the export's signature) keeps its voice and gets
 * the timbre correction toward each speaker's envelope; anonymization 1 takes the timbre away; with
 * the OpenVoice converter each speaker's tone colour is the mean over the reference's ~10 s pieces;
 * Kokoro gives each speaker one of its voices by family and F0 (needs its catalogue, not its model).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { silentLogger } from '@dub/core';
import { readWav, runProcess, writeWav } from '@dub/media';
import { createEspeakEngine, createKokoroEngine, createPiperEngine } from '@dub/voice';
import { planVoices } from './generate-voices.js';

const FIXTURE = fileURLToPath(new URL('../../voice/fixtures/tiny-piper.onnx', import.meta.url));
let dir: string;
const ctx = { logger: silentLogger };
const speakers = [{ id: 'S1', reference_key: 'ref-low' }, { id: 'S2', reference_key: 'ref-high' }, { id: 'S3' }];

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'voices-test-'));
  await runProcess('espeak-ng', ['-v', 'en-us+m1', '-p', '20', '-w', path.join(dir, 'ref-low.wav'), '--stdin'], { input: 'A low voice reads this line slowly and calmly for the reference clip.' });
  await runProcess('espeak-ng', ['-v', 'en-us+f2', '-p', '80', '-w', path.join(dir, 'ref-high.wav'), '--stdin'], { input: 'A high voice reads this line quickly for the other reference clip.' });
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const request = (anonymization = 0) => ({ locale: 'es-ES', speakers, libraryVoiceId: undefined, anonymization, referenceFile: async (k: string) => path.join(dir, `${k}.wav`), workDir: dir, media: {} });

it('espeak-ng: each speaker with a reference clip gets pitch, rate and a timbre correction; without one, the default voice', async () => {
  const engine = createEspeakEngine({ tmpDir: dir });
  const plan = await planVoices(engine, request(), ctx);
  expect(plan.sources).toEqual({ S1: 'matched', S2: 'matched', S3: 'default' });
  expect(plan.voices.S1!.timbre).toHaveLength(18);
  expect(plan.voices.S2!.timbre).toHaveLength(18);
  expect(plan.voices.S1!.timbre).not.toEqual(plan.voices.S2!.timbre);
  expect(plan.voices.S3!.timbre).toBeUndefined();
  expect((await planVoices(engine, { ...request(), timbre: false }, ctx)).voices.S1!.timbre).toBeUndefined();
});

it('Kokoro: each speaker gets a voice of the locale by family and F0 (a low male one, the high female one), anonymization 1 the other family; without a clip the fallback male voice', async () => {
  // no synthesis: the choice reads the reference clips and the voice catalogue (the model is not loaded)
  const engine = createKokoroEngine();
  try {
    const plan = await planVoices(engine, request(), ctx);
    expect(plan.sources).toEqual({ S1: 'matched', S2: 'matched', S3: 'default' });
    expect(plan.voices.S1!.model).toMatch(/^em_/);
    expect(plan.voices.S2!.model).toBe('ef_dora');
    expect(plan.voices.S3!.model).toMatch(/^em_/);
    const anonymized = await planVoices(engine, request(1), ctx);
    expect(anonymized.voices.S1!.model).toBe('ef_dora');
    expect(anonymized.voices.S2!.model).toMatch(/^em_/);
  } finally {
    await engine.dispose();
  }
});

it('speakers planned at once (3) give the plan of one at a time, same keys in the same order (espeak-ng and Piper)', async () => {
  const three = [...speakers, { id: 'S4', reference_key: 'ref-low' }];
  const espeak = createEspeakEngine({ tmpDir: dir });
  const one = await planVoices(espeak, { ...request(), speakers: three }, ctx);
  const many = await planVoices(espeak, { ...request(), speakers: three, speakersAtOnce: 3 }, ctx);
  expect(one.sources).toEqual({ S1: 'matched', S2: 'matched', S3: 'default', S4: 'matched' });
  expect(JSON.stringify(many)).toBe(JSON.stringify(one));
  const piper = createPiperEngine({ voices: { 'es-ES': FIXTURE } });
  try {
    const p1 = await planVoices(piper, { ...request(), speakers: three }, ctx);
    expect(JSON.stringify(await planVoices(piper, { ...request(), speakers: three, speakersAtOnce: 3 }, ctx))).toBe(JSON.stringify(p1));
  } finally {
    await piper.dispose();
  }
});

it('Piper: its own voice for everyone, moved toward each speaker by the timbre correction; none when anonymized', async () => {
  const engine = createPiperEngine({ voices: { 'es-ES': FIXTURE } });
  try {
    const plan = await planVoices(engine, request(), ctx);
    expect(plan.sources).toEqual({ S1: 'timbre', S2: 'timbre', S3: 'default' });
    expect(plan.voices.S1).toMatchObject({ variant: '', pitch: 50 });
    expect(plan.voices.S1!.timbre).toHaveLength(18);
    expect(plan.voices.S1!.timbre).not.toEqual(plan.voices.S2!.timbre);
    const anonymous = await planVoices(engine, request(1), ctx);
    expect(anonymous.sources).toEqual({ S1: 'default', S2: 'default', S3: 'default' });
    expect(anonymous.voices.S1!.timbre).toBeUndefined();
  } finally {
    await engine.dispose();
  }
});

it('with the OpenVoice converter (the stand-in with the export signature): every speaker with a reference gets its 256-value tone colour, no timbre filter; none when anonymized', async () => {
  const { ToneColorConverter } = await import('@dub/voice');
  const converter = await ToneColorConverter.load({ dir: fileURLToPath(new URL('../../voice/fixtures/openvoice-tiny', import.meta.url)) });
  try {
    const engine = createEspeakEngine({ tmpDir: dir });
    const plan = await planVoices(engine, { ...request(), converter }, ctx);
    expect(plan.sources).toEqual({ S1: 'converted', S2: 'converted', S3: 'default' });
    expect(plan.voices.S1!.toneColor).toHaveLength(256);
    expect(plan.voices.S1!.toneColor).not.toEqual(plan.voices.S2!.toneColor);
    expect(plan.voices.S1!.timbre).toBeUndefined();
    const piper = createPiperEngine({ voices: { 'es-ES': FIXTURE } });
    const p = await planVoices(piper, { ...request(), converter }, ctx);
    expect(p.sources).toEqual({ S1: 'converted', S2: 'converted', S3: 'default' });
    expect(p.voices.S2!.toneColor).toHaveLength(256);
    await piper.dispose();
    expect((await planVoices(engine, { ...request(0.5), converter }, ctx)).voices.S1!.toneColor).toBeUndefined();
  } finally {
    await converter.dispose();
  }
});

it('with the OpenVoice converter, a 25 s reference clip\'s tone colour is the mean of the tones of its two 12.5 s pieces (se_extractor.py), not the whole clip\'s', async () => {
  const { ToneColorConverter } = await import('@dub/voice');
  const converter = await ToneColorConverter.load({ dir: fileURLToPath(new URL('../../voice/fixtures/openvoice-tiny', import.meta.url)) });
  const work = await fsp.mkdtemp(path.join(dir, 'tone-'));
  try {
    // 25 s of the low voice (espeak-ng speaks at the converter's 22.05 kHz), its clip repeated
    const low = await readWav(path.join(dir, 'ref-low.wav'));
    expect(low.sampleRate).toBe(22050);
    const long = new Float32Array(25 * 22050).map((_, i) => low.channels[0]![i % low.channels[0]!.length]!);
    await writeWav(path.join(work, 'ref-long.wav'), { sampleRate: 22050, channels: [long] }, { format: 'float32' });
    const spy = vi.spyOn(converter, 'extractTone');
    const plan = await planVoices(createEspeakEngine({ tmpDir: work }), { ...request(), speakers: [{ id: 'S1', reference_key: 'ref-long' }], referenceFile: async (k: string) => path.join(work, `${k}.wav`), workDir: work, converter }, ctx);
    expect(plan.sources).toEqual({ S1: 'converted' });
    expect(spy.mock.calls.map(([c]) => c.length)).toEqual([275625, 275625]);
    spy.mockRestore();
    // the clip the converter read (resampled to its rate), cut in two
    const clip = (await readWav(path.join(work, 'tone-0.wav'))).channels[0]!;
    expect(clip.length).toBe(551250);
    const a = await converter.extractTone(clip.subarray(0, 275625));
    const b = await converter.extractTone(clip.subarray(275625));
    const tone = plan.voices.S1!.toneColor!;
    expect(tone).toHaveLength(256);
    for (let i = 0; i < 256; i++) expect(tone[i]!).toBeCloseTo((a[i]! + b[i]!) / 2, 5);
  } finally {
    await converter.dispose();
  }
});

it('a speaker\'s own choice (saved in the script) wins over the version\'s options: own voice, a library voice, or anonymized', async () => {
  const engine = createEspeakEngine({ tmpDir: dir });
  const choices = [
    { id: 'S1', reference_key: 'ref-low', voice: { source: 'speaker' as const } },
    { id: 'S2', reference_key: 'ref-high', voice: { source: 'anonymized' as const } },
    { id: 'S3', reference_key: 'ref-high', voice: { source: 'library' as const, library_voice_id: 'lucia' } },
    { id: 'S4', reference_key: 'ref-low' },
  ];
  const plan = await planVoices(engine, { ...request(), speakers: choices, libraryVoiceId: 'marco' }, ctx);
  expect(plan.sources).toEqual({ S1: 'matched', S2: 'matched', S3: 'library:lucia', S4: 'library:marco' });
  expect(plan.voices.S1!.timbre).toHaveLength(18);
  // anonymized (default 1): no timbre toward the speaker, and a voice other than the one matched to them
  expect(plan.voices.S2!.timbre).toBeUndefined();
  const own = await planVoices(engine, { ...request(), speakers: [{ ...choices[1]!, voice: { source: 'speaker' as const } }] }, ctx);
  expect(plan.voices.S2!.variant === own.voices.S2!.variant && plan.voices.S2!.pitch === own.voices.S2!.pitch).toBe(false);
});
