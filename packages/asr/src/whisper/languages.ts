/** Languages of multilingual Whisper models, and the contract locale -> Whisper language code map. */
import { getLocale } from '@dub/core';

export const WHISPER_LANGUAGES: readonly string[] = [
  'en', 'zh', 'de', 'es', 'ru', 'ko', 'fr', 'ja', 'pt', 'tr', 'pl', 'ca', 'nl', 'ar', 'sv', 'it', 'id', 'hi', 'fi', 'vi', 'he', 'uk', 'el', 'ms', 'cs',
  'ro', 'da', 'hu', 'ta', 'no', 'th', 'ur', 'hr', 'bg', 'lt', 'la', 'mi', 'ml', 'cy', 'sk', 'te', 'fa', 'lv', 'bn', 'sr', 'az', 'sl', 'kn', 'et', 'mk',
  'br', 'eu', 'is', 'hy', 'ne', 'mn', 'bs', 'kk', 'sq', 'sw', 'gl', 'mr', 'pa', 'si', 'km', 'sn', 'yo', 'so', 'af', 'oc', 'ka', 'be', 'tg', 'sd', 'gu',
  'am', 'yi', 'lo', 'uz', 'fo', 'ht', 'ps', 'tk', 'nn', 'mt', 'sa', 'lb', 'my', 'bo', 'tl', 'mg', 'as', 'tt', 'haw', 'ln', 'ha', 'ba', 'jw', 'su', 'yue',
];

/** Whisper's code for a contract locale: nb -> no, Filipino -> tl; Cantonese is `yue` (large-v3) else `zh`. */
export function whisperLanguageOf(locale: string, available?: ReadonlyMap<string, number>): string | undefined {
  const info = getLocale(locale);
  const base = info ? info.iso639_1 || info.iso639_3 : locale.split('-')[0]!.toLowerCase();
  const mapped = base === 'nb' ? 'no' : base === 'fil' ? 'tl' : base;
  const has = (c: string) => (available ? available.has(c) : WHISPER_LANGUAGES.includes(c));
  if (has(mapped)) return mapped;
  if (mapped === 'yue' && has('zh')) return 'zh';
  return undefined;
}
