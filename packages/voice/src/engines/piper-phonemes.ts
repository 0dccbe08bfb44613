/**
 * Text -> Piper phoneme ids, as Piper's own front-end (piper-phonemize, phonemize_eSpeak and
 * phonemes_to_ids) makes them, so a voice hears what it was trained on:
 *
 * 1. The whole text goes to espeak-ng at once (`-q --ipa`), which reads it clause by clause and
 *    prints one line of IPA per clause; the clause boundaries and types are found in the text
 *    with espeak-ng's own rules (espeak-clauses.ts). Punctuation only ends a clause when
 *    whitespace, a quote or the end follows it, so "3.5", "1,200", "10:30" and "1.200" are read
 *    as numbers and times, and "p.m. today" stays one clause.
 * 2. Each clause's IPA is decomposed (NFD), mapped through the language's phoneme map (pt-br:
 *    "c" -> "k", piper-phonemize's DEFAULT_PHONEME_MAP), and espeak-ng's language-switch flags
 *    such as "(en)" ... "(fr)" around foreign words are removed.
 * 3. The clause's punctuation is appended as Piper does: "." "?" "!" for sentence ends, ", " ": "
 *    "; " for commas, colons and semicolons (dashes count as semicolons), nothing otherwise.
 *    Sentence-ending clauses (. ? ! and the end of the text) close a sentence; Piper synthesizes
 *    every sentence on its own.
 * 4. Ids: BOS, pad, then every phoneme followed by pad, then EOS; codepoints missing from the
 *    voice's phoneme_id_map are skipped (and reported).
 *
 * If espeak-ng prints a different number of lines than the clauses found (a rule this module does
 * not know), every clause is phonemized on its own instead, so no punctuation is lost.
 */
import { runProcess } from '@dub/media';
import type { StageContext } from '@dub/core';
import { PIPER_BOS, PIPER_EOS, PIPER_PAD, type PiperVoiceConfig } from './piper-config.js';
import { endsSentence, normalizeForEspeak, piperClausePunctuation, readClauses, type EspeakClause } from './espeak-clauses.js';

export { readClauses, normalizeForEspeak, type EspeakClause } from './espeak-clauses.js';

/** A clause as espeak-ng reads it: its source text and the punctuation Piper appends after its phonemes. */
export interface Clause {
  text: string;
  punctuation: string;
}

/** The clauses of `text` as espeak-ng reads them for `espeakVoice` (see espeak-clauses.ts). */
export function splitClauses(text: string, espeakVoice = 'en-us'): Clause[] {
  return readClauses(normalizeForEspeak(text), espeakVoice).map((c) => ({ text: c.source, punctuation: piperClausePunctuation(c.type) }));
}

/** One sentence = the phonemes of its clauses with their punctuation. */
export interface PhonemizedSentence {
  phonemes: string;
}

/**
 * Phoneme maps per espeak-ng voice, applied to espeak-ng's output before ids (piper-phonemize's
 * DEFAULT_PHONEME_MAP; the key is the voice config's `espeak.voice`, matched exactly).
 */
export const PIPER_PHONEME_MAPS: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.freeze({
  'pt-br': Object.freeze({ c: 'k' }),
});

/** Remove espeak-ng's language-switch flags, e.g. "(en)fˈʊtbɔːl(fr)" -> "fˈʊtbɔːl". */
export function stripLanguageFlags(phonemes: string): string {
  let out = '';
  let inFlag = false;
  for (const ch of phonemes) {
    if (inFlag) {
      if (ch === ')') inFlag = false;
    } else if (ch === '(') {
      inFlag = true;
    } else {
      out += ch;
    }
  }
  return out;
}

/** One clause's IPA as Piper keeps it: NFD, mapped, without language flags. */
export function piperClausePhonemes(ipa: string, espeakVoice: string): string {
  const map = Object.hasOwn(PIPER_PHONEME_MAPS, espeakVoice) ? PIPER_PHONEME_MAPS[espeakVoice] : undefined;
  let mapped = '';
  for (const ch of ipa.normalize('NFD')) mapped += map && Object.hasOwn(map, ch) ? map[ch]! : ch;
  return stripLanguageFlags(mapped);
}

/** Join clauses (IPA per clause, in order) into Piper's sentences. */
export function piperSentences(clauses: readonly { ipa: string; type: number }[], espeakVoice: string): PhonemizedSentence[] {
  const sentences: PhonemizedSentence[] = [];
  let cur = '';
  for (const c of clauses) {
    cur += piperClausePhonemes(c.ipa, espeakVoice) + piperClausePunctuation(c.type);
    if (endsSentence(c.type)) {
      if (cur !== '') sentences.push({ phonemes: cur });
      cur = '';
    }
  }
  if (cur !== '') sentences.push({ phonemes: cur });
  return sentences;
}

async function espeakLines(text: string, espeakVoice: string, ctx: StageContext, espeakPath: string): Promise<string[]> {
  // --stdin reads the whole input and drops its last character: end it with a newline.
  const res = await runProcess(espeakPath, ['-q', '--ipa', '-v', espeakVoice, '--stdin'], {
    input: Buffer.from(text + '\n', 'utf8'),
    timeoutMs: 60_000,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const lines = res.stdout.toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Phonemize text with espeak-ng into Piper's sentences. */
export async function phonemize(text: string, espeakVoice: string, ctx: StageContext, espeakPath = 'espeak-ng'): Promise<PhonemizedSentence[]> {
  const normalized = normalizeForEspeak(text);
  const clauses: EspeakClause[] = readClauses(normalized, espeakVoice);
  if (clauses.length === 0) return [];
  let lines = await espeakLines(normalized, espeakVoice, ctx, espeakPath);
  if (lines.length !== clauses.length) {
    ctx.logger.debug({ clauses: clauses.length, lines: lines.length }, 'espeak-ng read other clauses than expected: phonemizing clause by clause');
    lines = [];
    for (const c of clauses) lines.push((await espeakLines(c.source, espeakVoice, ctx, espeakPath)).join(''));
  }
  return piperSentences(clauses.map((c, k) => ({ ipa: lines[k]!, type: c.type })), espeakVoice);
}

/** Phoneme string -> ids with Piper's BOS/pad/EOS convention; unknown codepoints are skipped. */
export function phonemeIds(phonemes: string, config: Pick<PiperVoiceConfig, 'phonemeIdMap'>): { ids: number[]; missing: string[] } {
  const map = config.phonemeIdMap;
  const pad = map.get(PIPER_PAD)!;
  const ids: number[] = [...map.get(PIPER_BOS)!, ...pad];
  const missing = new Set<string>();
  for (const ch of phonemes.normalize('NFD')) {
    const id = map.get(ch);
    if (!id) {
      missing.add(ch);
      continue;
    }
    ids.push(...id, ...pad);
  }
  ids.push(...map.get(PIPER_EOS)!);
  return { ids, missing: [...missing] };
}
