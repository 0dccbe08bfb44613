/**
 * A back-transcription's words split back into the dubbed lines it was decoded over (Whisper decodes
 * several lines in one packed window): each segment's words laid over the parts of the segment that
 * lines cover (wordsOverLines), each word given to the line it falls in (wordsByLine), and each
 * line's text with whether a repetition loop (a hallucination Whisper decoded at every temperature,
 * marked `loop` by the engine or found in the line's own words) reaches into it (lineTranscripts).
 */
import { hasRepetitionLoop } from '@dub/asr';

export interface TimedWord {
  text: string;
  start: number;
  end: number;
  /** Part of a repetition loop (the engine's mark). */
  loop?: boolean;
  /** Timed on its own by the engine (Whisper's cross-attention), not spread over its segment. */
  aligned?: boolean;
}

/** The line of `spans` a time falls in, else the nearest one (undefined only without spans). */
function lineAt<S extends { start: number; end: number }>(spans: readonly S[], t: number): S | undefined {
  let line = spans.find((s) => t >= s.start && t <= s.end);
  if (!line) {
    let best = Infinity;
    for (const s of spans) {
      const d = t < s.start ? s.start - t : t - s.end;
      if (d < best) [best, line] = [d, s];
    }
  }
  return line;
}

/** The words of each line (by lineAt of each word's middle), in order. */
function wordsOfLines<W extends TimedWord>(spans: readonly { id: string; start: number; end: number }[], words: readonly W[]): Map<string, W[]> {
  const out = new Map<string, W[]>(spans.map((s) => [s.id, []]));
  for (const w of words) {
    const line = lineAt(spans, (w.start + w.end) / 2);
    if (line) out.get(line.id)!.push(w);
  }
  return out;
}

/**
 * Words of the transcription, each given to the placed line its midpoint falls in, else to the
 * nearest line: the timeline holds nothing but the lines, so a word timed into a pause between
 * two (Whisper times words by character share inside its segments, whose timestamps are coarse)
 * was spoken in one of them and is not dropped.
 */
export function wordsByLine(spans: readonly { id: string; start: number; end: number }[], words: readonly TimedWord[]): Map<string, string[]> {
  return new Map([...wordsOfLines(spans, words)].map(([id, ws]) => [id, ws.map((w) => w.text)]));
}

/**
 * The words of Whisper's segments timed over the placed lines only: Whisper times a segment by its
 * timestamp tokens (coarse) and its words by character share over the whole segment, pauses
 * included, so a segment spanning two lines puts words in the pause between them or in the wrong
 * line. The timeline is silent outside the lines, so each segment's words are laid by character
 * share over the parts of the segment that lines cover (a segment over no line keeps its times).
 * Words the engine timed on their own (`aligned`: Whisper's cross-attention) keep their times.
 * A word's `loop` mark stays with it.
 */
export function wordsOverLines(segments: readonly { start: number; end: number; words: readonly TimedWord[] }[], spans: readonly { start: number; end: number }[]): TimedWord[] {
  const out: TimedWord[] = [];
  for (const seg of segments) {
    const parts = spans.map((l) => [Math.max(l.start, seg.start), Math.min(l.end, seg.end)] as const).filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
    const total = parts.reduce((acc, [a, b]) => acc + b - a, 0);
    if (!(total > 0) || !seg.words.length || seg.words.every((w) => w.aligned)) {
      out.push(...seg.words.map((w) => ({ text: w.text, start: w.start, end: w.end, ...(w.loop ? { loop: true } : {}) })));
      continue;
    }
    const at = (offset: number): number => {
      let left = offset;
      for (const [a, b] of parts) {
        if (left <= b - a) return a + left;
        left -= b - a;
      }
      return parts[parts.length - 1]![1];
    };
    const chars = seg.words.map((w) => Math.max(1, [...w.text].length));
    const sum = chars.reduce((x, y) => x + y, 0);
    let acc = 0;
    for (const [i, w] of seg.words.entries()) {
      const from = (acc / sum) * total;
      acc += chars[i]!;
      const to = (acc / sum) * total;
      // the word's middle in the speech decides its line (wordsByLine): only the texts are reported
      const mid = at((from + to) / 2);
      out.push({ text: w.text, start: mid, end: mid, ...(w.loop ? { loop: true } : {}) });
    }
  }
  return out;
}

export interface LineTranscript {
  /** The line's words, joined by spaces. */
  text: string;
  /** Whether a repetition loop reaches into the line: one of its words is marked `loop`, or its own words loop. */
  loop: boolean;
}

/** Each line's text (wordsByLine's split) and whether a repetition loop reaches into it. */
export function lineTranscripts(spans: readonly { id: string; start: number; end: number }[], words: readonly TimedWord[]): Map<string, LineTranscript> {
  return new Map(
    [...wordsOfLines(spans, words)].map(([id, ws]) => {
      const text = ws.map((w) => w.text).join(' ');
      return [id, { text, loop: ws.some((w) => w.loop === true) || hasRepetitionLoop(text) }];
    }),
  );
}
