/**
 * The options of generateVersion (generate.ts) as given (GenerateVersionOptions) and resolved
 * (ResolvedGenerateOptions: every default applied once, at the start of a generation or re-dub),
 * in a module of their own so that the stages' modules (generate-stages/*, generate-synthesis.ts,
 * redub.ts, ...) take their type without importing generate.ts.
 */
import { PLACEMENT_DEFAULTS, TURN_DEFAULTS } from '@dub/core';
import type { LipsOptions } from '@dub/lips';
import { AAC_CHUNK_FRAMES } from '@dub/media';
import { STREAMING_LOUDNESS, VOICE_OVER_DEFAULTS, type LoudnessTarget } from '@dub/mix';
import type { TranslateConfig } from '@dub/translate';
import type { TtsEngineConfig, TtsEngineId } from '@dub/voice';
import { engineChoiceFromEnv, type EngineChoice } from './engine-choice.js';

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
  /** condense: where the pair's engine can give no shorter line, the source line condensed and translated again (default true unless DUB_SHORTEN_CONDENSE=off; condense.ts). */
  placement?: { speedCap?: number; speedLimit?: number; turns?: boolean; condense?: boolean };
  /** Translation configuration, for a shorter line where the engine takes a length budget (default: loadTranslateConfig(process.env)). */
  translate?: TranslateConfig;
  /** Engines of the quality measurements: back-transcription (ASR, auto by default) and speaker similarity (DUB_SPEAKER_ENGINE by default). */
  quality?: { asr?: EngineChoice['asr']; speaker?: EngineChoice['speaker'] };
  /** The dubbed track's AAC chunks (defaults encodeAudioChunked's: 256 AAC frames, 5.5 s at 48 kHz; whole encode when over half are new). */
  audio?: { chunkFrames?: number; wholeEncodeFraction?: number };
  /**
   * Lines synthesized and fitted at once (default linesAtOnce: the cores, at most 4, for espeak-ng; 1 for model engines). The outputs do not depend on it.
   * speakerPace: each speaker's lines at their articulation rate (default: true unless DUB_SPEAKER_PACE=off; generate-pace.ts).
   * predict: engines that count a line's length units (Kokoro) speak a line once, at the speed its predicted length asks for (default: true unless DUB_SYNTH_PREDICT=off; generate-predict.ts).
   * speedResponse: lengths are converted to speeds (and back) by the engine's measured response, where it has one (Kokoro: KOKORO_SPEED_RESPONSE in @dub/voice), else as 1/speed (default: true unless DUB_SPEED_RESPONSE=off).
   */
  synthesis?: { linesAtOnce?: number; speakerPace?: boolean; predict?: boolean; speedResponse?: boolean };
}

/**
 * The options of one generation with every default applied, resolved once at its start
 * (resolveGenerateOptions): the stages read these and never fall back themselves. What stays as
 * given is what a cache key names as given (`loudness.given`, `audio.chunking`) or what the engine
 * choice decides later (`tts`, `synthesis.linesAtOnce`: per engine).
 */
export interface ResolvedGenerateOptions {
  /** The TTS engine asked for (none: auto, the registry's choice) and its options. */
  tts: { engine?: TtsEngineId; config?: TtsEngineConfig };
  /** `given`: the loudness options as given (null: none; the mix's cache key names them so); `target`: STREAMING_LOUDNESS with them. */
  loudness: { given: Partial<LoudnessTarget> | null; target: LoudnessTarget };
  /** Voice-over ducking and delay (VOICE_OVER_DEFAULTS where not given). */
  voiceOver: { duckDb: number; delaySeconds: number };
  /** The lips options as given, and whether the engine was chosen ('explicit') or left to auto. */
  lips: { options?: LipsOptions; selected: 'auto' | 'explicit' };
  voiceConversion: 'auto' | 'openvoice' | 'none';
  /** Speed cap and limit (PLACEMENT_DEFAULTS; the limit never below the cap); turns: TURN_DEFAULTS, or false (line by line); condense: the condensing shortener where the engine has no other. */
  placement: { speedCap: number; speedLimit: number; turns: { pause: number; shift: number } | false; condense: boolean };
  /** The translation configuration as given (the shortener loads the environment's when none). */
  translate?: TranslateConfig;
  /** The quality measurements' engines: back-transcription (auto) and speaker similarity (DUB_SPEAKER_ENGINE). */
  quality: { asr: EngineChoice['asr']; speaker: EngineChoice['speaker'] };
  /** `chunking`: the AAC chunk options as given (the audio stage's cache key spreads them); `chunkFrames`: with the default (AAC_CHUNK_FRAMES). */
  audio: { chunking: { chunkFrames?: number; wholeEncodeFraction?: number }; chunkFrames: number };
  /** linesAtOnce: undefined where the engine decides (linesAtOnce in generate-synthesis.ts); speakerPace: DUB_SPEAKER_PACE unless given. */
  synthesis: { linesAtOnce?: number; speakerPace: boolean; predict: boolean; speedResponse: boolean };
}

/** The options of a generation (or re-dub) with their defaults, from the options given and the process environment. */
export function resolveGenerateOptions(opts: GenerateVersionOptions = {}, env: Record<string, string | undefined> = process.env): ResolvedGenerateOptions {
  const speedCap = opts.placement?.speedCap ?? PLACEMENT_DEFAULTS.speedCap;
  const turnsOn = opts.placement?.turns ?? env.DUB_PLACEMENT_TURNS !== 'off';
  return {
    tts: opts.tts ?? {},
    loudness: { given: opts.loudness ?? null, target: { ...STREAMING_LOUDNESS, ...opts.loudness } },
    voiceOver: { duckDb: opts.voiceOver?.duckDb ?? VOICE_OVER_DEFAULTS.duckDb, delaySeconds: opts.voiceOver?.delaySeconds ?? VOICE_OVER_DEFAULTS.delaySeconds },
    lips: { ...(opts.lips ? { options: opts.lips } : {}), selected: opts.lips?.engine && opts.lips.engine !== 'auto' ? 'explicit' : 'auto' },
    voiceConversion: opts.voiceConversion ?? 'auto',
    placement: { speedCap, speedLimit: Math.max(speedCap, opts.placement?.speedLimit ?? PLACEMENT_DEFAULTS.speedLimit), turns: turnsOn ? { ...TURN_DEFAULTS } : false, condense: opts.placement?.condense ?? env.DUB_SHORTEN_CONDENSE !== 'off' },
    ...(opts.translate ? { translate: opts.translate } : {}),
    quality: { asr: opts.quality?.asr ?? 'auto', speaker: opts.quality?.speaker ?? engineChoiceFromEnv(env).speaker },
    audio: { chunking: opts.audio ?? {}, chunkFrames: opts.audio?.chunkFrames ?? AAC_CHUNK_FRAMES },
    synthesis: { ...(opts.synthesis?.linesAtOnce !== undefined ? { linesAtOnce: opts.synthesis.linesAtOnce } : {}), speakerPace: opts.synthesis?.speakerPace ?? env.DUB_SPEAKER_PACE !== 'off', predict: opts.synthesis?.predict ?? env.DUB_SYNTH_PREDICT !== 'off', speedResponse: opts.synthesis?.speedResponse ?? env.DUB_SPEED_RESPONSE !== 'off' },
  };
}
