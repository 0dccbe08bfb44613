/**
 * The options of generateVersion (generate.ts), in a module of their own so that the stages'
 * modules (generate-synthesis.ts, redub.ts, ...) take their type without importing generate.ts.
 */
import type { LipsOptions } from '@dub/lips';
import type { LoudnessTarget } from '@dub/mix';
import type { TranslateConfig } from '@dub/translate';
import type { TtsEngineConfig, TtsEngineId } from '@dub/voice';
import type { EngineChoice } from './engine-choice.js';

export interface GenerateVersionOptions {
  /** TTS engine (default espeak-ng) and its options. */
  tts?: { engine?: TtsEngineId; config?: TtsEngineConfig };
  /** Loudness target of the dubbed track (default -16 LUFS, -1.5 dBTP). */
  loudness?: Partial<LoudnessTarget>;
  /** Voice-over ducking and delay (defaults: 12 dB, 0.3 s). */
  voiceOver?: { duckDb?: number; delaySeconds?: number };
  /** Lips options for with_lips (engine, model files, encoding); the job's lips_model picks the profile. */
  lips?: LipsOptions;
  /** Voice conversion after synthesis (default auto: OpenVoice V2 when installed, else none). */
  voiceConversion?: 'openvoice' | 'none';
  /** Placement of lines: speed cap and limit (defaults PLACEMENT_DEFAULTS: 1.25, 1.6). */
  /** turns: place a speaker's lines by turns (TURN_DEFAULTS; default true unless DUB_PLACEMENT_TURNS=off; generate-placement.ts). */
  placement?: { speedCap?: number; speedLimit?: number; turns?: boolean };
  /** Translation configuration, for a shorter line where the engine takes a length budget (default: loadTranslateConfig(process.env)). */
  translate?: TranslateConfig;
  /** Engines of the quality measurements: back-transcription (ASR, auto by default) and speaker similarity (DUB_SPEAKER_ENGINE by default). */
  quality?: { asr?: EngineChoice['asr']; speaker?: EngineChoice['speaker'] };
  /** The dubbed track's AAC chunks (defaults encodeAudioChunked's: 256 AAC frames, 5.5 s at 48 kHz; whole encode when over half are new). */
  audio?: { chunkFrames?: number; wholeEncodeFraction?: number };
  /**
   * Lines synthesized and fitted at once (default linesAtOnce: the cores, at most 4, for espeak-ng; 1 for model engines). The outputs do not depend on it.
   * speakerPace: each speaker's lines at their articulation rate (default: true unless DUB_SPEAKER_PACE=off; generate-pace.ts).
   */
  synthesis?: { linesAtOnce?: number; speakerPace?: boolean };
}
