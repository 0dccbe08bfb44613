import { describe, expect, it } from 'vitest';
import { VersionError } from '@dub/core';
import { engineForPair, loadTranslateConfig, pairVariable } from './config.js';
import { createTranslator } from './registry.js';
import { translatorForPair } from './select-translator.js';
import { startFakeTranslationServer } from './testing/fake-translation-server.js';

describe('loadTranslateConfig', () => {
  it('defaults to auto (the offline engines per pair) with no pair overrides', () => {
    const c = loadTranslateConfig({});
    expect(c.defaultEngine).toBe('auto');
    expect(c.m2m100).toEqual({ model: 'm2m100-418m', modelsDir: undefined, device: 'cpu', threads: 0, beams: undefined });
    expect(c.pairEngines).toEqual({});
    expect(c.attempts).toBe(4);
    expect(c.apertium).toEqual({ bin: 'apertium', dataDir: undefined, pivot: 'spa' });
    expect(engineForPair(c, 'en-US', 'es-ES')).toEqual({ engine: 'auto', from: 'DUB_TRANSLATE_ENGINE' });
    const m = loadTranslateConfig({ DUB_TRANSLATE_M2M100_BEAMS: '2', DUB_DEVICE: 'cuda:1', DUB_ONNX_THREADS: '4', DUB_MODELS_DIR: '/srv/models' }).m2m100;
    expect(m).toEqual({ model: 'm2m100-418m', modelsDir: '/srv/models', device: 'cuda:1', threads: 4, beams: 2 });
    expect(() => loadTranslateConfig({ DUB_TRANSLATE_M2M100_BEAMS: '0' })).toThrow(/DUB_TRANSLATE_M2M100_BEAMS/);
  });

  it('reads pair overrides by language and every engine setting', () => {
    const c = loadTranslateConfig({
      DUB_TRANSLATE_ENGINE: 'libretranslate',
      DUB_TRANSLATE_ENGINE_EN_DE: 'deepl',
      DUB_TRANSLATE_ENGINE_YUE_EN: 'openai-compatible',
      DUB_TRANSLATE_TIMEOUT_MS: '5000',
      DUB_TRANSLATE_ATTEMPTS: '2',
      DUB_TRANSLATE_OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1',
      DUB_TRANSLATE_OPENAI_MODEL: 'qwen2.5',
      DUB_TRANSLATE_OPENAI_API_KEY: 'sk',
      DUB_TRANSLATE_OPENAI_JSON_MODE: 'false',
      DUB_TRANSLATE_DEEPL_API_KEY: 'k:fx',
      DUB_TRANSLATE_LIBRETRANSLATE_URL: 'http://lt:5000',
    });
    expect(c.pairEngines).toEqual({ en_de: 'deepl', yue_en: 'openai-compatible' });
    expect(engineForPair(c, 'en-US', 'de-DE')).toEqual({ engine: 'deepl', from: 'DUB_TRANSLATE_ENGINE_EN_DE' });
    expect(engineForPair(c, 'yue-CN', 'en-US').engine).toBe('openai-compatible');
    expect(engineForPair(c, 'en-US', 'fr-FR').engine).toBe('libretranslate');
    expect(c.timeoutMs).toBe(5000);
    expect(c.attempts).toBe(2);
    expect(c.openai).toMatchObject({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'qwen2.5', apiKey: 'sk', jsonMode: false });
    expect(c.deepl.apiKey).toBe('k:fx');
    expect(pairVariable('pt-BR', 'es-MX')).toBe('DUB_TRANSLATE_ENGINE_PT_ES');
  });

  it('rejects unknown engines and bad numbers naming the variable', () => {
    expect(() => loadTranslateConfig({ DUB_TRANSLATE_ENGINE: 'google' })).toThrow(/DUB_TRANSLATE_ENGINE="google" is not an engine: auto, apertium/);
    expect(() => loadTranslateConfig({ DUB_TRANSLATE_ENGINE_EN_DE: 'bing' })).toThrow(/DUB_TRANSLATE_ENGINE_EN_DE/);
    expect(() => loadTranslateConfig({ DUB_TRANSLATE_ATTEMPTS: '0' })).toThrow(/DUB_TRANSLATE_ATTEMPTS/);
  });
});

describe('translatorForPair', () => {
  it('gives apertium for en-US -> es-ES by default and it translates', async () => {
    const t = await translatorForPair(loadTranslateConfig({}), 'en-US', 'es-ES');
    expect(t.engine).toBe('apertium');
    const [out] = await t.translate({ sourceLocale: 'en-US', targetLocale: 'es-ES', segments: [{ id: '1', text: 'Thank you very much.' }] });
    expect(out!.text.toLowerCase()).toContain('gracias');
  });

  it('throws unsupported_language_pair naming the variable to set and the model to fetch', async () => {
    // an M2M100 id that is nowhere, so the answer does not depend on what this host fetched
    const c = loadTranslateConfig({ DUB_TRANSLATE_M2M100_MODEL: 'm2m100-absent-test' });
    const err = await translatorForPair(c, 'en-US', 'de-DE').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VersionError);
    expect(err).toMatchObject({ code: 'unsupported_language_pair', retryable: false, details: { setting: 'DUB_TRANSLATE_ENGINE_EN_DE', engine: 'auto' } });
    expect((err as Error).message).toContain('DUB_TRANSLATE_ENGINE_EN_DE');
    expect((err as Error).message).toContain('npx dub models fetch m2m100-absent-test');
  });

  it('treats a selected but unconfigured HTTP engine as unsupported, naming its variable', async () => {
    const err = await translatorForPair(loadTranslateConfig({ DUB_TRANSLATE_ENGINE_EN_DE: 'deepl' }), 'en-US', 'de-DE').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unsupported_language_pair' });
    expect((err as Error).message).toContain('DUB_TRANSLATE_DEEPL_API_KEY');
  });

  it('routes a pair to the engine its variable names', async () => {
    const server = await startFakeTranslationServer();
    try {
      const config = loadTranslateConfig({ DUB_TRANSLATE_ENGINE_EN_DE: 'deepl', DUB_TRANSLATE_DEEPL_API_KEY: 'k', DUB_TRANSLATE_DEEPL_URL: server.url });
      const t = await translatorForPair(config, 'en-US', 'de-DE');
      expect(t.engine).toBe('deepl');
      expect(await t.translate({ sourceLocale: 'en-US', targetLocale: 'de-DE', segments: [{ id: 'a', text: 'Hello' }] })).toEqual([{ id: 'a', text: '[de] Hello' }]);
    } finally {
      await server.close();
    }
  });

  it('builds every registered engine lazily', async () => {
    const c = loadTranslateConfig({});
    for (const id of ['auto', 'apertium', 'm2m100', 'openai-compatible', 'deepl', 'libretranslate'] as const) expect((await createTranslator(id, c)).engine).toBe(id);
  });
});
