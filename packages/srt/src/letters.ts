/**
 * The letters a language is written with, to tell apart two readings of a legacy-encoded file
 * that chardet cannot: a French file in windows-1252 read as ISO-8859-2 turns "très" into "trčs"
 * and "à" into "ŕ", letters French does not use.
 *
 * Latin-script languages: the non-ASCII letters of the Unicode CLDR main exemplar character set
 * of the language (https://github.com/unicode-org/cldr, common/main/<lang>.xml,
 * `exemplarCharacters`), lowercase; Romanian also with the cedilla forms ş ţ that files from
 * before Unicode use. Other scripts: the script itself (a reading in the wrong script fails).
 * Languages not listed (Vietnamese, written with combining marks) give no verdict.
 */

const LATIN_EXTRA: Record<string, string> = {
  en: '',
  id: '',
  ms: '',
  fil: 'ñ',
  es: 'áéíñóúü',
  fr: 'àâæçéèêëîïôœùûüÿ',
  de: 'äöüß',
  it: 'àèéìòóù',
  pt: 'áàâãçéêíóôõú',
  nl: 'áäéëíïóöúü',
  da: 'åæø',
  nb: 'åæøéóòô',
  sv: 'åäöéà',
  fi: 'åäöšž',
  ro: 'ăâîșțşţ',
  pl: 'ąćęłńóśźż',
  cs: 'áčďéěíňóřšťúůýž',
  sk: 'áäčďéíĺľňóôŕšťúýž',
  hu: 'áéíóöőúüű',
  hr: 'čćđšž',
  lt: 'ąčęėįšųūž',
  tr: 'çğıöşüâîû',
};

const SCRIPT: Record<string, RegExp> = {
  ru: /\p{Script=Cyrillic}/u,
  uk: /\p{Script=Cyrillic}/u,
  bg: /\p{Script=Cyrillic}/u,
  el: /\p{Script=Greek}/u,
  ar: /\p{Script=Arabic}/u,
  ur: /\p{Script=Arabic}/u,
  he: /\p{Script=Hebrew}/u,
  hi: /\p{Script=Devanagari}/u,
  ta: /\p{Script=Tamil}/u,
  th: /\p{Script=Thai}/u,
  zh: /\p{Script=Han}/u,
  yue: /\p{Script=Han}/u,
  ja: /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]/u,
  ko: /[\p{Script=Hangul}\p{Script=Han}]/u,
};

/** The legacy encodings files in a language were commonly saved in (Windows and ISO code pages, national standards). */
const LEGACY: Record<string, string[]> = {
  ...Object.fromEntries(['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'da', 'nb', 'sv', 'fi', 'id', 'ms', 'fil'].map((l) => [l, ['windows-1252', 'iso-8859-15']])),
  ...Object.fromEntries(['pl', 'cs', 'sk', 'hu', 'hr'].map((l) => [l, ['windows-1250', 'iso-8859-2']])),
  ro: ['windows-1250', 'iso-8859-2', 'iso-8859-16'],
  lt: ['windows-1257', 'iso-8859-13'],
  tr: ['windows-1254', 'iso-8859-9'],
  ru: ['windows-1251', 'koi8-r', 'iso-8859-5'],
  bg: ['windows-1251', 'iso-8859-5'],
  uk: ['windows-1251', 'koi8-u'],
  el: ['windows-1253', 'iso-8859-7'],
  he: ['windows-1255', 'iso-8859-8'],
  ar: ['windows-1256', 'iso-8859-6'],
  ur: ['windows-1256'],
  th: ['windows-874'],
  vi: ['windows-1258'],
  zh: ['gb18030', 'big5'],
  yue: ['big5', 'gb18030'],
  ja: ['shift_jis', 'euc-jp'],
  ko: ['euc-kr'],
};

/** The legacy encodings (TextDecoder labels) to try for text in `language`; empty when unknown. */
export function legacyEncodings(language: string): string[] {
  return LEGACY[languageOf(language)] ?? [];
}

/** Cased scripts whose words never have a small letter right before a capital (a reading in the wrong code page swaps cases: KOI8-R vs windows-1251). */
const CASED_SCRIPT = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

/** The language part of a locale or language code ("fr-FR" -> "fr", "nb-NO" -> "nb", "no" -> "nb"). */
function languageOf(language: string): string {
  const l = language.toLowerCase().split(/[-_]/)[0] ?? '';
  return l === 'no' ? 'nb' : l;
}

/** Whether `language` (a locale or code) has a letter table here. */
export function knowsLetters(language: string): boolean {
  const l = languageOf(language);
  return l in LATIN_EXTRA || l in SCRIPT;
}

/**
 * Whether every letter of `text` is one `language` is written with (ASCII letters always pass;
 * marks are ignored after NFC). Undefined when the language has no table here.
 */
export function fitsLanguage(text: string, language: string): boolean | undefined {
  const l = languageOf(language);
  const extra = LATIN_EXTRA[l];
  const script = SCRIPT[l];
  if (extra === undefined && !script) return undefined;
  const nfc = text.normalize('NFC');
  if (script && /\p{Script=Cyrillic}|\p{Script=Greek}/u.test(nfc)) {
    let prev = '';
    for (const ch of nfc) {
      if (CASED_SCRIPT.test(ch) && CASED_SCRIPT.test(prev) && /\p{Ll}/u.test(prev) && /\p{Lu}/u.test(ch)) return false;
      prev = ch;
    }
  }
  for (const ch of nfc) {
    if (ch < '\u0080' || !/\p{L}/u.test(ch)) continue;
    if (script) {
      if (!script.test(ch)) return false;
      continue;
    }
    const lower = ch === 'İ' ? 'i' : ch.toLowerCase();
    if (lower < '\u0080') continue;
    if (!extra!.includes(lower)) return false;
  }
  return true;
}
