import type { StageContext } from '@dub/core';
import type { EngineEnv } from '../engine-env.js';
import type { SpeechAudio } from '../speech-audio.js';
import type { SpeechRegion } from '../vad/types.js';

export interface AsrWord {
  text: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** 0..1. */
  confidence: number;
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
}

export interface AsrEngineOutput {
  segments: AsrSegment[];
  /** The language the engine heard, when it detects one. */
  detectedLanguage?: DetectedLanguage;
  /** Windows skipped as no speech, with the numbers that decided it. */
  skippedWindows?: SkippedWindow[];
}

export interface AsrEngine {
  readonly id: string;
  transcribe(audio: SpeechAudio, request: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput>;
}

/** An engine kind: what it can do with what is installed, and how to build it. */
export interface AsrEngineProvider<O> {
  readonly id: string;
  /** Whether this engine, as installed, recognizes `locale` (checks binaries and model files, loads nothing). */
  supports(locale: string, options: O, env: EngineEnv): Promise<boolean>;
  /** What to install so that `locale` works (for error messages). */
  installHint(locale: string): string;
  create(options: O, env: EngineEnv): Promise<AsrEngine>;
}
