/**
 * The translator for a locale pair: the configured engine if it can translate the pair, else
 * VersionError('unsupported_language_pair') naming the variable to set.
 */
import { VersionError } from '@dub/core';
import { engineForPair, pairVariable, type TranslateConfig } from './config.js';
import { ENGINE_IDS, type EngineId } from './engine-ids.js';
import { createTranslator } from './registry.js';
import type { Translator } from './types.js';

export async function translatorForPair(config: TranslateConfig, sourceLocale: string, targetLocale: string): Promise<Translator & { engine: EngineId }> {
  const { engine, from } = engineForPair(config, sourceLocale, targetLocale);
  const translator = await createTranslator(engine, config);
  const support = await translator.supports(sourceLocale, targetLocale);
  if (support.supported) return translator as Translator & { engine: EngineId };
  const setting = pairVariable(sourceLocale, targetLocale);
  throw new VersionError(
    'unsupported_language_pair',
    `no translation engine for ${sourceLocale} -> ${targetLocale}: engine "${engine}" (from ${from}) cannot translate it: ${support.reason ?? 'unsupported'}. ` +
      (support.fix ? `To fix: ${support.fix}; or set ` : 'Set ') +
      `${setting} to one of ${ENGINE_IDS.join(', ')} together with that engine's settings (see the @dub/translate README), or give the language a reference srt.`,
    { details: { engine, source: sourceLocale, target: targetLocale, setting } },
  );
}
