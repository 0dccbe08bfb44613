/**
 * Speaking at the speaker's pace: each source speaker's articulation rate (syllables of their
 * lines' source text, from espeak-ng's phonemes, over their speech in the source's speech track
 * within the lines' spans, silences of 0.25 s or more left out; without the track, their words'
 * times, which ASR often stretches over the pauses). Each dubbed line is first synthesized at the
 * engine's default rate (the `utterance`); its own rate there (its syllables over its speech)
 * gives the engine rate input (`pace`) that brings it to its speaker's rate, inside the engine's
 * natural range (@dub/voice ENGINE_PACE_RANGE): the line's length at its speaker's rate is its
 * syllables / that rate. A line's pace depends only on its own text and its speaker's source
 * speech, so an edited line moves no other line. The report reads the rates back
 * (generate-rates.ts).
 *
 * DUB_SPEAKER_PACE=off (or options.synthesis.speakerPace = false) speaks every voice at the
 * engine's default rate (pace 1), as before: for measuring what matching the pace changes.
 */
import type { ScriptSegment, StageContext, Word } from '@dub/core';
import type { AudioSource, PlanarAudio } from '@dub/media';
import { articulationRate, countSyllables, paceFor, speechSecondsOfAudio, speechSecondsOfSpans, toMono, type SpeedResponse } from '@dub/voice';
import { mapConcurrent } from './concurrent.js';

export const PACE_VERSION = 3;
export const PACE_OFF_REASON = "speaker pace off (DUB_SPEAKER_PACE=off): the voice's default rate";

export interface SpeakerPace {
  /** The speaker's articulation rate (syllables per second), null without syllables or speech time. */
  rate: number | null;
  syllables: number;
  speechSeconds: number;
  /** The voice's articulation rate at the engine's default rate over the speaker's dubbed lines, null when not measured. */
  voiceRate: number | null;
  /** The median of the rate inputs of the speaker's lines (1: the default rate). */
  pace: number;
  /** Some line's pace was held at the engine's range. */
  clamped: boolean;
  reason?: string;
  /** Where the speech time came from: the speech track, the words' times, or (neither) the lines' spans, pauses included: then the pace is not matched. */
  basis: SourceBasis;
}

export type SourceBasis = 'speech_track' | 'words' | 'span';
export const SPAN_REASON = "the source has no speech track or word times: the speaker's rate would count their pauses, so their pace is not matched";

export interface SourceLine {
  sourceSyllables: number;
  sourceSeconds: number;
  sourceRate: number | null;
  basis: SourceBasis;
}

/** A dubbed line at the engine's default rate and the rate input for its speaker. */
export interface LinePace {
  syllables: number | null;
  /** Seconds of speech of the line at the default rate, pauses excluded. */
  voiceSeconds: number;
  voiceRate: number | null;
  pace: number;
  clamped: boolean;
  reason?: string;
}

export interface PacePlan {
  speakers: Record<string, SpeakerPace>;
  lines: Record<string, SourceLine>;
}

export interface PaceInput {
  sourceLocale: string;
  /** The script's segments (source text and words, speaker). */
  segments: readonly ScriptSegment[];
  /** Words of the transcript's segments by id, for script segments without source_words. */
  transcriptWords: ReadonlyMap<string, readonly Word[]>;
  /** The speakers to plan (those with voices). */
  speakers: readonly string[];
  /**
   * The source's speech track: a line's speech time is measured in it over the line's span. Only
   * the lines' spans are read (a WavReader reads them from disk), so an hour's track is never
   * held whole; its channels are averaged span by span.
   */
  sourceSpeech?: AudioSource;
  concurrency?: number;
}

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** The seconds of a line's source speech from its words' spans with pauses left out, else its span. */
export function sourceSpeechSeconds(segment: Pick<ScriptSegment, 'start' | 'end'>, words: readonly Word[] | undefined): number {
  const inside = (words ?? []).filter((w) => w.end > w.start);
  return inside.length ? speechSecondsOfSpans(inside) : Math.max(0, segment.end - segment.start);
}

/** The mono samples of `a` from `start` to `end` seconds (clipped to the track). */
async function monoSpan(a: AudioSource, start: number, end: number): Promise<Float32Array> {
  const from = Math.min(a.frames, Math.max(0, Math.round(start * a.sampleRate)));
  const to = Math.min(a.frames, Math.max(from, Math.round(end * a.sampleRate)));
  return toMono({ channels: await a.read(from, to - from), sampleRate: a.sampleRate });
}

/** Every speaker's articulation rate and every source line's. */
export async function planPace(input: PaceInput, ctx: StageContext): Promise<PacePlan> {
  const conc = input.concurrency ?? 4;
  const opts = ctx.signal ? { signal: ctx.signal } : {};
  const spoken = input.segments.filter((s) => s.source_text.trim() !== '');
  const lineList = await mapConcurrent(spoken, conc, async (s) => {
    const syllables = await countSyllables(s.source_text, input.sourceLocale, opts);
    const a = input.sourceSpeech;
    const words = s.source_words?.length ? s.source_words : input.transcriptWords.get(s.id);
    const seconds = a ? speechSecondsOfAudio(await monoSpan(a, s.start, s.end), a.sampleRate) : sourceSpeechSeconds(s, words);
    const basis: SourceBasis = a ? 'speech_track' : words?.some((w) => w.end > w.start) ? 'words' : 'span';
    return [s.id, { sourceSyllables: syllables, sourceSeconds: r4(seconds), sourceRate: nullable(articulationRate(syllables, seconds)), basis }] as const;
  });
  const lines: Record<string, SourceLine> = Object.fromEntries(lineList);
  const speakers: Record<string, SpeakerPace> = {};
  for (const id of input.speakers) {
    let syllables = 0;
    let seconds = 0;
    let basis: SourceBasis = 'span';
    for (const s of spoken) {
      if (s.speaker !== id) continue;
      syllables += lines[s.id]!.sourceSyllables;
      seconds += lines[s.id]!.sourceSeconds;
      if (lines[s.id]!.basis !== 'span') basis = lines[s.id]!.basis;
    }
    speakers[id] = { rate: nullable(articulationRate(syllables, seconds)), syllables, speechSeconds: r4(seconds), voiceRate: null, pace: 1, clamped: false, basis };
  }
  return { speakers, lines };
}

/**
 * The rate input for a dubbed line spoken `audio` at the engine's default rate: its speaker's
 * rate over its own, inside the engine's range; 1 with the reason when off or not measurable
 * (`speakerRate` null: the speaker's rate is unknown, or only from spans with their pauses).
 */
export async function linePace(engineId: string, text: string, locale: string, audio: PlanarAudio, speakerRate: number | null, enabled: boolean, ctx: StageContext, response?: SpeedResponse): Promise<LinePace> {
  return linePaceOf(engineId, text, locale, speechSecondsOfAudio(toMono(audio), audio.sampleRate), speakerRate, enabled, ctx, response);
}

/**
 * linePace from the line's seconds of speech at the default rate, pauses excluded (measured, or
 * predicted: generate-predict.ts). `response`: the engine's measured length response to its rate
 * input (Kokoro's), which turns the length the speaker's rate asks for into the input; 1/speed
 * without it.
 */
export async function linePaceOf(engineId: string, text: string, locale: string, speechSeconds: number, speakerRate: number | null, enabled: boolean, ctx: StageContext, response?: SpeedResponse): Promise<LinePace> {
  const syllables = await countSyllables(text, locale, ctx.signal ? { signal: ctx.signal } : {}).catch(() => null);
  const voiceSeconds = r4(speechSeconds);
  const voiceRate = syllables === null ? null : nullable(articulationRate(syllables, voiceSeconds));
  if (!enabled) return { syllables, voiceSeconds, voiceRate, pace: 1, clamped: false, reason: PACE_OFF_REASON };
  const p = paceFor(engineId, speakerRate, voiceRate, response);
  return { syllables, voiceSeconds, voiceRate, pace: p.pace, clamped: p.clamped, ...(p.reason ? { reason: p.reason } : {}) };
}

/** The speakers' figures completed from their lines' paces: the voice's pooled rate, the median pace. */
export function withLinePaces(plan: PacePlan, lines: ReadonlyMap<string, { speaker: string; pace: LinePace }>): PacePlan {
  const speakers: Record<string, SpeakerPace> = {};
  for (const [id, sp] of Object.entries(plan.speakers)) {
    const mine = [...lines.values()].filter((l) => l.speaker === id).map((l) => l.pace);
    const syl = mine.reduce((a, l) => a + (l.syllables ?? 0), 0);
    const sec = mine.reduce((a, l) => a + (l.syllables !== null ? l.voiceSeconds : 0), 0);
    const paces = mine.map((l) => l.pace).sort((a, b) => a - b);
    const reason = sp.basis === 'span' && mine.some((l) => l.reason !== PACE_OFF_REASON) ? SPAN_REASON : mine.find((l) => l.reason)?.reason;
    speakers[id] = {
      ...sp,
      voiceRate: nullable(articulationRate(syl, sec)),
      pace: paces.length ? paces[Math.floor((paces.length - 1) / 2)]! : 1,
      clamped: mine.some((l) => l.clamped),
      ...(reason ? { reason } : {}),
    };
  }
  return { ...plan, speakers };
}

function nullable(x: number | null): number | null {
  return x === null ? null : r4(x);
}
