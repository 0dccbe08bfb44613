/**
 * Segment synthesis for generation: the time slot of each script segment (its own span plus the
 * silence before the next one, which the line may run into), synthesis fitted to the slot, and
 * estimated target word timings inside the placed speech.
 */
import type { ScriptSegment, StageContext, Word } from '@dub/core';
import type { MediaToolOptions, PlanarAudio } from '@dub/media';
import { fitDuration, speechExtent, type Stretcher, type TtsEngine, type VoiceSettings } from '@dub/voice';

export interface SegmentSlot {
  segment: ScriptSegment;
  start: number;
  /** Seconds the line should last (end - start). */
  seconds: number;
  /** Silence after the slot it may run into (up to the next segment or the end). */
  overrun: number;
}

/** Slots of the segments that have text, in time order. `tailReserve` keeps room at the end (voice-over delay). */
export function segmentSlots(segments: readonly ScriptSegment[], duration: number, tailReserve = 0): SegmentSlot[] {
  const spoken = segments.filter((s) => s.target_text.trim() !== '' && s.end > s.start && s.start < duration).sort((a, b) => a.start - b.start);
  return spoken.map((s, i) => {
    const next = spoken[i + 1]?.start ?? duration - tailReserve;
    const end = Math.min(s.end, duration - tailReserve);
    return { segment: s, start: s.start, seconds: Math.max(0.05, end - s.start), overrun: Math.max(0, next - Math.max(end, s.start)) };
  });
}

export interface FittedSegment {
  audio: PlanarAudio;
  /** Seconds of the fitted audio. */
  durationSeconds: number;
  speed: number;
  tempo: number;
  overrunSeconds: number;
  exceeded: boolean;
  /** Target words with times relative to the segment start. */
  words: Word[];
}

export async function synthesizeSegment(
  engine: TtsEngine,
  slot: SegmentSlot,
  req: { locale: string; voice: VoiceSettings; stretcher: Stretcher; media: MediaToolOptions; tmpDir: string },
  ctx: StageContext,
): Promise<FittedSegment> {
  const text = slot.segment.target_text;
  const say = (speed: number): Promise<PlanarAudio> => engine.synthesize({ text, locale: req.locale, voice: req.voice, speed }, ctx);
  const first = await say(1);
  const fit = await fitDuration(
    first,
    slot.seconds,
    {
      overrunSeconds: slot.overrun,
      ...(engine.capabilities.rateControl ? { resynthesize: say } : {}),
      stretcher: req.stretcher,
      media: req.media,
      tmpDir: req.tmpDir,
    },
    ctx,
  );
  const x = fit.audio.channels[0]!;
  const ext = speechExtent(x, fit.audio.sampleRate);
  return {
    audio: fit.audio,
    durationSeconds: fit.durationSeconds,
    speed: fit.speed,
    tempo: fit.tempo,
    overrunSeconds: fit.overrunSeconds,
    exceeded: fit.exceeded,
    words: estimateWords(text, ext.start / fit.audio.sampleRate, ext.end / fit.audio.sampleRate),
  };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * Word timings spread over [from, to) in proportion to each word's letters plus a fixed share
 * (the synthesizer reads at an even pace; good enough for subtitles of the dubbed track).
 */
export function estimateWords(text: string, from: number, to: number): Word[] {
  const words = text.split(/\s+/u).filter((w) => w !== '');
  if (words.length === 0 || !(to > from)) return [];
  const weight = words.map((w) => 2 + [...w.replace(/[\p{P}]/gu, '')].length);
  const total = weight.reduce((a, b) => a + b, 0);
  const out: Word[] = [];
  let t = from;
  for (const [i, w] of words.entries()) {
    const d = ((to - from) * weight[i]!) / total;
    out.push({ text: w, start: r3(t), end: r3(t + d) });
    t += d;
  }
  return out;
}
