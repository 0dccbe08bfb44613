/**
 * The translator for a locale pair: the configured engine if it can translate the pair, else
 * VersionError('unsupported_language_pair') naming the variable to set. For `auto` (the default)
 * the engine auto.ts chooses for the pair is returned, so the record names the engine that runs.
 */
import { VersionError } from '@dub/core';
import type { AutoTranslator } from './auto.js';
import { engineForPair, pairVariable, type TranslateConfig } from './config.js';
import { ENGINE_IDS, type ConcreteEngineId } from './engine-ids.js';
import { createTranslator, entryPairSupport } from './registry.js';
import type { PairSupport, Translator } from './types.js';

/** The engine that serves a pair as configured, with its support and (for auto) why it was chosen. */
export async function pairEngine(config: TranslateConfig, sourceLocale: string, targetLocale: string): Promise<{ engine: ConcreteEngineId; from: string; auto: boolean; translator: Translator; support: PairSupport; reason?: string }> {
  const { engine, from } = engineForPair(config, sourceLocale, targetLocale);
  if (engine === 'auto') {
    const c = await (createTranslator('auto', config) as Promise<AutoTranslator>).then((a) => a.choose(sourceLocale, targetLocale));
    return { engine: c.engine, from, auto: true, translator: c.translator, support: c.support, reason: c.reason };
  }
  const s = await entryPairSupport(engine, sourceLocale, targetLocale, config);
  const support: PairSupport = s.ok ? { supported: true } : { supported: false, reason: s.reason, ...(s.fix ? { fix: s.fix } : {}) };
  return { engine, from, auto: false, translator: await createTranslator(engine, config), support };
}

export async function translatorForPair(config: TranslateConfig, sourceLocale: string, targetLocale: string): Promise<Translator & { id: ConcreteEngineId }> {
  const p = await pairEngine(config, sourceLocale, targetLocale);
  if (p.support.supported) return p.translator as Translator & { id: ConcreteEngineId };
  const setting = pairVariable(sourceLocale, targetLocale);
  const engine = p.auto ? 'auto' : p.engine;
  throw new VersionError(
    'unsupported_language_pair',
    `no translation engine for ${sourceLocale} -> ${targetLocale}: engine "${engine}" (from ${p.from}) cannot translate it: ${p.support.reason ?? 'unsupported'}. ` +
      (p.support.fix ? `To fix: ${p.support.fix}; or set ` : 'Set ') +
      `${setting} to one of ${ENGINE_IDS.filter((e) => e !== 'auto').join(', ')} together with that engine's settings (see the @dub/translate README), or give the language a reference srt.`,
    { details: { engine, source: sourceLocale, target: targetLocale, setting } },
  );
}
