/**
 * espeak-ng's clause reader (ReadClause in libespeak-ng/readclause.c), for plain text: where
 * espeak-ng ends a clause and with which clause type. Piper (piper-phonemize) hands the whole
 * text to espeak_TextToPhonemesWithTerminator and gets one clause at a time with its type; the
 * espeak-ng command line prints the same clauses, one line each, but not their types. This module
 * finds the same boundaries and types in the text so the command line's lines can be paired with
 * them (piper-phonemes.ts checks that the counts agree).
 *
 * A clause ends at a punctuation character (Unicode clause punctuation: . , : ; ? ! and their
 * CJK, fullwidth, Arabic, Greek forms, dashes, ellipsis, inverted ¡ ¿) that is followed by
 * whitespace, a bracket or quote, or the end of the text, except:
 * - a run of punctuation counts as its first character ("?!" is a question);
 * - "..." (three or more dots) is an ellipsis;
 * - a "." followed by a lower-case word ("p.m. today", "e.g. this") or by "'s" ("U.S.A.'s")
 *   does not end the clause; in languages that write ordinals with a dot (de, da, fi, hu, nl,
 *   nb, sl, ...) neither does "3." before a lower-case word or a Roman numeral with its dot;
 * - punctuation before any letter or digit of the clause does not end it (a leading "¿", "...");
 * - dashes, ellipsis, inverted marks and CJK forms end a clause even without a space after them;
 * - a clause longer than 725 bytes is cut at the next character that is not a letter or digit.
 * "3.5", "1,200", "10:30" and "Dr.X" stay inside their clause: no space follows the punctuation.
 */

/** espeak-ng clause types (translate.h): pause, intonation and type bits. */
export const CLAUSE_INTONATION_TYPE = 0x00007000;
export const CLAUSE_OPTIONAL_SPACE_AFTER = 0x00008000;
export const CLAUSE_TYPE_SENTENCE = 0x00080000;
const CLAUSE_TYPE_CLAUSE = 0x00040000;
const CLAUSE_TYPE_EOF = 0x00010000;
const CLAUSE_SPEAK_PUNCTUATION_NAME = 0x00200000;
export const CLAUSE_NONE = 0x00004000;
export const CLAUSE_PERIOD = 40 | CLAUSE_TYPE_SENTENCE;
export const CLAUSE_COMMA = 20 | 0x00001000 | CLAUSE_TYPE_CLAUSE;
export const CLAUSE_QUESTION = 40 | 0x00002000 | CLAUSE_TYPE_SENTENCE;
export const CLAUSE_EXCLAMATION = 45 | 0x00003000 | CLAUSE_TYPE_SENTENCE;
export const CLAUSE_COLON = 30 | CLAUSE_TYPE_CLAUSE;
export const CLAUSE_SEMICOLON = 30 | 0x00001000 | CLAUSE_TYPE_CLAUSE;
export const CLAUSE_PARAGRAPH = 70 | CLAUSE_TYPE_SENTENCE;
export const CLAUSE_EOF = 40 | CLAUSE_TYPE_SENTENCE | CLAUSE_TYPE_EOF;

const OPT = CLAUSE_OPTIONAL_SPACE_AFTER;
const ELLIPSIS = CLAUSE_SEMICOLON | CLAUSE_SPEAK_PUNCTUATION_NAME | OPT;
const INVERTED = CLAUSE_SEMICOLON | OPT;

/** clause_type_from_codepoint for the punctuation of the scripts espeak-ng and Piper voices speak. */
const CLAUSE_TYPES = new Map<number, number>([
  [0x2e, CLAUSE_PERIOD], [0x2c, CLAUSE_COMMA], [0x3f, CLAUSE_QUESTION], [0x21, CLAUSE_EXCLAMATION],
  [0x3a, CLAUSE_COLON], [0x3b, CLAUSE_SEMICOLON],
  [0xa1, INVERTED], [0xbf, INVERTED],
  [0x37e, CLAUSE_QUESTION], [0x387, CLAUSE_SEMICOLON], // Greek question mark, ano teleia
  [0x589, CLAUSE_PERIOD | OPT], [0x55d, CLAUSE_COMMA], // Armenian
  [0x60c, CLAUSE_COMMA], [0x61b, CLAUSE_SEMICOLON], [0x61f, CLAUSE_QUESTION], [0x6d4, CLAUSE_PERIOD], // Arabic
  [0x964, CLAUSE_PERIOD | OPT], [0x965, CLAUSE_PARAGRAPH], // Devanagari danda
  [0x2013, CLAUSE_SEMICOLON], [0x2014, CLAUSE_SEMICOLON], [0x2e3a, CLAUSE_SEMICOLON], [0x2e3b, CLAUSE_SEMICOLON],
  [0x2026, ELLIPSIS], [0x22ee, ELLIPSIS], [0x22ef, ELLIPSIS], [0x22f0, ELLIPSIS], [0x22f1, ELLIPSIS],
  [0x203c, CLAUSE_EXCLAMATION], [0x2047, CLAUSE_QUESTION], [0x204f, CLAUSE_SEMICOLON], [0x2029, CLAUSE_PARAGRAPH],
  [0x2e32, CLAUSE_COMMA], [0x2e33, CLAUSE_PERIOD], [0x2e34, CLAUSE_COMMA], [0x2e35, CLAUSE_SEMICOLON], [0x2e3c, CLAUSE_PERIOD], [0x2e41, CLAUSE_COMMA],
  [0x3001, CLAUSE_COMMA | OPT], [0x3002, CLAUSE_PERIOD | OPT], // CJK
  [0xfe10, CLAUSE_COMMA], [0xfe11, CLAUSE_COMMA], [0xfe12, CLAUSE_PERIOD], [0xfe13, CLAUSE_COLON], [0xfe14, CLAUSE_SEMICOLON],
  [0xfe15, CLAUSE_EXCLAMATION], [0xfe16, CLAUSE_QUESTION], [0xfe19, ELLIPSIS], [0xfe31, CLAUSE_SEMICOLON], [0xfe32, CLAUSE_SEMICOLON],
  [0xfe50, CLAUSE_COMMA], [0xfe51, CLAUSE_COMMA], [0xfe52, CLAUSE_PERIOD], [0xfe54, CLAUSE_SEMICOLON], [0xfe55, CLAUSE_COLON],
  [0xfe56, CLAUSE_QUESTION], [0xfe57, CLAUSE_EXCLAMATION],
  [0xff01, CLAUSE_EXCLAMATION | OPT], [0xff0c, CLAUSE_COMMA | OPT], [0xff0e, CLAUSE_PERIOD | OPT], [0xff1a, CLAUSE_COLON | OPT],
  [0xff1b, CLAUSE_SEMICOLON | OPT], [0xff1f, CLAUSE_QUESTION | OPT], [0xff61, CLAUSE_PERIOD], [0xff64, CLAUSE_COMMA],
]);

/** Clause type of one character (CLAUSE_NONE for everything that is not clause punctuation). */
export function clauseType(ch: string | undefined): number {
  if (ch === undefined) return CLAUSE_NONE;
  return CLAUSE_TYPES.get(ch.codePointAt(0)!) ?? CLAUSE_NONE;
}

/** Languages whose translator sets NUM_ORDINAL_DOT (tr_languages.c). */
const ORDINAL_DOT_LANGUAGES = new Set(['da', 'de', 'fi', 'hu', 'kl', 'lt', 'lv', 'nl', 'nb', 'no', 'sl', 'smj']);
/** Characters espeak-ng ignores (chars_ignore_default): soft hyphen, zero-width non-joiner. */
const IGNORED = new Set(['\u00ad', '\u200c']);
const BRACKETS = new Set(['(', ')', '[', ']', '{', '}', '<', '>', '"', "'", '`', '\u00ab', '\u00bb', '\u300a', '\u300b']);

const isSpace = (c: string): boolean => /^\s$/u.test(c);
const isAlnum = (c: string): boolean => /^[\p{Alphabetic}\p{Nd}]$/u.test(c);
const isAlpha = (c: string): boolean => /^\p{Alphabetic}$/u.test(c);
const isDigit = (c: string): boolean => /^\p{Nd}$/u.test(c);
const isLower = (c: string): boolean => /^\p{Lowercase}$/u.test(c);
const isRomanU = (c: string): boolean => c === 'I' || c === 'V' || c === 'X' || c === 'L';
function isBracket(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return (cp >= 0x2014 && cp <= 0x201f) || BRACKETS.has(c);
}
const utf8Length = (c: string): number => {
  const cp = c.codePointAt(0)!;
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
};

/** espeak-ng's primary language of a voice name ("en-us" -> "en", "gmw/de" -> "de"). */
export function espeakLanguage(voice: string): string {
  const name = voice.slice(voice.lastIndexOf('/') + 1).toLowerCase();
  return name.split(/[-_+]/)[0] ?? name;
}

/**
 * The text as it is handed to espeak-ng: whitespace runs (newlines included) become one space,
 * control characters become spaces, "[[" (espeak-ng's phoneme-input brackets on its command line)
 * is split, and the ends are trimmed.
 */
export function normalizeForEspeak(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f]/gu, ' ')
    .replace(/\[(?=\[)/gu, '[ ')
    .replace(/\s+/gu, ' ')
    .trim();
}

export interface EspeakClause {
  /** The clause's source text with its ending punctuation (a closing quote after it opens the next clause, as in espeak-ng). */
  source: string;
  /** espeak-ng's clause type (CLAUSE_PERIOD, CLAUSE_COMMA, ..., CLAUSE_NONE for a cut long clause, CLAUSE_EOF at the end). */
  type: number;
}

const N_TR_SOURCE = 800;

/**
 * The clauses espeak-ng reads from `text` (already normalized with normalizeForEspeak), in order.
 * Linear in the length of the text.
 */
export function readClauses(text: string, espeakVoice: string): EspeakClause[] {
  const cps = Array.from(text);
  const n = cps.length;
  const ordinalDot = ORDINAL_DOT_LANGUAGES.has(espeakLanguage(espeakVoice));
  const out: EspeakClause[] = [];
  let i = 0;
  while (i < n && isSpace(cps[i]!)) i++;
  while (i < n) {
    const start = i;
    let bytes = 0;
    let anyAlnum = false;
    let cprev = ' ';
    let cprev2 = ' ';
    let type = CLAUSE_EOF;
    let next = n;
    while (i < n) {
      let c1 = cps[i]!;
      let j = i + 1; // index of c2
      if (IGNORED.has(c1)) {
        i = j;
        continue;
      }
      if (isAlnum(c1)) anyAlnum = true;
      if (c1 === '.' && cps[j] === '.') {
        let k = j;
        while (k < n && cps[k] === '.') k++;
        if (k - i >= 3) {
          c1 = '\u2026';
          j = k;
        }
      }
      const t = clauseType(c1);
      let end = false;
      if (t !== CLAUSE_NONE) {
        // a run of punctuation counts as its first character
        while (j < n && clauseType(cps[j]) !== CLAUSE_NONE) j++;
        const c2 = cps[j];
        end = c2 === undefined || isSpace(c2) || (t & OPT) !== 0 || isBracket(c2) || c2 === '?';
      }
      if (end) {
        let k = j;
        if (k < n && isSpace(cps[k]!)) while (k < n && isSpace(cps[k]!)) k++;
        const cNext = cps[k] ?? ' ';
        if (c1 === '.') {
          if (ordinalDot && (isDigit(cprev) || (isRomanU(cprev) && (isRomanU(cprev2) || isSpace(cprev2))))) {
            if (!isDigit(cprev)) end = false;
            else if (isLower(cNext) || cNext === '-') end = false;
          } else if (cNext === "'" && cps[k + 1] === 's') {
            end = false;
          }
          if (isLower(cNext)) end = false;
          if (!anyAlnum) {
            c1 = ' ';
            end = false;
          }
        } else if (!anyAlnum) {
          end = false;
        }
        if (end) {
          type = t;
          next = k;
          i = j;
          break;
        }
      }
      bytes += utf8Length(c1);
      cprev2 = cprev;
      cprev = c1;
      i = j;
      if ((bytes > N_TR_SOURCE - 75 && !isAlpha(c1) && !isDigit(c1)) || bytes >= N_TR_SOURCE - 4) {
        type = CLAUSE_NONE;
        next = j;
        break;
      }
    }
    out.push({ source: cps.slice(start, Math.min(i, n)).join('').trimEnd(), type });
    i = Math.min(next, n);
  }
  return out;
}

/** The punctuation Piper appends after a clause of this type (piper-phonemize phonemize.cpp). */
export function piperClausePunctuation(type: number): string {
  switch (type & 0x000fffff) {
    case CLAUSE_PERIOD:
      return '.';
    case CLAUSE_QUESTION:
      return '?';
    case CLAUSE_EXCLAMATION:
      return '!';
    case CLAUSE_COMMA:
      return ', ';
    case CLAUSE_COLON:
      return ': ';
    case CLAUSE_SEMICOLON:
      return '; ';
    default:
      return '';
  }
}

/** Whether Piper starts a new sentence after a clause of this type. */
export function endsSentence(type: number): boolean {
  return (type & CLAUSE_TYPE_SENTENCE) === CLAUSE_TYPE_SENTENCE;
}
