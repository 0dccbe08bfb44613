/**
 * The locale table of the interface contract (39 rows) with source/target support, plus the
 * language data engines need.
 */

export type Script = 'Latn' | 'Arab' | 'Cyrl' | 'Hans' | 'Hant' | 'Grek' | 'Hebr' | 'Deva' | 'Jpan' | 'Kore' | 'Taml' | 'Thai';

export interface LocaleInfo {
  /** Locale code exactly as the contract spells it, e.g. "en-US", "yue-CN". */
  code: string;
  /** English name of the language as in the contract. */
  name: string;
  /** Accepted as the asset's source locale. */
  source: boolean;
  /** Accepted as a target locale. */
  target: boolean;
  /** ISO 639-1 code where one exists ("" for Cantonese and Filipino, which only have 639-3). */
  iso639_1: string;
  /** ISO 639-3 code. */
  iso639_3: string;
  /** ISO 15924 script of ordinary text. */
  script: Script;
  /** Whether words are separated by spaces (false for Chinese, Japanese, Thai, Cantonese). */
  spaceSeparated: boolean;
  /** Right-to-left script. */
  rtl: boolean;
  /** espeak-ng voice that speaks this language. */
  espeakVoice: string;
}

const L = (
  code: string, name: string, source: boolean, target: boolean, iso639_1: string, iso639_3: string,
  script: Script, spaceSeparated: boolean, espeakVoice: string, rtl = false,
): LocaleInfo => ({ code, name, source, target, iso639_1, iso639_3, script, spaceSeparated, rtl, espeakVoice });

export const LOCALES: readonly LocaleInfo[] = Object.freeze([
  L('ar-AE', 'Arabic', true, true, 'ar', 'ara', 'Arab', true, 'ar', true),
  L('bg-BG', 'Bulgarian', true, true, 'bg', 'bul', 'Cyrl', true, 'bg'),
  L('yue-CN', 'Cantonese', true, true, '', 'yue', 'Hant', false, 'yue'),
  L('zh-CN', 'Chinese', true, true, 'zh', 'cmn', 'Hans', false, 'cmn'),
  L('hr-HR', 'Croatian', true, true, 'hr', 'hrv', 'Latn', true, 'hr'),
  L('cs-CZ', 'Czech', true, true, 'cs', 'ces', 'Latn', true, 'cs'),
  L('da-DK', 'Danish', true, true, 'da', 'dan', 'Latn', true, 'da'),
  L('nl-NL', 'Dutch', true, true, 'nl', 'nld', 'Latn', true, 'nl'),
  L('en-US', 'English', true, true, 'en', 'eng', 'Latn', true, 'en-us'),
  L('fil-PH', 'Filipino', true, true, '', 'fil', 'Latn', true, 'en-us'),
  L('fi-FI', 'Finnish', true, true, 'fi', 'fin', 'Latn', true, 'fi'),
  L('fr-FR', 'French', true, true, 'fr', 'fra', 'Latn', true, 'fr-fr'),
  L('de-DE', 'German', true, true, 'de', 'deu', 'Latn', true, 'de'),
  L('el-GR', 'Greek', true, true, 'el', 'ell', 'Grek', true, 'el'),
  L('he-IL', 'Hebrew', true, false, 'he', 'heb', 'Hebr', true, 'he', true),
  L('hi-IN', 'Hindi', true, true, 'hi', 'hin', 'Deva', true, 'hi'),
  L('hu-HU', 'Hungarian', true, true, 'hu', 'hun', 'Latn', true, 'hu'),
  L('id-ID', 'Indonesian', true, true, 'id', 'ind', 'Latn', true, 'id'),
  L('it-IT', 'Italian', true, true, 'it', 'ita', 'Latn', true, 'it'),
  L('ja-JP', 'Japanese', true, true, 'ja', 'jpn', 'Jpan', false, 'ja'),
  L('ko-KR', 'Korean', true, true, 'ko', 'kor', 'Kore', true, 'ko'),
  L('lt-LT', 'Lithuanian', true, true, 'lt', 'lit', 'Latn', true, 'lt'),
  L('ms-MY', 'Malay', true, true, 'ms', 'msa', 'Latn', true, 'ms'),
  L('nb-NO', 'Norwegian', true, true, 'nb', 'nob', 'Latn', true, 'nb'),
  L('pl-PL', 'Polish', true, true, 'pl', 'pol', 'Latn', true, 'pl'),
  L('pt-BR', 'Portuguese (Brazil)', true, true, 'pt', 'por', 'Latn', true, 'pt-br'),
  L('pt-PT', 'Portuguese (Portugal)', true, true, 'pt', 'por', 'Latn', true, 'pt'),
  L('ro-RO', 'Romanian', true, true, 'ro', 'ron', 'Latn', true, 'ro'),
  L('ru-RU', 'Russian', true, true, 'ru', 'rus', 'Cyrl', true, 'ru'),
  L('sk-SK', 'Slovak', true, true, 'sk', 'slk', 'Latn', true, 'sk'),
  L('es-ES', 'Spanish (Spain)', true, true, 'es', 'spa', 'Latn', true, 'es'),
  L('es-MX', 'Spanish (Mexico)', true, true, 'es', 'spa', 'Latn', true, 'es-419'),
  L('sv-SE', 'Swedish', true, true, 'sv', 'swe', 'Latn', true, 'sv'),
  L('ta-IN', 'Tamil', true, true, 'ta', 'tam', 'Taml', true, 'ta'),
  L('th-TH', 'Thai', false, true, 'th', 'tha', 'Thai', false, 'th'),
  L('tr-TR', 'Turkish', true, true, 'tr', 'tur', 'Latn', true, 'tr'),
  L('uk-UA', 'Ukrainian', true, true, 'uk', 'ukr', 'Cyrl', true, 'uk'),
  L('ur-IN', 'Urdu', true, false, 'ur', 'urd', 'Arab', true, 'ur', true),
  L('vi-VN', 'Vietnamese', true, true, 'vi', 'vie', 'Latn', true, 'vi'),
]);

const BY_CODE = new Map(LOCALES.map((l) => [l.code, l]));

/** Look up a locale by its exact contract code. Codes are case-sensitive as in the contract. */
export function getLocale(code: string): LocaleInfo | undefined {
  return BY_CODE.get(code);
}

export function isSourceLocale(code: string): boolean {
  return BY_CODE.get(code)?.source === true;
}

export function isTargetLocale(code: string): boolean {
  return BY_CODE.get(code)?.target === true;
}

export const SOURCE_LOCALES: readonly string[] = LOCALES.filter((l) => l.source).map((l) => l.code);
export const TARGET_LOCALES: readonly string[] = LOCALES.filter((l) => l.target).map((l) => l.code);

/** The language part used by engines: ISO 639-1 where it exists, else ISO 639-3. */
export function languageOf(code: string): string {
  const l = BY_CODE.get(code);
  if (!l) return code.split('-')[0]!.toLowerCase();
  return l.iso639_1 || l.iso639_3;
}
