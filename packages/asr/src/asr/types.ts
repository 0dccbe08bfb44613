import type { Engine, StageContext } from '@dub/core';
import type { SpeechAudio } from '../speech-audio.js';
import type { SpeechRegion } from '../vad/types.js';

export interface AsrWord {
  text: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** 0..1. */
  confidence: number;
  /** Part of a repetition loop the recognizer decoded (Whisper: one phrase again and again, a hallucination; repetition.ts). */
  loop?: boolean;
  /** Timed by the recognizer's own alignment (Whisper: cross-attention, as openai's word_timestamps), not spread over its segment. */
  aligned?: boolean;
}

export interface AsrSegment {
  start: number;
  end: number;
  text: string;
  words: AsrWord[];
  /** Speaker id, once diarization has labelled the segment. */
  speaker?: string;
}

export interface AsrRequest {
  /** Contract locale, e.g. "en-US". */
  locale: string;
  /** Engine language code (ISO 639-1 where it exists). */
  language: string;
  /** Where the speech is; engines only decode these. */
  regions: readonly SpeechRegion[];
  /**
   * Remove the repeats of a repetition loop that survived every temperature (keeping its first
   * copy; listed in the output's `removedRepeats`) instead of only marking its words `loop`. For a
   * transcript that is dubbed; a back-transcription, measured against known text, keeps them.
   */
  removeLoopRepeats?: boolean;
  /**
   * When the engine judges every window silent (Whisper's no-speech check) although the regions
   * hold speech (a VAD found it), keep what it decoded there rather than nothing, each such
   * window listed in `skippedWindows` with `kept: true`. For a transcript that is dubbed: an empty
   * one fails the job, though the speech is there.
   */
  noSpeechFallback?: boolean;
}

export interface DetectedLanguage {
  /** Engine language code, e.g. "en". */
  language: string;
  probability: number;
}

/** A window the engine judged silent and did not transcribe (Whisper's no-speech check). */
export interface SkippedWindow {
  start: number;
  end: number;
  noSpeechProbability: number;
  avgLogprob: number;
  compressionRatio: number;
  temperature: number;
  /** Transcribed after all (noSpeechFallback: every window was judged silent). */
  kept?: boolean;
}

/**
 * The repeats of a repetition loop taken out of the transcript (Whisper: one phrase decoded again
 * and again at every temperature, a hallucination): the first copy of the phrase stays, the
 * copies after it are removed. Times are seconds of the audio.
 */
export interface RemovedRepeats {
  /** The removed words: from the first repeat's start to the last one's end, and their text. */
  start: number;
  end: number;
  text: string;
  /** The copy kept (the loop's first), and where it is. */
  kept: string;
  keptStart: number;
  keptEnd: number;
  /** Words per copy, and whole copies decoded in a row (the kept one included). */
  period: number;
  copies: number;
  reason: string;
}

export interface AsrEngineOutput {
  segments: AsrSegment[];
  /** The language the engine heard, when it detects one. */
  detectedLanguage?: DetectedLanguage;
  /** Windows skipped as no speech, with the numbers that decided it. */
  skippedWindows?: SkippedWindow[];
  /** Repetition loops whose repeats were removed (request `removeLoopRepeats`), in time order. */
  removedRepeats?: RemovedRepeats[];
}

export interface AsrEngine extends Engine {
  transcribe(audio: SpeechAudio, request: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput>;
}

