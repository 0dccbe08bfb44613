/**
 * Text -> Piper phoneme ids: the text is cut into clauses at punctuation, every clause is
 * phonemized by espeak-ng (`-q --ipa`, one input line per clause), the clause punctuation is put
 * back (Piper voices are trained with it), and each codepoint is mapped through the voice's
 * phoneme_id_map with Piper's convention: BOS, pad, then every phoneme followed by pad, then EOS.
 */
import { runProcess } from '@dub/media';
import type { StageContext } from '@dub/core';
import { PIPER_BOS, PIPER_EOS, PIPER_PAD, type PiperVoiceConfig } from './piper-config.js';

export interface Clause {
  text: string;
  /** Punctuation that ended the clause ("" at the end of text without one). */
  punctuation: string;
}

/** One sentence = the phonemes of its clauses with their punctuation. */
export interface PhonemizedSentence {
  phonemes: string;
}

const CLAUSE_RE = /([^.,;:!?¡¿…]+)([.,;:!?…]*)/gu;

export function splitClauses(text: string): Clause[] {
  const out: Clause[] = [];
  for (const m of text.replace(/\s+/g, ' ').matchAll(CLAUSE_RE)) {
    const t = (m[1] ?? '').trim();
    if (t !== '') out.push({ text: t, punctuation: (m[2] ?? '').slice(0, 1) });
  }
  return out;
}

/** Phonemize text with espeak-ng, grouping clauses into sentences (ended by . ! ? or the end). */
export async function phonemize(text: string, espeakVoice: string, ctx: StageContext, espeakPath = 'espeak-ng'): Promise<PhonemizedSentence[]> {
  const clauses = splitClauses(text);
  if (clauses.length === 0) return [];
  const res = await runProcess(espeakPath, ['-q', '--ipa', '-l', '100000', '-v', espeakVoice, '--stdin'], {
    input: Buffer.from(clauses.map((c) => c.text).join('\n') + '\n', 'utf8'),
    timeoutMs: 60_000,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const lines = res.stdout.toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  let parts: string[];
  if (lines.length === clauses.length) {
    parts = lines.map((l, i) => l + clauses[i]!.punctuation);
  } else {
    // espeak-ng split a clause further: keep its phonemes, punctuation only at the end.
    ctx.logger.debug({ clauses: clauses.length, lines: lines.length }, 'phonemizer clause count differs');
    parts = [lines.join(' ') + (clauses[clauses.length - 1]!.punctuation || '.')];
  }
  const sentences: PhonemizedSentence[] = [];
  let cur: string[] = [];
  for (const p of parts) {
    cur.push(p);
    if (/[.!?…]$/u.test(p)) {
      sentences.push({ phonemes: cur.join(' ') });
      cur = [];
    }
  }
  if (cur.length) sentences.push({ phonemes: cur.join(' ') });
  return sentences;
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
