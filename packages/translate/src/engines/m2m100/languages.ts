/**
 * M2M100's languages and the contract locales they serve.
 *
 * M2M100_LANGUAGES is FAIRSEQ_LANGUAGE_CODES["m2m100"] of transformers' tokenization_m2m_100.py
 * (https://github.com/huggingface/transformers/blob/main/src/transformers/models/m2m_100/tokenization_m2m_100.py),
 * in its order: the token `__xx__` of the i-th code has id len(vocab.json) + i (128,004 + i in the
 * real model, e.g. __en__ = 128,022).
 */
import { getLocale } from '@dub/core';

// prettier-ignore
export const M2M100_LANGUAGES = ['af', 'am', 'ar', 'ast', 'az', 'ba', 'be', 'bg', 'bn', 'br', 'bs', 'ca', 'ceb', 'cs', 'cy', 'da', 'de', 'el', 'en', 'es', 'et', 'fa', 'ff', 'fi', 'fr', 'fy', 'ga', 'gd', 'gl', 'gu', 'ha', 'he', 'hi', 'hr', 'ht', 'hu', 'hy', 'id', 'ig', 'ilo', 'is', 'it', 'ja', 'jv', 'ka', 'kk', 'km', 'kn', 'ko', 'lb', 'lg', 'ln', 'lo', 'lt', 'lv', 'mg', 'mk', 'ml', 'mn', 'mr', 'ms', 'my', 'ne', 'nl', 'no', 'ns', 'oc', 'or', 'pa', 'pl', 'ps', 'pt', 'ro', 'ru', 'sd', 'si', 'sk', 'sl', 'so', 'sq', 'sr', 'ss', 'su', 'sv', 'sw', 'ta', 'th', 'tl', 'tn', 'tr', 'uk', 'ur', 'uz', 'vi', 'wo', 'xh', 'yi', 'yo', 'zh', 'zu'] as const;

/**
 * Contract locales whose language is not M2M100's code of the same spelling, and what the model
 * offers instead (undefined: nothing honest).
 * - fil-PH -> tl: Filipino is the standardised register of Tagalog; M2M100 trained on Tagalog text.
 * - nb-NO -> no: M2M100's "no" is Norwegian as written in its data (overwhelmingly Bokmål).
 * - yue-CN: none. M2M100's "zh" is written (Mandarin) Chinese; its output is not Cantonese.
 */
const SPECIAL: Record<string, string | undefined> = { 'fil-PH': 'tl', 'nb-NO': 'no', 'yue-CN': undefined };

/** Why a locale has no M2M100 language, for `supports()`. */
export const M2M100_GAPS: Record<string, string> = {
  'yue-CN': "M2M100 has no Cantonese: its Chinese (zh) is written Mandarin, so a Cantonese line would come out in Mandarin",
};

/** The M2M100 language code of a contract locale, or undefined where the model has none. */
export function m2m100Code(locale: string): string | undefined {
  if (locale in SPECIAL) return SPECIAL[locale];
  const l = getLocale(locale);
  const code = l?.iso639_1;
  return code && (M2M100_LANGUAGES as readonly string[]).includes(code) ? code : undefined;
}
