import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ModelMissingError, resolveContext } from '@dub/core';
import { createPiperEngine } from './engines/piper-engine.js';
import { loadPiperConfig, parsePiperConfig } from './engines/piper-config.js';
import { phonemeIds, phonemize } from './engines/piper-phonemes.js';
import { TTS_CONFORMANCE_CHECKS } from './testing/tts-conformance.js';
import { DEFAULT_VOICE } from './types.js';

// Tiny Piper-compatible model from scripts/make-tiny-tts-model.py: each id -> 256 * length_scale
// samples of a sine at 100 + 7 * id Hz.
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tiny-piper.onnx');
const HOP = 256;
const ctx = resolveContext();

describe('piper engine: conformance (tiny model)', () => {
  const engine = createPiperEngine({ voices: { 'es-ES': FIXTURE } });
  for (const c of TTS_CONFORMANCE_CHECKS) it(c.name, () => c.run(engine, { locale: 'es-ES', text: 'Hola, ¿cómo estás? Muy bien.' }));
});

describe('piper phonemes', () => {
  it('phonemizes with espeak-ng into sentences with punctuation', async () => {
    const s = await phonemize('Hola mundo, ¿qué tal? Bien.', 'es', ctx);
    expect(s.map((x) => x.phonemes)).toEqual(['ˈola mˈundo, kˈe tˈal?', 'bjˈen.']);
  });

  it("maps phonemes with Piper's BOS, pad and EOS convention", () => {
    const cfg = parsePiperConfig({ phoneme_id_map: { _: [0], '^': [1], $: [2], a: [5], b: [6] } });
    expect(phonemeIds('ab', cfg).ids).toEqual([1, 0, 5, 0, 6, 0, 2]);
    expect(phonemeIds('aXb', cfg)).toEqual({ ids: [1, 0, 5, 0, 6, 0, 2], missing: ['X'] });
  });
});

describe('piper engine (tiny model)', () => {
  it('feeds the phoneme ids and the length scale to the model and joins sentences with silence', async () => {
    const engine = createPiperEngine({ voices: { 'es-ES': FIXTURE }, sentenceSilence: 0.2 });
    const cfg = await loadPiperConfig(`${FIXTURE}.json`);
    const text = 'Hola mundo, ¿qué tal? Bien.';
    const ids = (await phonemize(text, 'es', ctx)).map((s) => phonemeIds(s.phonemes, cfg).ids);
    const gap = Math.round(0.2 * 22050);
    const a = await engine.synthesize({ text, locale: 'es-ES', speed: 1, voice: DEFAULT_VOICE }, ctx);
    expect(a.sampleRate).toBe(22050);
    expect(a.channels[0]!.length).toBe(ids[0]!.length * HOP + gap + ids[1]!.length * HOP);
    const fast = await engine.synthesize({ text, locale: 'es-ES', speed: 2, voice: DEFAULT_VOICE }, ctx);
    expect(fast.channels[0]!.length).toBe(ids[0]!.length * (HOP / 2) + gap + ids[1]!.length * (HOP / 2));
    // the first id is BOS (1): a 107 Hz sine, so the first zero crossing after 0 is at 22050 / 214 samples
    const x = a.channels[0]!;
    let cross = 1;
    while (cross < HOP && Math.sign(x[cross]!) === Math.sign(x[1]!)) cross++;
    expect(Math.abs(cross - 22050 / 214)).toBeLessThan(2);
    await engine.dispose();
  });

  it('names the fetch command when a voice is not installed', async () => {
    const engine = createPiperEngine({ modelsDir: '/nonexistent-models' });
    const err = await engine.synthesize({ text: 'Hola', locale: 'es-ES', speed: 1, voice: DEFAULT_VOICE }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelMissingError);
    expect((err as ModelMissingError).modelId).toBe('piper-es_ES-davefx-medium');
    expect((err as Error).message).toContain('dub models fetch piper-es_ES-davefx-medium');
    expect(await engine.supportsLocale('es-ES')).toBe(false);
  });
});
