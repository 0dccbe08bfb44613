/**
 * Same-language pairs (en-US -> en-US, es-ES -> es-MX, pt-BR -> pt-PT): the contract allows any
 * source locale with any target locale, and a same-language dub is a real use (a new voice, an
 * anonymized voice, a library narrator), so such a pair is not refused: the transcript is the
 * script, untranslated, and the translation record says so. Where the locales differ in region and
 * the pair's engine has a direction between them (an LLM, DeepL), that engine adapts the text.
 * Never through a pivot language and back.
 */
import { getLocale, languageOf } from '@dub/core';
import type { TranslateConfig } from './config.js';
import { pairEngine } from './select-translator.js';

/** Whether two contract locales are the same language (their ISO 639 code), whatever the region. */
export function isSameLanguage(sourceLocale: string, targetLocale: string): boolean {
  if (!getLocale(sourceLocale) || !getLocale(targetLocale)) return false;
  return languageOf(sourceLocale) === languageOf(targetLocale);
}

/**
 * Why a pair is passed through untranslated (the translation record's reason), or undefined when
 * it is translated: the same locale always passes through; the same language in another region
 * passes through only when the pair's engine has no direction between them.
 */
export async function passThroughReason(config: TranslateConfig, sourceLocale: string, targetLocale: string): Promise<string | undefined> {
  if (!isSameLanguage(sourceLocale, targetLocale)) return undefined;
  if (sourceLocale === targetLocale) return `${sourceLocale} -> ${targetLocale} is one language: the transcript is the script (no translation)`;
  // the engine that would serve the pair (for `auto`: the one it chooses, apertium when none serves it)
  const { engine, support } = await pairEngine(config, sourceLocale, targetLocale);
  if (support.supported) return undefined;
  return `${sourceLocale} and ${targetLocale} are one language and ${engine} has no ${sourceLocale} -> ${targetLocale} direction: the transcript is the script, not adapted to ${targetLocale}`;
}
