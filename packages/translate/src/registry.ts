/**
 * Translation engines in the one registry shape of @dub/core (DUB_TRANSLATE_ENGINE, per pair
 * DUB_TRANSLATE_ENGINE_<SRC>_<TGT>), loaded lazily: importing @dub/translate loads no engine. Each
 * is built from its section of TranslateConfig. The engine of a pair comes from the configuration
 * (`engineForPair`, default apertium); whether it translates the pair is the translator's own
 * `supports(from, to)` (a dictionary, an API key), asked after it is created.
 */
import { defineEngineRegistry, type EngineHost, type EngineRegistry } from '@dub/core';
import type { BaseTranslatorOptions } from './base-translator.js';
import type { TranslateConfig } from './config.js';
import type { EngineId } from './engine-ids.js';
import type { Translator } from './types.js';

const base = (c: TranslateConfig): BaseTranslatorOptions => ({ retry: { attempts: c.attempts }, ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}) });
const configured = (what: string) => () => ({ ok: true as const, reason: `${what}, when configured (its translator says whether it translates the pair)` });

export const TRANSLATE_ENGINES: EngineRegistry<Translator, TranslateConfig> = defineEngineRegistry<Translator, TranslateConfig>({
  stage: 'translation',
  envVar: 'DUB_TRANSLATE_ENGINE',
  // `auto` is the offline default; the services run only when named
  preference: ['apertium'],
  entries: [
    { id: 'apertium', label: 'Apertium', weights: { models: ['apertium-data'] }, installHint: 'apt-get install apertium apertium-<pair>', supports: () => ({ ok: true, reason: 'the offline default' }), create: async (c) => (await import('./engines/apertium.js')).createApertiumTranslator({ ...base(c), ...c.apertium }) },
    { id: 'openai-compatible', label: 'OpenAI-compatible service', weights: { service: 'the model of the service you configure' }, supports: configured('an OpenAI-compatible service'), create: async (c) => (await import('./engines/openai-compatible.js')).createOpenAiCompatibleTranslator({ ...base(c), ...c.openai }) },
    { id: 'deepl', label: 'DeepL', weights: { service: "DeepL's API, under your contract with DeepL" }, supports: configured('DeepL'), create: async (c) => (await import('./engines/deepl.js')).createDeeplTranslator({ ...base(c), ...c.deepl }) },
    { id: 'libretranslate', label: 'LibreTranslate', weights: { service: 'the LibreTranslate service you configure (its Argos models)' }, supports: configured('a LibreTranslate service'), create: async (c) => (await import('./engines/libretranslate.js')).createLibreTranslateTranslator({ ...base(c), ...c.libretranslate }) },
  ],
});

/** The host translation engines need: none of them loads a model file through the resolver. */
export const TRANSLATE_HOST: EngineHost = Object.freeze({ models: {} });

/** Build engine `id` from the configuration. */
export function createTranslator(id: EngineId, config: TranslateConfig): Promise<Translator> {
  return TRANSLATE_ENGINES.create(id, config, TRANSLATE_HOST);
}
