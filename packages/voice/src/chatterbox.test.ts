/**
 * The Chatterbox Multilingual engine on the tiny generated stand-in (scripts/make-tiny-chatterbox.py,
 * fixtures/chatterbox-tiny): the stand-in has exactly the public export's signature
 * (fixtures/chatterbox-signature.json, with its sources), and the engine runs end to end on it:
 * reference resampled to 24 kHz, prefill with the reference's features, greedy decoding with the KV
 * cache and the repetition penalty, the stop token, the cap from the line's time slot, the vocoder.
 *
 * The stand-in's language model scores speech token 10 + T mod 8 at 1.0 and the next id at 0.9
 * (T: the length of the KV cache after the step), and STOP at 2.0 once T >= 100; `expectedTokens`
 * replays the export's decoding on those scores.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { writeWav } from '@dub/media';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { applyRepetitionPenalty, ChatterboxEngine, tokenCap } from './engines/chatterbox.js';
import { TTS_CONFORMANCE_CHECKS } from './testing/tts-conformance.js';
import { DEFAULT_VOICE } from './types.js';

const DIR = fileURLToPath(new URL('../fixtures/chatterbox-tiny/', import.meta.url));
const sig = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../fixtures/chatterbox-signature.json', import.meta.url)), 'utf8')) as Signature;
const sessions = new SessionCache();
const ctx = resolveContext();
let tmp: string;
let reference: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-chatterbox-test-'));
  // 1 s at 16 kHz: the engine resamples it to the export's 24 kHz
  reference = path.join(tmp, 'reference.wav');
  await writeWav(reference, { sampleRate: 16000, channels: [new Float32Array(16000).map((_, i) => 0.3 * Math.sin((2 * Math.PI * 140 * i) / 16000))] });
});
afterAll(async () => {
  await sessions.disposeAll();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The export's greedy decoding with penalty `p` on the stand-in's scores, from a cache of `prompt` positions. */
function expectedTokens(prompt: number, cap: number, p = 1.2): { tokens: number[]; stopped: boolean } {
  const generated = [6561];
  for (let i = 0; i < cap; i++) {
    const T = prompt + i;
    const t = 10 + (T % 8);
    const scores = new Map<number, number>([[t, 1], [t + 1, 0.9], [6562, T >= 100 ? 2 : -1]]);
    for (const id of new Set(generated)) if (scores.has(id)) scores.set(id, scores.get(id)! < 0 ? scores.get(id)! * p : scores.get(id)! / p);
    const next = [...scores.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
    generated.push(next);
    if (next === 6562) return { tokens: generated.slice(1, -1), stopped: true };
  }
  return { tokens: generated.slice(1), stopped: false };
}

describe('Chatterbox Multilingual (stand-in with the export signature)', () => {
  it('the stand-in has exactly the export\'s four graphs: names, dtypes, ranks (per-layer KV cache; float16 cache in the fp16 language model)', async () => {
    expect(JSON.stringify(sig.source)).toMatch(/VladOS95-cyber\/onnx_conversion_scripts/);
    for (const file of ['speech_encoder.onnx', 'embed_tokens.onnx', 'language_model.onnx', 'language_model_fp16.onnx', 'conditional_decoder.onnx']) {
      expectSignature((await sessions.get(path.join(DIR, file))).session, sig.files[file]!, file);
    }
  });

  it('the repetition penalty and the cap from the time slot', () => {
    const x = Float32Array.from([2, -1, 0.5, 3]);
    applyRepetitionPenalty(x, [0, 1, 1, 9], 1.25);
    [1.6, -1.25, 0.5, 3].forEach((v, i) => expect(x[i]).toBeCloseTo(v, 6));
    expect(tokenCap(2, 1000)).toBe(51);
    expect(tokenCap(100, 1000)).toBe(1000);
    expect(tokenCap(undefined, 256)).toBe(256);
  });

  it('decodes greedily with the KV cache and the penalty until the stop token, and vocodes the generated tokens after the reference\'s', async () => {
    const engine = new ChatterboxEngine({ dir: DIR, sessions, tmpDir: tmp });
    const request = { text: 'Hello, World', locale: 'en-US', speed: 1, voice: { ...DEFAULT_VOICE, reference } };
    const g = await engine.debugGenerate(request, ctx);
    expect(g.ids).toEqual([6563, 255, 40, 35, 30, 2, 37, 38, 29, 0, 6561, 6561]);
    // the cache starts with the reference's 3 feature positions and the 12 text ids
    const want = expectedTokens(3 + 12, 1000);
    expect(want.stopped).toBe(true);
    expect(g.tokens).toEqual(want.tokens);
    expect(g.stopped).toBe(true);
    // the penalty changes the tokens (without it every step takes its 1.0 token)
    const plain = await new ChatterboxEngine({ dir: DIR, sessions, tmpDir: tmp, repetitionPenalty: 1 }).debugGenerate(request, ctx);
    expect(plain.tokens).toEqual(expectedTokens(15, 1000, 1).tokens);
    expect(plain.tokens).not.toEqual(g.tokens);

    // the fp16 graph (float16 KV cache, read from the session) decodes the same tokens
    const fp16 = new ChatterboxEngine({ dir: DIR, tmpDir: tmp, languageModel: 'language_model_fp16.onnx' });
    expect((await fp16.debugGenerate(request, ctx)).tokens).toEqual(want.tokens);
    await fp16.dispose();

    const audio = await engine.synthesize(request, ctx);
    expect(audio.sampleRate).toBe(24000);
    // the stand-in's vocoder: 960 samples (40 ms) per generated token, the reference's part dropped;
    // the engine cuts the last token's 40 ms as mtl_tts.py does
    expect(audio.channels[0]!.length).toBe((want.tokens.length - 1) * 960);
    await engine.dispose();
  });

  it('a line is cut at the cap its time slot gives; a longer text starts nearer the stop', async () => {
    const engine = new ChatterboxEngine({ dir: DIR, sessions, tmpDir: tmp });
    const request = { text: 'Hello, World', locale: 'en-US', speed: 1, voice: { ...DEFAULT_VOICE, reference }, maxSeconds: 0.4 };
    const g = await engine.debugGenerate(request, ctx);
    expect(g.cap).toBe(11);
    expect(g.stopped).toBe(false);
    expect(g.tokens).toEqual(expectedTokens(15, 11).tokens);
    expect((await engine.synthesize(request, ctx)).channels[0]!.length).toBe((11 - 1) * 960);
    const longer = await engine.debugGenerate({ ...request, text: 'hello hello hello hello hello hello', maxSeconds: undefined }, ctx);
    expect(longer.tokens).toEqual(expectedTokens(3 + longer.ids.length, 1000).tokens);
    expect(longer.ids.length).toBe(18);
    expect(longer.tokens.length).toBe(100 - 3 - 18);
    await engine.dispose();
  });

  it('refuses what it cannot speak, and names the fetch command when the export is missing', async () => {
    const engine = new ChatterboxEngine({ dir: DIR, sessions, tmpDir: tmp });
    await expect(engine.synthesize({ text: 'Hola', locale: 'ca-ES', speed: 1, voice: { ...DEFAULT_VOICE, reference } }, ctx)).rejects.toThrow(/does not speak/);
    // no reference: the export's default voice; without its default_voice.wav, an error naming it
    expect((await engine.synthesize({ text: 'Hola', locale: 'es-ES', speed: 1, voice: DEFAULT_VOICE }, ctx)).channels[0]!.length).toBeGreaterThan(0);
    const bare = path.join(tmp, 'no-default-voice');
    fs.cpSync(DIR, bare, { recursive: true });
    fs.rmSync(path.join(bare, 'default_voice.wav'));
    const noDefault = new ChatterboxEngine({ dir: bare, sessions, tmpDir: tmp });
    await expect(noDefault.synthesize({ text: 'Hola', locale: 'es-ES', speed: 1, voice: DEFAULT_VOICE }, ctx)).rejects.toThrow(/default_voice\.wav/);
    await noDefault.dispose();
    expect((await engine.synthesize({ text: '  ', locale: 'es-ES', speed: 1, voice: DEFAULT_VOICE }, ctx)).channels[0]!.length).toBe(0);
    await engine.dispose();
    expect(() => ChatterboxEngine.files({ modelsDir: '/nonexistent' })).toThrow(/npx dub models fetch chatterbox-multilingual/);
    expect(await new ChatterboxEngine({ modelsDir: '/nonexistent' }).supportsLocale('es-ES')).toBe(false);
  });
});

describe('Chatterbox passes the TTS conformance checks (stand-in, default voice)', () => {
  const engine = new ChatterboxEngine({ dir: DIR, sessions, tmpDir: os.tmpdir() });
  afterAll(() => engine.dispose());
  for (const c of TTS_CONFORMANCE_CHECKS) it(c.name, () => c.run(engine, { locale: 'es-ES', text: 'Hola, ¿cómo estás? Muy bien.' }));
});
