/**
 * A language's reference srt is its translation. Its cues are attached to the source segments by
 * time: each cue goes to the segment it overlaps most (ties to the earlier segment); a cue that
 * overlaps none goes to the nearest segment (gap between the intervals; ties to the earlier one).
 * A segment's text is its cues' texts in time order joined by spaces; a segment without a cue
 * gets empty text. Cue line breaks become spaces and formatting tags (<i>, <font ...>, {\an8})
 * are removed.
 */

export interface TimedSegment {
  id: string;
  start: number;
  end: number;
}

export interface TimedCue {
  start: number;
  end: number;
  text: string;
}

export function cleanCueText(text: string): string {
  return text
    .replace(/<\/?[a-zA-Z][^>]*>/g, '')
    .replace(/\{\\[^}]*\}/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function overlap(a: { start: number; end: number }, b: { start: number; end: number }): number {
  return Math.min(a.end, b.end) - Math.max(a.start, b.start);
}

function gap(a: { start: number; end: number }, b: { start: number; end: number }): number {
  return Math.max(0, Math.max(a.start, b.start) - Math.min(a.end, b.end));
}

export function alignReferenceSrt(segments: readonly TimedSegment[], cues: readonly TimedCue[]): { id: string; text: string }[] {
  const assigned: TimedCue[][] = segments.map(() => []);
  if (segments.length === 0) return [];
  for (const cue of cues) {
    let best = -1;
    let bestOverlap = 0;
    for (const [i, s] of segments.entries()) {
      const o = overlap(s, cue);
      if (o > bestOverlap) {
        bestOverlap = o;
        best = i;
      }
    }
    if (best < 0) {
      let bestGap = Infinity;
      for (const [i, s] of segments.entries()) {
        const g = gap(s, cue);
        if (g < bestGap) {
          bestGap = g;
          best = i;
        }
      }
    }
    assigned[best]!.push(cue);
  }
  return segments.map((s, i) => ({
    id: s.id,
    text: assigned[i]!
      .slice()
      .sort((a, b) => a.start - b.start || a.end - b.end)
      .map((c) => cleanCueText(c.text))
      .filter((t) => t !== '')
      .join(' '),
  }));
}
