/**
 * Speaking at the speaker's pace: each source speaker's articulation rate (syllables of their
 * lines' source text, from espeak-ng's phonemes, over their speech in the source's speech track
 * within the lines' spans, silences of 0.25 s or more left out; without the track, their words'
 * times, which ASR often stretches over the pauses), the rate of the speaker's voice at the engine's default rate
 * (syllables over speech time of a sample of the speaker's dubbed lines, synthesized at rate 1),
 * and the engine rate input (`pace`) every line of the speaker is synthesized at before any
 * fitting: speaker rate / voice rate, inside the engine's natural range (@dub/voice
 * ENGINE_PACE_RANGE). Then a line's dubbed text at the speaker's rate lasts its syllables /
 * speaker rate. The report reads the rates back (generate-rates.ts).
 *
 * DUB_SPEAKER_PACE=off (or options.synthesis.speakerPace = false) speaks every voice at the
 * engine's default rate (pace 1), as before: for measuring what matching the pace changes.
 */
import type { ScriptSegment, StageContext, Word } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { articulationRate, countSyllables, paceFor, speechSecondsOfAudio, speechSecondsOfSpans, toMono, type VoiceSettings } from '@dub/voice';
import { mapConcurrent } from './concurrent.js';

export const PACE_VERSION = 1;
/** The sample of a speaker's dubbed lines the voice's rate is measured on: whole lines, at least this many characters when the speaker has them. */
export const CALIBRATION_CHARS = 150;

export interface SpeakerPace {
  /** The speaker's articulation rate (syllables per second), null without syllables or speech time. */
  rate: number | null;
  syllables: number;
  speechSeconds: number;
  /** The voice's articulation rate at the engine's default rate, null when not measured. */
  voiceRate: number | null;
  /** The engine's rate input for the speaker's lines (1: the default rate). */
  pace: number;
  clamped: boolean;
  reason?: string;
}

export interface LinePace {
  sourceSyllables: number;
  sourceSeconds: number;
  sourceRate: number | null;
}

export interface PacePlan {
  speakers: Record<string, SpeakerPace>;
  lines: Record<string, LinePace>;
}

export interface PaceInput {
  engineId: string;
  sourceLocale: string;
  targetLocale: string;
  /** The script's segments (source text and words, target text, speaker). */
  segments: readonly ScriptSegment[];
  /** Words of the transcript's segments by id, for script segments without source_words. */
  transcriptWords: ReadonlyMap<string, readonly Word[]>;
  /** The source's speech track (mono): a line's speech time is measured in it over the line's span. */
  sourceSpeech?: { samples: Float32Array; sampleRate: number };
  voices: Readonly<Record<string, VoiceSettings>>;
  /** Match the speakers' pace (false: every voice at the engine's default rate). */
  enabled: boolean;
  /** The text spoken with a voice at the engine's default rate. */
  speak(text: string, voice: VoiceSettings): Promise<PlanarAudio>;
  concurrency?: number;
}

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** The seconds of a line's source speech: its words' spans with pauses left out, else its span. */
export function sourceSpeechSeconds(segment: Pick<ScriptSegment, 'start' | 'end'>, words: readonly Word[] | undefined): number {
  const inside = (words ?? []).filter((w) => w.end > w.start);
  return inside.length ? speechSecondsOfSpans(inside) : Math.max(0, segment.end - segment.start);
}

/** The sample of a speaker's dubbed lines (in time order) the voice's rate is measured on. */
export function calibrationText(segments: readonly ScriptSegment[], speaker: string): string {
  const out: string[] = [];
  let chars = 0;
  for (const s of [...segments].sort((a, b) => a.start - b.start)) {
    if (s.speaker !== speaker || s.target_text.trim() === '') continue;
    out.push(s.target_text.trim());
    chars += s.target_text.length;
    if (chars >= CALIBRATION_CHARS) break;
  }
  return out.join(' ');
}

export async function planPace(input: PaceInput, ctx: StageContext): Promise<PacePlan> {
  const conc = input.concurrency ?? 4;
  const opts = ctx.signal ? { signal: ctx.signal } : {};
  const spoken = input.segments.filter((s) => s.source_text.trim() !== '');
  const lineList = await mapConcurrent(spoken, conc, async (s) => {
    const syllables = await countSyllables(s.source_text, input.sourceLocale, opts);
    const a = input.sourceSpeech;
    const seconds = a
      ? speechSecondsOfAudio(a.samples.subarray(Math.max(0, Math.round(s.start * a.sampleRate)), Math.max(0, Math.round(s.end * a.sampleRate))), a.sampleRate)
      : sourceSpeechSeconds(s, s.source_words?.length ? s.source_words : input.transcriptWords.get(s.id));
    return [s.id, { sourceSyllables: syllables, sourceSeconds: r4(seconds), sourceRate: nullable(articulationRate(syllables, seconds)) }] as const;
  });
  const lines: Record<string, LinePace> = Object.fromEntries(lineList);
  const speakerIds = Object.keys(input.voices);
  const speakers: Record<string, SpeakerPace> = {};
  await mapConcurrent(speakerIds, 1, async (id) => {
    let syllables = 0;
    let seconds = 0;
    for (const s of spoken) {
      if (s.speaker !== id) continue;
      syllables += lines[s.id]!.sourceSyllables;
      seconds += lines[s.id]!.sourceSeconds;
    }
    const rate = nullable(articulationRate(syllables, seconds));
    const base = { rate, syllables, speechSeconds: r4(seconds) };
    if (!input.enabled) {
      speakers[id] = { ...base, voiceRate: null, pace: 1, clamped: false, reason: "speaker pace off (DUB_SPEAKER_PACE=off): the voice's default rate" };
      return;
    }
    const probe = paceFor(input.engineId, 5, 5);
    const text = calibrationText(input.segments, id);
    if (probe.reason || rate === null || text === '') {
      speakers[id] = { ...base, voiceRate: null, pace: 1, clamped: false, reason: probe.reason ?? (rate === null ? 'no syllables or speech time measured for the speaker' : 'the speaker has no dubbed line') };
      return;
    }
    const audio = await input.speak(text, input.voices[id]!);
    const voiceSyllables = await countSyllables(text, input.targetLocale, opts);
    const voiceRate = nullable(articulationRate(voiceSyllables, speechSecondsOfAudio(toMono(audio), audio.sampleRate)));
    const p = paceFor(input.engineId, rate, voiceRate);
    speakers[id] = { ...base, voiceRate, pace: p.pace, clamped: p.clamped, ...(p.reason ? { reason: p.reason } : {}) };
  });
  return { speakers, lines };
}

function nullable(x: number | null): number | null {
  return x === null ? null : r4(x);
}
