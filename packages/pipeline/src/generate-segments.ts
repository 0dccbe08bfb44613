/**
 * Segment synthesis for generation: the spoken segments in time order, each line's synthesis at
 * speed 1 (its natural length, which placement reads), the line fitted to the time placement
 * gave it, and estimated target word timings inside the placed speech.
 */
import type { ScriptSegment, StageContext, Word } from '@dub/core';
import type { MediaToolOptions, PlanarAudio } from '@dub/media';
import { countSyllables, fitDuration, fitPredicted, speechExtent, speechSecondsOfAudio, toMono, trimSilence, type SpeedResponse, type Stretcher, type TtsEngine, type VoiceSettings } from '@dub/voice';

export interface SegmentSlot {
  segment: ScriptSegment;
  start: number;
  /** The slot's end, clipped to the time lines may use (`limit`). */
  end: number;
}

/** Segments that have text and time, in time order; their ends clipped to `limit` (the video's duration less the voice-over delay). */
export function segmentSlots(segments: readonly ScriptSegment[], limit: number): SegmentSlot[] {
  return segments
    .filter((s) => s.target_text.trim() !== '' && s.end > s.start && s.start < limit)
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .map((s) => ({ segment: s, start: s.start, end: Math.min(s.end, limit) }));
}

/** Seconds of speech in `audio`, leading and trailing silence trimmed. */
export function naturalSeconds(audio: PlanarAudio): number {
  return trimSilence(toMono(audio), audio.sampleRate).length / audio.sampleRate;
}

export interface FittedSegment {
  audio: PlanarAudio;
  /** Seconds of the fitted audio (the placed time). */
  durationSeconds: number;
  /** Seconds of speech in it (padding excluded), before any cut at the end of the video. */
  speechSeconds: number;
  /** Natural length (at the voice's default rate) / speechSeconds. */
  speedFactor: number;
  /** The engine's rate input of the fitted line. */
  speed: number;
  tempo: number;
  /** Times the fitting spoke the line (0: the line at speed 1 used as is; 2: a correction pass). */
  passes: number;
  /** Whether the length at speed 1 that speedFactor counts from was measured or predicted (the line spoken once, at the speed its prediction asked for). */
  natural: 'measured' | 'predicted';
  /** Seconds cut off at the end (the video ended). */
  cutSeconds: number;
  /** Target words with times relative to the segment start. */
  words: Word[];
  /** The line's rate input for its speaker's pace (1: the voice's default rate). */
  pace: number;
  /** Syllables of `text` (espeak-ng; null when it cannot read the locale) and seconds of speech kept, pauses excluded. */
  syllables: number | null;
  articulationSeconds: number;
}

/**
 * Fit `natural` (the line at speed 1) to `fitSeconds` (engines with rate control re-synthesize
 * at the speed asked, the rest is time-stretched); or, with `natural` a predicted length at speed 1
 * (`{ predicted }`, engines with rate control), speak the line once at the speed the prediction
 * asks for and a second time only when that misses by more than 10 % (fitPredicted); then keep the first `keepSeconds` of it with a
 * 10 ms fade where it is cut; measure its articulation (syllables of `text`, seconds of speech
 * without pauses). With `slowest` (the line's pace) it is spoken no slower than that: a line
 * shorter than its time is re-synthesized at its pace and padded, not slowed to fill it.
 */
export async function fitSegment(
  engine: TtsEngine,
  text: string,
  natural: PlanarAudio | { predicted: number },
  fitSeconds: number,
  keepSeconds: number,
  req: { locale: string; voice: VoiceSettings; stretcher: Stretcher; media: MediaToolOptions; tmpDir: string; speedLimit: number; pace?: number; slowest?: number; response?: SpeedResponse },
  ctx: StageContext,
): Promise<FittedSegment> {
  const pace = req.pace ?? 1;
  const say = (speed: number): Promise<PlanarAudio> => engine.synthesize({ text, locale: req.locale, voice: req.voice, speed }, ctx);
  const fitOptions = {
    overrunSeconds: 0,
    // the placed time exactly: a length a fraction of a percent off is stretched too, not cut
    tolerance: 0,
    // engines without rate control reach the speed limit by stretching alone
    maxTempo: Math.max(1.5, req.speedLimit * 1.02),
    // at the speaker's pace a line shorter than its time is not slowed below it: it is padded
    ...(req.slowest !== undefined ? { minTempo: 1, minSpeed: req.slowest, maxSpeed: Math.max(1.8, req.slowest) } : {}),
    // the engine's measured length response (Kokoro: KOKORO_SPEED_RESPONSE), else 1/speed
    ...(req.response ? { response: req.response } : {}),
    stretcher: req.stretcher,
    media: req.media,
    tmpDir: req.tmpDir,
  };
  let fit: Awaited<ReturnType<typeof fitDuration>> & { passes: number; natural: 'measured' | 'predicted' };
  if ('predicted' in natural) {
    if (!engine.capabilities.rateControl) throw new Error(`${engine.id} has no rate control: a line with a predicted length cannot be fitted by speaking it at a speed`);
    fit = await fitPredicted(natural.predicted, fitSeconds, say, fitOptions, ctx);
  } else {
    const f = await fitDuration(natural, fitSeconds, { ...fitOptions, ...(engine.capabilities.rateControl ? { resynthesize: say } : {}) }, ctx);
    fit = { ...f, passes: f.speed !== 1 ? 1 : 0, natural: 'measured' };
  }
  const sr = fit.audio.sampleRate;
  let x = fit.audio.channels[0]!;
  const keep = Math.max(1, Math.round(keepSeconds * sr));
  const cutSeconds = Math.max(0, (x.length - keep) / sr);
  if (x.length > keep) {
    x = x.slice(0, keep);
    const fade = Math.min(keep, Math.round(0.01 * sr));
    for (let i = 0; i < fade; i++) x[keep - 1 - i] = x[keep - 1 - i]! * (i / fade);
  }
  const speechSeconds = Math.max(0, fit.durationSeconds - fit.paddedSeconds);
  const ext = speechExtent(x, sr);
  const syllables = await countSyllables(text, req.locale, ctx.signal ? { signal: ctx.signal } : {}).catch((e: unknown) => {
    ctx.logger.warn({ err: e, locale: req.locale }, 'could not count the syllables of a line; its articulation rate is not measured');
    return null;
  });
  return {
    audio: { sampleRate: sr, channels: [x] },
    durationSeconds: x.length / sr,
    speechSeconds,
    speedFactor: speechSeconds > 0 ? fit.sourceSeconds / speechSeconds : 0,
    speed: fit.speed,
    tempo: fit.tempo,
    passes: fit.passes,
    natural: fit.natural,
    cutSeconds,
    words: estimateWords(text, ext.start / sr, ext.end / sr),
    pace,
    syllables,
    articulationSeconds: Math.round(speechSecondsOfAudio(x, sr) * 1e4) / 1e4,
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
