/**
 * From labelled windows to speaker turns, and from turns to labelled ASR segments. Each instant of
 * speech takes the label of the window whose centre is nearest among the windows covering it (a
 * region with no window takes its nearest window's label); short flips between two runs of the
 * same speaker are smoothed away. ASR words take the label at their midpoint; a segment is split
 * wherever its words change speaker.
 */
import { round3 } from '../asr/text-words.js';
import type { AsrSegment, AsrWord } from '../asr/types.js';
import type { SpeechRegion } from '../vad/types.js';
import { covers, type SpeakerWindow } from './windows.js';

export interface SpeakerTurn {
  start: number;
  end: number;
  /** Index into the speakers list. */
  speaker: number;
}

const STEP = 0.05;

export function labelTurns(regions: readonly SpeechRegion[], windows: readonly SpeakerWindow[], labels: Int32Array, minTurn = 0.5): SpeakerTurn[] {
  const turns: SpeakerTurn[] = [];
  if (!windows.length) return turns;
  let first = 0;
  for (const r of regions) {
    for (let t = r.start; t < r.end - 1e-9; t += STEP) {
      const mid = Math.min(r.end, t + STEP / 2);
      // Windows are in time order: skip those that end before this instant.
      while (first < windows.length - 1 && windows[first]!.pieces[windows[first]!.pieces.length - 1]!.end < mid - 1e-9) first++;
      let best = -1;
      let bestD = Infinity;
      for (let i = first; i < windows.length; i++) {
        const w = windows[i]!;
        if (w.pieces[0]!.start > mid + 1e-9) break;
        const d = Math.abs(w.center - mid);
        if (covers(w, mid) && d < bestD) {
          bestD = d;
          best = i;
        }
      }
      if (best < 0) {
        for (let i = 0; i < windows.length; i++) {
          const d = Math.abs(windows[i]!.center - mid);
          if (d < bestD) {
            bestD = d;
            best = i;
          }
        }
      }
      const speaker = labels[best]!;
      const end = Math.min(r.end, t + STEP);
      const last = turns[turns.length - 1];
      if (last && last.speaker === speaker && Math.abs(last.end - t) < 1e-6) last.end = end;
      else turns.push({ start: t, end, speaker });
    }
  }
  // Smooth: a short turn between two turns of one speaker (no pause around it) joins them.
  for (let i = 1; i < turns.length - 1; i++) {
    const [a, b, c] = [turns[i - 1]!, turns[i]!, turns[i + 1]!];
    if (b.end - b.start < minTurn && a.speaker === c.speaker && Math.abs(a.end - b.start) < 1e-6 && Math.abs(b.end - c.start) < 1e-6) {
      a.end = c.end;
      turns.splice(i, 2);
      i--;
    }
  }
  return turns.map((t) => ({ start: round3(t.start), end: round3(t.end), speaker: t.speaker }));
}

/** Speaker at time t: the turn containing it, else the nearest turn. */
export function speakerAt(turns: readonly SpeakerTurn[], t: number): number {
  let best = turns[0]?.speaker ?? 0;
  let bestD = Infinity;
  for (const turn of turns) {
    const d = t < turn.start ? turn.start - t : t > turn.end ? t - turn.end : 0;
    if (d < bestD) {
      bestD = d;
      best = turn.speaker;
      if (d === 0) break;
    }
  }
  return best;
}

/** Label segments and split them where the speaker changes between words. */
export function labelSegments(segments: readonly AsrSegment[], turns: readonly SpeakerTurn[], speakerIds: readonly string[], joiner = ' '): AsrSegment[] {
  const out: AsrSegment[] = [];
  for (const s of segments) {
    if (!s.words.length) {
      out.push({ ...s, speaker: speakerIds[speakerAt(turns, (s.start + s.end) / 2)]! });
      continue;
    }
    const labels = s.words.map((w) => speakerAt(turns, (w.start + w.end) / 2));
    // A single word flipped between two words of one speaker stays with them.
    for (let i = 1; i < labels.length - 1; i++) if (labels[i - 1] === labels[i + 1] && labels[i] !== labels[i - 1]) labels[i] = labels[i - 1]!;
    let cur: AsrWord[] = [];
    let curLabel = labels[0]!;
    const flush = () => {
      if (!cur.length) return;
      out.push({ start: cur[0]!.start, end: cur[cur.length - 1]!.end, text: cur.map((w) => w.text).join(joiner), words: cur, speaker: speakerIds[curLabel]! });
    };
    s.words.forEach((w, i) => {
      if (labels[i] !== curLabel) {
        flush();
        cur = [];
        curLabel = labels[i]!;
      }
      cur.push(w);
    });
    flush();
    // Keep the original segment boundaries when the segment was not split.
    if (labels.every((l) => l === labels[0])) {
      const last = out[out.length - 1]!;
      last.start = s.start;
      last.end = s.end;
      last.text = s.text;
    }
  }
  return out;
}
