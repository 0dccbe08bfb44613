/**
 * Translation engines in the one registry shape of @dub/core (DUB_TRANSLATE_ENGINE, per pair
 * DUB_TRANSLATE_ENGINE_<SRC>_<TGT>), loaded lazily: importing @dub/translate loads no engine. Each
 * is built from its section of TranslateConfig. The engine of a pair comes from the configuration
 * (`engineForPair`, default `auto`: apertium or M2M100 per pair, auto.ts); whether it translates
 * the pair is the translator's own `supports(from, to)` (a dictionary, a model, an API key), asked
 * after it is created.
 */
import { ModelMissingError, defineEngineRegistry, resolveModelFile, type EngineHost, type EngineRegistry } from '@dub/core';
import type { BaseTranslatorOptions } from './base-translator.js';
import type { TranslateConfig } from './config.js';
import { CONCRETE_ENGINE_IDS, type EngineId } from './engine-ids.js';
import { M2M100_FILES, M2M100_MODEL_ID } from './engines/m2m100/files.js';
import { M2M100_GAPS, m2m100Code } from './engines/m2m100/languages.js';
import type { Translator } from './types.js';

const base = (c: TranslateConfig): BaseTranslatorOptions => ({ retry: { attempts: c.attempts }, ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}) });
const configured = (what: string) => () => ({ ok: true as const, reason: `${what}, when configured (its translator says whether it translates the pair)` });

export const TRANSLATE_ENGINES: EngineRegistry<Translator, TranslateConfig> = defineEngineRegistry<Translator, TranslateConfig>({
  stage: 'translation',
  envVar: 'DUB_TRANSLATE_ENGINE',
  ids: CONCRETE_ENGINE_IDS,
  // `auto` is the offline default (per pair: auto.ts); the services run only when named
  preference: ['apertium', 'm2m100'],
  entries: [
    { id: 'apertium', label: 'Apertium', weights: { models: ['apertium-data'] }, installHint: 'apt-get install apertium apertium-<pair>', supports: () => ({ ok: true, reason: 'the offline default' }), create: async (c) => (await import('./engines/apertium.js')).createApertiumTranslator({ ...base(c), ...c.apertium }) },
    {
      id: 'm2m100',
      label: 'M2M100 418M (q8, ONNX Runtime)',
      weights: { models: ['m2m100-418m'] },
      installHint: 'npx dub models fetch m2m100-418m',
      supports: (locale, env) => {
        if (locale && !m2m100Code(locale)) return { ok: false, reason: M2M100_GAPS[locale] ?? `M2M100 has no language for ${locale}` };
        try {
          return { ok: true, reason: 'the M2M100 model is installed', files: Object.values(M2M100_FILES).map((f) => resolveModelFile(M2M100_MODEL_ID, f, env.models)) };
        } catch (e) {
          return { ok: false, reason: 'the M2M100 model is not installed (npx dub models fetch m2m100-418m)', silent: true, ...(e instanceof ModelMissingError ? { error: e } : {}) };
        }
      },
      create: async (c) => (await import('./engines/m2m100/translator.js')).createM2M100Translator({ ...base(c), ...c.m2m100 }),
    },
    { id: 'openai-compatible', label: 'OpenAI-compatible service', weights: { service: 'the model of the service you configure' }, supports: configured('an OpenAI-compatible service'), create: async (c) => (await import('./engines/openai-compatible.js')).createOpenAiCompatibleTranslator({ ...base(c), ...c.openai }) },
    { id: 'deepl', label: 'DeepL', weights: { service: "DeepL's API, under your contract with DeepL" }, supports: configured('DeepL'), create: async (c) => (await import('./engines/deepl.js')).createDeeplTranslator({ ...base(c), ...c.deepl }) },
    { id: 'libretranslate', label: 'LibreTranslate', weights: { service: 'the LibreTranslate service you configure (its Argos models)' }, supports: configured('a LibreTranslate service'), create: async (c) => (await import('./engines/libretranslate.js')).createLibreTranslateTranslator({ ...base(c), ...c.libretranslate }) },
  ],
});

/** The host translation engines need: M2M100 finds its files through the resolver's default places (DUB_MODELS_DIR, models/). */
export const TRANSLATE_HOST: EngineHost = Object.freeze({ models: {} });

/** Build engine `id` from the configuration (`auto`: the per-pair chooser of auto.ts). */
export async function createTranslator(id: EngineId, config: TranslateConfig): Promise<Translator> {
  if (id === 'auto') return (await import('./auto.js')).createAutoTranslator((engine) => TRANSLATE_ENGINES.create(engine, config, TRANSLATE_HOST));
  return TRANSLATE_ENGINES.create(id, config, TRANSLATE_HOST);
}
