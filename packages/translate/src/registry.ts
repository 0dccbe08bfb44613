/**
 * Engines by id, loaded lazily (importing @dub/translate loads no engine), each built from its
 * section of TranslateConfig.
 */
import type { BaseTranslatorOptions } from './base-translator.js';
import type { TranslateConfig } from './config.js';
import type { EngineId } from './engine-ids.js';
import type { Translator } from './types.js';

type Factory = (config: TranslateConfig, base: BaseTranslatorOptions) => Promise<Translator>;

export const TRANSLATOR_REGISTRY: Record<EngineId, Factory> = {
  apertium: async (c, base) => (await import('./engines/apertium.js')).createApertiumTranslator({ ...base, ...c.apertium }),
  'openai-compatible': async (c, base) => (await import('./engines/openai-compatible.js')).createOpenAiCompatibleTranslator({ ...base, ...c.openai }),
  deepl: async (c, base) => (await import('./engines/deepl.js')).createDeeplTranslator({ ...base, ...c.deepl }),
  libretranslate: async (c, base) => (await import('./engines/libretranslate.js')).createLibreTranslateTranslator({ ...base, ...c.libretranslate }),
};

/** Build engine `id` from the configuration. */
export function createTranslator(id: EngineId, config: TranslateConfig): Promise<Translator> {
  const base: BaseTranslatorOptions = { retry: { attempts: config.attempts }, ...(config.timeoutMs ? { timeoutMs: config.timeoutMs } : {}) };
  return TRANSLATOR_REGISTRY[id](config, base);
}
