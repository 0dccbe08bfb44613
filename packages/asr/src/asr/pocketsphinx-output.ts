/**
 * Parsers of pocketsphinx output: `pocketsphinx_batch -ctm` lines (`utt channel start duration
 * word confidence`, times relative to the utterance) and `pocketsphinx_continuous -time yes`
 * stdout (a hypothesis line, then `word start end confidence` lines from `<s>` to `</s>`).
 * Fillers (<s>, </s>, <sil>, [NOISE], ++GARBAGE++, <unk>) are dropped, and pronunciation
 * variants ("read(2)") lose their suffix.
 */
import type { AsrWord } from './types.js';

export function cleanPocketsphinxWord(token: string): string | undefined {
  if (/^<.*>$/.test(token) || /^\[.*\]$/.test(token) || /^\+\+.*\+\+$/.test(token)) return undefined;
  const w = token.replace(/\(\d+\)$/, '');
  return w || undefined;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Words per utterance id from CTM text. */
export function parseCtm(text: string): Map<string, AsrWord[]> {
  const out = new Map<string, AsrWord[]>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 5) continue;
    const start = Number(f[2]);
    const dur = Number(f[3]);
    const conf = f.length > 5 ? Number(f[5]) : 1;
    if (!Number.isFinite(start) || !Number.isFinite(dur)) continue;
    const word = cleanPocketsphinxWord(f[4]!);
    if (!word) continue;
    const list = out.get(f[0]!) ?? [];
    list.push({ text: word, start: r3(start), end: r3(start + dur), confidence: clamp01(conf) });
    out.set(f[0]!, list);
  }
  return out;
}

const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?(?:e-?\d+)?)$/;

/** Utterances (lists of words) from `pocketsphinx_continuous -time yes` stdout. */
export function parseContinuousTimes(stdout: string): AsrWord[][] {
  const utts: AsrWord[][] = [];
  let cur: AsrWord[] | undefined;
  for (const line of stdout.split('\n')) {
    const m = WORD_LINE.exec(line.trim());
    if (!m) continue;
    const token = m[1]!;
    if (token === '<s>') {
      cur = [];
      continue;
    }
    if (token === '</s>') {
      if (cur?.length) utts.push(cur);
      cur = undefined;
      continue;
    }
    const word = cleanPocketsphinxWord(token);
    if (!word) continue;
    cur ??= [];
    cur.push({ text: word, start: r3(Number(m[2])), end: r3(Number(m[3])), confidence: clamp01(Number(m[4])) });
  }
  if (cur?.length) utts.push(cur);
  return utts;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
