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

export interface AsrEngine extends Engine {
  transcribe(audio: SpeechAudio, request: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput>;
}

