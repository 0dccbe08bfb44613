/**
 * Kokoro's text front end: text -> espeak-ng IPA -> Kokoro's phoneme symbols -> ids.
 *
 * Kokoro-82M v1.0 reads phoneme symbols (tokenizer.json: one id per IPA symbol, "$" = 0 around
 * them). Its own pipeline (hexgrad/kokoro KPipeline) phonemizes each language as follows, and this
 * module does the same with the installed espeak-ng (command line, one line of IPA per clause):
 *
 * - en-US ("a"): espeak-ng `en-us` IPA with the post-processing of hexgrad's JavaScript reference,
 *   kokoro.js `src/phonemize.js` (Kokoro v0.19's own `phonemize()`): "r" -> "ɹ", "x" -> "k",
 *   "ʲ" -> "j", "ɬ" -> "l", "kəkˈoːɹoʊ" -> "kˈoʊkəɹoʊ", a space before "hˈʌndɹɪd", " z" before
 *   punctuation joined, and "nˈaɪnti" -> "nˈaɪndi". (The Python pipeline reads English through
 *   misaki's lexicon, which is not on these machines; kokoro.js reads it with espeak-ng as here.)
 * - es, fr, hi, it, pt-BR ("e", "f", "h", "i", "p"): misaki's `EspeakG2P` (misaki/espeak.py,
 *   version None, the one KPipeline builds for Kokoro-82M): espeak-ng IPA with "^" as the tie
 *   character, then the tied pairs mapped to Kokoro's single symbols (a^ɪ I, a^ʊ W, d^z ʣ, d^ʒ ʤ,
 *   e^ɪ A, o^ʊ O, ə^ʊ Q, s^s S, t^s ʦ, t^ʃ ʧ, ɔ^ɪ Y), the remaining ties and hyphens deleted,
 *   espeak-ng's language-switch flags removed ("remove-flags").
 * - pt-PT ("p"): not in Kokoro's pipeline (it has no European Portuguese voice): the pt-BR voices
 *   read espeak-ng's European Portuguese voice `pt` through the same EspeakG2P mapping, and every
 *   record says so (KOKORO_PT_PT_NOTE; measured in bench/pt-pt-voice.mjs).
 * - ja, zh: Kokoro's pipeline uses misaki's own front ends (ja: pyopenjtalk/cutlet with a
 *   dictionary, kana to Kokoro's symbols; zh: jieba + pypinyin with tone arrows), which need
 *   dictionaries that are not ported here; espeak-ng reads kanji and hanzi poorly (it spells
 *   Japanese kanji out as "Chinese letter"), so the engine refuses those languages with that reason.
 *
 * Clauses are found with espeak-ng's own rules (espeak-clauses.ts, as for Piper); each clause's
 * phonemes are followed by its punctuation mark (. , ? ! : ; — …) and clauses are joined by one
 * space, which is what phonemizer (preserve_punctuation) gives the reference pipelines: for
 * "How could I know? It's an unanswerable question. ..." this gives exactly the ids hexgrad
 * published for Kokoro's ONNX usage (kokoro-text.test.ts).
 */
import { getLocale, ValidationError, type StageContext } from '@dub/core';
import { runProcess } from '@dub/media';
import { normalizeForEspeak, readClauses, type EspeakClause } from './espeak-clauses.js';
import { stripLanguageFlags } from './piper-phonemes.js';

/** Kokoro's language code per contract locale, with the espeak-ng voice that phonemizes it. */
export interface KokoroLanguage {
  /** KPipeline's lang_code: a (American English), e (Spanish), f (French), h (Hindi), i (Italian), p (Brazilian Portuguese). */
  code: 'a' | 'e' | 'f' | 'h' | 'i' | 'p';
  /** The espeak-ng voice whose IPA is read. */
  espeakVoice: string;
  /** Voice name prefixes of this language (af_/am_ for en-US, ef_/em_ for Spanish, ...). */
  prefix: string;
  /**
   * What the engine record says of this locale (its `notes`, the auto reason, `dub doctor`): set
   * where the voices are not of the locale's own variety (pt-PT: Brazilian voices).
   */
  note?: string;
}

/** The pt-PT record's note: the voice is Brazilian, the phonemes European (never a silent substitution). */
export const KOKORO_PT_PT_NOTE =
  "Kokoro has no European Portuguese voice: pt-PT is spoken by a Brazilian Portuguese Kokoro voice (pf_dora, pm_alex) reading espeak-ng's European Portuguese phonemes (espeak-ng pt, not Kokoro's own pt-br): European vowels and s sounds, a Brazilian voice and melody";

/** The contract locales Kokoro v1.0 speaks here. es-MX is phonemized with espeak-ng's Latin-American Spanish (seseo); Kokoro's Spanish voices speak both. */
export const KOKORO_LANGUAGES: Readonly<Record<string, KokoroLanguage>> = Object.freeze({
  'en-US': { code: 'a', espeakVoice: 'en-us', prefix: 'a' },
  'es-ES': { code: 'e', espeakVoice: 'es', prefix: 'e' },
  'es-MX': { code: 'e', espeakVoice: 'es-419', prefix: 'e' },
  'fr-FR': { code: 'f', espeakVoice: 'fr-fr', prefix: 'f' },
  'hi-IN': { code: 'h', espeakVoice: 'hi', prefix: 'h' },
  'it-IT': { code: 'i', espeakVoice: 'it', prefix: 'i' },
  'pt-BR': { code: 'p', espeakVoice: 'pt-br', prefix: 'p' },
  // Kokoro has no European Portuguese voice: its Brazilian voices read espeak-ng's European
  // Portuguese (pt) IPA, which Whisper base back-transcribes far better than espeak-ng's own pt
  // voice (mean WER ~0.2 against ~1.1; on pt-br IPA, a Brazilian accent, ~0.1): bench/pt-pt-voice.mjs,
  // the figures in the voice README
  'pt-PT': { code: 'p', espeakVoice: 'pt', prefix: 'p', note: KOKORO_PT_PT_NOTE },
});

/** Why Kokoro does not speak a locale here, for the languages it has voices for but this engine refuses. */
export const KOKORO_REFUSED: Readonly<Record<string, string>> = Object.freeze({
  ja: "Kokoro's Japanese needs misaki's Japanese front end (pyopenjtalk/cutlet with a dictionary: kanji readings, kana to Kokoro's symbols), which is not ported here, and espeak-ng reads kanji as \"Chinese letter\"",
  zh: "Kokoro's Mandarin needs misaki's Chinese front end (jieba word segmentation and pypinyin with Kokoro's tone arrows), which is not ported here, and espeak-ng's Mandarin IPA is not what the voices were trained on",
});

/** Kokoro's language for a contract locale, or undefined with `why` it is not spoken. */
export function kokoroLanguage(locale: string): KokoroLanguage | undefined {
  return Object.hasOwn(KOKORO_LANGUAGES, locale) ? KOKORO_LANGUAGES[locale] : undefined;
}

/** What the engine record says when Kokoro speaks `locale` with voices of another variety (pt-PT), else undefined. */
export function kokoroLocaleNote(locale: string | undefined): string | undefined {
  return locale ? kokoroLanguage(locale)?.note : undefined;
}

/** Why Kokoro does not speak `locale` here (undefined when it does). */
export function kokoroRefusal(locale: string | undefined): string | undefined {
  if (locale && kokoroLanguage(locale)) return undefined;
  const lang = locale ? (getLocale(locale)?.iso639_1 || locale.split('-')[0]!) : '';
  if (Object.hasOwn(KOKORO_REFUSED, lang)) return KOKORO_REFUSED[lang];
  return `Kokoro v1.0 does not speak ${locale} (it speaks ${Object.keys(KOKORO_LANGUAGES).join(', ')} here)`;
}

/** misaki EspeakG2P's tied pairs (version None), longest first is not needed: every key has one tie. */
const MISAKI_E2M: readonly (readonly [string, string])[] = [
  ['a^ɪ', 'I'], ['a^ʊ', 'W'],
  ['d^z', 'ʣ'], ['d^ʒ', 'ʤ'],
  ['e^ɪ', 'A'],
  ['o^ʊ', 'O'], ['ə^ʊ', 'Q'],
  ['s^s', 'S'],
  ['t^s', 'ʦ'], ['t^ʃ', 'ʧ'],
  ['ɔ^ɪ', 'Y'],
];

/** One clause's espeak-ng IPA (with "^" ties) as misaki's EspeakG2P maps it. */
export function misakiEspeakPhonemes(ipa: string): string {
  let ps = stripLanguageFlags(ipa.normalize('NFD')).trim();
  for (const [from, to] of MISAKI_E2M) ps = ps.split(from).join(to);
  return ps.replace(/\^/g, '').replace(/-/g, '');
}

/** kokoro.js's post-processing of espeak-ng's English IPA (a: American). */
export function kokoroJsEnglish(ps: string, american = true): string {
  let out = ps
    .replace(/kəkˈoːɹoʊ/g, 'kˈoʊkəɹoʊ')
    .replace(/kəkˈɔːɹəʊ/g, 'kˈəʊkəɹəʊ')
    .replace(/ʲ/g, 'j')
    .replace(/r/g, 'ɹ')
    .replace(/x/g, 'k')
    .replace(/ɬ/g, 'l')
    .replace(/(?<=[a-zɹː])(?=hˈʌndɹɪd)/g, ' ')
    .replace(/ z(?=[;:,.!?¡¿—…"«»“” ]|$)/g, 'z');
  if (american) out = out.replace(/(?<=nˈaɪn)ti(?!ː)/g, 'di');
  return out.trim();
}

/** The mark Kokoro reads after a clause (from its last punctuation character), '' for none. */
export function kokoroClauseMark(source: string): string {
  const chars = Array.from(source.trimEnd());
  // the clause's ending punctuation run, e.g. "?!" or "..."
  let i = chars.length;
  while (i > 0 && /[\p{P}]/u.test(chars[i - 1]!) && !/["'“”«»()[\]{}]/u.test(chars[i - 1]!)) i--;
  const run = chars.slice(i).join('');
  if (run === '') return '';
  if (/^(\.\.+|…|⋯|︙)/u.test(run)) return '…';
  const c = run[0]!;
  const map: Record<string, string> = {
    '.': '.', '。': '.', '．': '.', '｡': '.', '।': '.', '۔': '.',
    ',': ',', '，': ',', '、': ',', '､': ',', '،': ',',
    '?': '?', '？': '?', '؟': '?', ';': ';', '；': ';', '؛': ';',
    '!': '!', '！': '!', ':': ':', '：': ':',
    '—': '—', '–': '—', '―': '—',
  };
  return map[c] ?? '';
}

/** One clause: its Kokoro phonemes (with the mark that follows it). */
export interface KokoroClause {
  text: string;
  phonemes: string;
}

async function espeakIpa(text: string, espeakVoice: string, tie: boolean, ctx: StageContext, espeakPath: string): Promise<string[]> {
  // --stdin reads the whole input and drops its last character: end it with a newline.
  const args = ['-q', '--ipa', ...(tie ? ['--tie=^'] : []), '-v', espeakVoice, '--stdin'];
  const res = await runProcess(espeakPath, args, { input: Buffer.from(text + '\n', 'utf8'), timeoutMs: 60_000, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  const lines = res.stdout.toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The clauses of `text` in Kokoro's phoneme symbols for `locale` (one espeak-ng call for the
 * whole text; clause by clause when espeak-ng reads other clauses than espeak-clauses.ts finds).
 */
export async function kokoroPhonemes(text: string, locale: string, ctx: StageContext, espeakPath = 'espeak-ng'): Promise<KokoroClause[]> {
  const lang = kokoroLanguage(locale);
  if (!lang) throw new ValidationError(`Kokoro does not speak ${locale}: ${kokoroRefusal(locale)}`, { field: 'locale' });
  const normalized = normalizeForEspeak(text);
  // a line is phonemized once: duration fitting speaks it again at another speed, the same phonemes
  const key = `${espeakPath}\u0000${lang.espeakVoice}\u0000${lang.code}\u0000${normalized}`;
  const known = phonemized.get(key);
  if (known) return known.map((c) => ({ ...c }));
  const out = await phonemize(normalized, lang, ctx, espeakPath);
  phonemized.set(key, out.map((c) => ({ ...c })));
  if (phonemized.size > 2000) phonemized.delete(phonemized.keys().next().value!);
  return out;
}

/** Phonemized lines, by espeak-ng binary, voice and normalized text (the most recent 2000). */
const phonemized = new Map<string, KokoroClause[]>();

async function phonemize(normalized: string, lang: NonNullable<ReturnType<typeof kokoroLanguage>>, ctx: StageContext, espeakPath: string): Promise<KokoroClause[]> {
  const clauses: EspeakClause[] = readClauses(normalized, lang.espeakVoice);
  if (clauses.length === 0) return [];
  const english = lang.code === 'a';
  let lines = await espeakIpa(normalized, lang.espeakVoice, !english, ctx, espeakPath);
  if (lines.length !== clauses.length) {
    ctx.logger.debug({ clauses: clauses.length, lines: lines.length }, 'espeak-ng read other clauses than expected: phonemizing clause by clause');
    lines = [];
    for (const c of clauses) lines.push((await espeakIpa(c.source, lang.espeakVoice, !english, ctx, espeakPath)).join(' '));
  }
  const out: KokoroClause[] = [];
  for (const [k, c] of clauses.entries()) {
    const ipa = lines[k]!;
    // kokoro.js post-processes the joined string; its rules look inside one clause (a word, or
    // " z" before punctuation), so clause by clause gives the same.
    const ps = english ? kokoroJsEnglish(stripLanguageFlags(ipa.normalize('NFD'))) : misakiEspeakPhonemes(ipa);
    if (ps === '') continue;
    out.push({ text: c.source, phonemes: ps + kokoroClauseMark(c.source) });
  }
  return out;
}

/** tokenizer.json of Kokoro: symbol -> id, "$" (0) around the sequence. */
export class KokoroTokenizer {
  readonly vocab: ReadonlyMap<string, number>;
  readonly pad: number;
  readonly maxLength: number;

  constructor(json: unknown) {
    const j = json as { model?: { vocab?: Record<string, number> }; post_processor?: { type?: string; single?: unknown[]; special_tokens?: Record<string, { ids?: number[] }> }; config?: { model_max_length?: number; pad_token?: string } };
    const vocab = j?.model?.vocab;
    if (!vocab || typeof vocab !== 'object') throw new ValidationError('Kokoro tokenizer.json has no model.vocab');
    const pp = j.post_processor;
    const padToken = j.config?.pad_token ?? '$';
    const padIds = pp?.special_tokens?.[padToken]?.ids;
    if (pp?.type !== 'TemplateProcessing' || !padIds || padIds.length !== 1 || pp.single?.length !== 3) throw new ValidationError(`Kokoro tokenizer.json: expected a TemplateProcessing "${padToken} A ${padToken}" post-processor`);
    this.vocab = new Map(Object.entries(vocab));
    this.pad = padIds[0]!;
    this.maxLength = j.config?.model_max_length ?? 512;
  }

  /** Ids of a phoneme string without the pads; symbols the vocabulary lacks are dropped (as the tokenizer's normalizer drops them) and listed. */
  encode(phonemes: string): { ids: number[]; dropped: string[] } {
    const ids: number[] = [];
    const dropped = new Set<string>();
    for (const ch of phonemes) {
      const id = this.vocab.get(ch);
      if (id === undefined) dropped.add(ch);
      else ids.push(id);
    }
    return { ids, dropped: [...dropped] };
  }

  /** The model's input: pad, ids, pad. */
  withPads(ids: readonly number[]): number[] {
    return [this.pad, ...ids, this.pad];
  }
}

/** Phoneme ids the model takes between its two pads (context 512). */
export const KOKORO_MAX_TOKENS = 510;

/**
 * Clauses grouped into runs of at most `max` ids (each run one inference): clauses are never cut
 * unless one alone is longer, which is truncated (said in `truncated`).
 */
export function kokoroChunks(clauses: readonly KokoroClause[], tokenizer: KokoroTokenizer, max = KOKORO_MAX_TOKENS): { ids: number[]; phonemes: string; truncated: boolean }[] {
  const chunks: { ids: number[]; phonemes: string; truncated: boolean }[] = [];
  let cur: number[] = [];
  let curPs = '';
  const space = tokenizer.vocab.get(' ');
  for (const c of clauses) {
    let { ids } = tokenizer.encode(c.phonemes);
    if (ids.length === 0) continue;
    const sep = cur.length && space !== undefined ? 1 : 0;
    if (cur.length && cur.length + sep + ids.length > max) {
      chunks.push({ ids: cur, phonemes: curPs, truncated: false });
      cur = [];
      curPs = '';
    }
    let truncated = false;
    if (ids.length > max) {
      ids = ids.slice(0, max);
      truncated = true;
    }
    if (cur.length && space !== undefined) {
      cur.push(space);
      curPs += ' ';
    }
    cur.push(...ids);
    curPs += c.phonemes;
    if (truncated) {
      chunks.push({ ids: cur, phonemes: curPs, truncated });
      cur = [];
      curPs = '';
    }
  }
  if (cur.length) chunks.push({ ids: cur, phonemes: curPs, truncated: false });
  return chunks;
}
