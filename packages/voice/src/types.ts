/**
 * The speech synthesis contract: text in one contract locale and a voice description in, mono
 * float audio out. Engines implement `TtsEngine`; callers use `synthesize()` or an engine from
 * `TTS_ENGINES.create()`.
 */
import type { PlanarAudio } from '@dub/media';
import type { Engine, StageContext } from '@dub/core';

/**
 * How a voice sounds, as the engines understand it. Voice matching, library voices and
 * anonymization all produce one of these.
 */
export interface VoiceSettings {
  /** espeak-ng voice variant (e.g. "m3", "f3"); "" for the language's default voice. */
  variant: string;
  /** espeak-ng pitch parameter 0..99 (base pitch; the F0 it gives depends on the variant). */
  pitch: number;
  /** Natural speaking rate in words per minute (espeak-ng -s, 80..450). */
  wordsPerMinute: number;
  /** Output amplitude 0..200 (espeak-ng -a; 100 is espeak's default). */
  amplitude: number;
  /** Neural engines: the voice model id (e.g. a Piper voice "es_ES-davefx-medium"). */
  model?: string;
  /** Neural engines: speaker id inside a multi-speaker model. */
  speakerId?: number;
  /**
   * Timbre match: gains in dB for the bands of TIMBRE_BANDS (matching/timbre.ts), applied to the
   * engine's output to move its spectral envelope toward the speaker's. Absent: no filtering.
   */
  timbre?: number[];
  /**
   * Voice conversion: the speaker's tone colour (256 values, OpenVoice V2) the engine's output is
   * converted to when a converter is installed (withToneConversion). Absent: no conversion.
   */
  toneColor?: number[];
  /**
   * Voice cloning (engines with capabilities.voiceCloning: Chatterbox): the speaker's reference
   * clip the line is spoken in the voice of: a local audio file, or in generation the blob key of
   * the speaker's reference clip (the engine's referenceFile resolves it). Absent: the engine's
   * default voice.
   */
  reference?: string;
}

export interface SynthesisRequest {
  text: string;
  /** Contract locale of the text, e.g. "es-ES". */
  locale: string;
  voice: VoiceSettings;
  /** Speed relative to the voice's natural rate (1 = natural, 1.2 = 20 % faster). */
  speed: number;
  /**
   * The longest the line may last in seconds (its time slot at the fitting's speed limit): engines
   * that generate open-ended (Chatterbox) cap their new tokens there. Absent: the engine's own cap.
   */
  maxSeconds?: number;
}

export interface TtsCapabilities {
  /** The engine can change its speaking rate (duration fitting re-synthesizes before stretching). */
  rateControl: boolean;
  /** The engine honours VoiceSettings.pitch/variant (voice matching and anonymization act on them). */
  pitchControl: boolean;
  /** Sample rate of the audio it returns. */
  sampleRate: number;
  /** The engine speaks in the voice of a reference clip (VoiceSettings.reference). */
  voiceCloning?: boolean;
  /**
   * The engine has a library of voices and picks one per speaker by family and F0 (Kokoro:
   * `chooseVoice`, VoiceSettings.model names the voice), as the espeak-ng matcher picks a variant.
   */
  voiceChoice?: boolean;
}

export interface TtsEngine extends Engine {
  readonly capabilities: TtsCapabilities;
  /** Whether the engine, as configured, can speak this contract locale. */
  supportsLocale(locale: string): Promise<boolean>;
  /** Mono audio at `capabilities.sampleRate`. Empty text gives empty audio. */
  synthesize(request: SynthesisRequest, ctx: StageContext): Promise<PlanarAudio>;
  /**
   * Engines with capabilities.voiceChoice: the voice for a speaker of this F0 and family (speaker
   * `speakerIndex` of the asset, moved away by `anonymization` 0..1); `settings.model` names it.
   */
  chooseVoice?(profile: { medianF0: number; gender: 'male' | 'female' }, request: { locale: string; speakerIndex?: number; anonymization?: number }): { settings: VoiceSettings; family: 'male' | 'female'; targetF0: number };
  /** The model file that speaks `locale` (engines with ONNX voices), for provenance and cache keys; undefined for engines without one. */
  modelFile?(locale: string): string | undefined;
  /**
   * The count a line's length at speed 1 grows in proportion to, for one voice (Kokoro: the
   * phoneme tokens the model reads, from the espeak-ng phonemes `synthesize` uses): lets duration
   * fitting predict a line's length before speaking it, and speak it once at the speed it needs.
   * Absent for engines whose length is not known to follow a count.
   */
  lengthUnits?(request: Pick<SynthesisRequest, 'text' | 'locale' | 'voice'>, ctx: StageContext): Promise<number>;
}

/** espeak-ng's own defaults, used where a caller gives no voice. */
export const DEFAULT_VOICE: Readonly<VoiceSettings> = Object.freeze({ variant: '', pitch: 50, wordsPerMinute: 165, amplitude: 100 });
