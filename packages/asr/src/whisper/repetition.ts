/**
 * Repetition loops: Whisper's commonest hallucination, one phrase decoded again and again ("o país
 * morre do palco, o país morre do palco, o país morre do palco, ..."). openai/whisper catches them
 * by the gzip compression ratio of a window's text (> 2.4), but zlib's fixed cost (a 2-byte header,
 * a 4-byte checksum, the block's codes) keeps the ratio of a short text low: that phrase four times
 * after 70 other characters is 165 bytes and compresses to 82, a ratio of 2.01. A window of a few
 * short dubbed lines, its decoding bounded by its length, never reaches 2.4, so the loop survived
 * into the lines' text. This finds the loop in the words themselves.
 *
 * A loop is a run of words with a period p (each word equal, after normalization, to the word p
 * before it) that holds at least `minRepeats` copies of the p words and at least `minWords` words,
 * or, for a phrase of at least `longPeriod` words, two copies of it in a row.
 *
 * A loop that survives every temperature is marked on its words (markRepetitionLoops); for a
 * transcript that is dubbed, its repeats are removed (dropLoopRepeats): the speaker said the
 * phrase once, so the first copy stays and the removal is recorded.
 */
import { joinWords, round3 } from '../asr/text-words.js';
import type { AsrSegment, RemovedRepeats } from '../asr/types.js';

export interface RepetitionOptions {
  /** Copies of a phrase in a row that make a loop (default 3). */
  minRepeats?: number;
  /** Words a loop of minRepeats copies covers at least (default 6: "no, no, no" is speech, not a loop). */
  minWords?: number;
  /** Longest phrase looked for, in words (default 16). */
  maxPeriod?: number;
  /** A phrase of at least this many words said twice in a row is a loop too (default 6; null: never). */
  longPeriod?: number | null;
}

export interface RepetitionLoop {
  /** Word indexes [start, end) of the loop (every copy, a partial last one included). */
  start: number;
  end: number;
  /** Words per copy. */
  period: number;
  /** Whole copies in the run. */
  copies: number;
}

/** A word as loops compare it: lower case, NFKC, letters, digits and inner apostrophes only ("" for punctuation alone). */
export function loopWord(word: string): string {
  return word
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[’']/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, '')
    .replace(/^'+|'+$/g, '');
}

/** The words of a text as loops compare them (split at white space, punctuation-only words left out). */
export function loopWords(text: string): string[] {
  return text.split(/\s+/).map(loopWord).filter(Boolean);
}

/**
 * The repetition loops among `words` (already normalized: loopWord), in order, none overlapping:
 * for each period from 1 up, the maximal runs where every word equals the one `period` before it;
 * a run found at a shorter period wins over an overlapping one found at a longer period.
 */
export function repetitionLoops(words: readonly string[], o: RepetitionOptions = {}): RepetitionLoop[] {
  const minRepeats = o.minRepeats ?? 3;
  const minWords = o.minWords ?? 6;
  const maxPeriod = o.maxPeriod ?? 16;
  const longPeriod = o.longPeriod === undefined ? 6 : o.longPeriod;
  const found: RepetitionLoop[] = [];
  const taken = new Uint8Array(words.length);
  for (let p = 1; p <= maxPeriod && 2 * p <= words.length; p++) {
    let j = p;
    while (j < words.length) {
      if (words[j] !== words[j - p]) {
        j++;
        continue;
      }
      const from = j;
      while (j < words.length && words[j] === words[j - p]) j++;
      // words [from - p, j) repeat with period p
      const start = from - p;
      const length = j - start;
      const copies = Math.floor(length / p);
      const loop = (copies >= minRepeats && length >= minWords) || (longPeriod !== null && p >= longPeriod && copies >= 2);
      if (!loop) continue;
      let free = true;
      for (let k = start; k < j && free; k++) if (taken[k]) free = false;
      if (!free) continue;
      taken.fill(1, start, j);
      found.push({ start, end: j, period: p, copies });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** Whether `text` holds a repetition loop. */
export function hasRepetitionLoop(text: string, o?: RepetitionOptions): boolean {
  return repetitionLoops(loopWords(text), o).length > 0;
}

/**
 * Marks the words that make up a repetition loop (`loop: true`), over the words of a whole decoded
 * window in order (a loop may run across Whisper's segments, and so across the lines they are
 * laid over). Words that are punctuation alone are skipped by the comparison and not marked.
 * Returns the loops found, as word indexes into `words`.
 */
export function markRepetitionLoops(words: { text: string; loop?: boolean }[], o?: RepetitionOptions): RepetitionLoop[] {
  const at: number[] = [];
  const norm: string[] = [];
  for (const [i, w] of words.entries()) {
    const n = loopWord(w.text);
    if (!n) continue;
    at.push(i);
    norm.push(n);
  }
  const loops = repetitionLoops(norm, o);
  for (const l of loops) for (let k = l.start; k < l.end; k++) words[at[k]!]!.loop = true;
  return loops.map((l) => ({ ...l, start: at[l.start]!, end: at[l.end - 1]! + 1 }));
}

/**
 * The segments of one decoded window (in order, on the audio's timeline) with the repeats of each
 * repetition loop removed: the loop's first copy of the phrase stays, every word after it up to
 * the loop's end goes (punctuation-only words between the repeats too, and a last word of the
 * window that begins the next copy: a decoding stopped at the loop), and when the loop's last
 * word is the kept copy's last word with other punctuation ("palco," ... "palco."), the kept word
 * takes it. A segment keeps its span where its edge words stay, else it starts at its first kept
 * word or ends at its last; its text is its kept words joined. A segment that is nothing but the
 * loop keeps one copy (the loop starts in it); a segment holding only repeats of a copy kept in an
 * earlier segment (Whisper often decodes one copy per segment) is dropped. Each loop removed is
 * listed with the removed text, the kept copy and where they were.
 */
export function dropLoopRepeats(segments: readonly AsrSegment[], locale: string, o?: RepetitionOptions): { segments: AsrSegment[]; removed: RemovedRepeats[] } {
  const words = segments.flatMap((s, si) => s.words.map((w) => ({ w, si })));
  const at: number[] = [];
  const norm: string[] = [];
  for (const [i, { w }] of words.entries()) {
    const n = loopWord(w.text);
    if (!n) continue;
    at.push(i);
    norm.push(n);
  }
  const loops = repetitionLoops(norm, o);
  if (!loops.length) return { segments: segments.map((s) => ({ ...s })), removed: [] };
  const gone = new Uint8Array(words.length);
  const retext = new Map<number, string>();
  const removed: RemovedRepeats[] = [];
  for (const l of loops) {
    // a decoding stopped at the loop (stopOnLoop) may end in the first piece of the next copy ("... d- I"): it goes too
    const truncated = l.end === norm.length - 1 && norm[l.end - l.period]!.startsWith(norm[l.end]!);
    const first = at[l.start]!;
    const keptLast = at[l.start + l.period - 1]!;
    const last = at[truncated ? l.end : l.end - 1]!;
    gone.fill(1, keptLast + 1, last + 1);
    const kept = words.slice(first, keptLast + 1).map((x) => x.w);
    const cut = words.slice(keptLast + 1, last + 1).map((x) => x.w);
    const lastWord = words[last]!.w.text;
    if (lastWord !== kept[kept.length - 1]!.text && loopWord(lastWord) === loopWord(kept[kept.length - 1]!.text)) retext.set(keptLast, lastWord);
    const keptText = joinWords(kept, locale);
    removed.push({
      start: round3(cut[0]!.start),
      end: round3(Math.max(cut[0]!.start, ...cut.map((w) => w.end))),
      text: joinWords(cut, locale),
      kept: keptText,
      keptStart: round3(kept[0]!.start),
      keptEnd: round3(Math.max(kept[0]!.start, ...kept.map((w) => w.end))),
      period: l.period,
      copies: l.copies,
      reason: `repetition loop: "${keptText}" decoded ${l.copies} times in a row at every temperature (a hallucination, not speech): kept once, the repeats removed`,
    });
  }
  const out: AsrSegment[] = [];
  let k = 0;
  for (const s of segments) {
    const from = k;
    k += s.words.length;
    const keep = s.words.flatMap((w, j) => (gone[from + j] ? [] : [retext.has(from + j) ? { ...w, text: retext.get(from + j)! } : w]));
    if (keep.length === s.words.length && keep.every((w, j) => w === s.words[j])) {
      out.push({ ...s });
      continue;
    }
    if (!keep.length) continue;
    const start = gone[from] ? keep[0]!.start : s.start;
    const end = gone[k - 1] ? Math.max(start, keep[keep.length - 1]!.end) : s.end;
    out.push({ ...s, start, end, text: joinWords(keep, locale), words: keep });
  }
  return { segments: out, removed };
}
