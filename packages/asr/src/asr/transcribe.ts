/**
 * transcribe: the source transcript of an audio. With `sourceSrt` the given text is the
 * transcript (see source-text.ts). Otherwise the engine comes from ASR_ENGINES for the locale
 * (`auto`: the first engine that supports it as installed, Whisper then pocketsphinx; an explicit
 * one that cannot transcribe it is never replaced by another), VAD finds the speech (or the
 * caller passes a SpeechDetection it already has) and the engine decodes the speech regions.
 * Errors: AssetError `unsupported_source_language` (no engine for the locale and no source_srt,
 * naming what to install), AssetError `empty_transcript` (no speech / no words).
 */
import { AssetError, engineChoiceOf, EngineUnavailableError, getLocale, resolveContext, subContext, ValidationError, type PartialContext, type ResolvedEngine, type StageContext } from '@dub/core';
import { createEngineEnv, runOnSpeech, type EngineEnv, type EngineEnvOptions } from '../engine-env.js';
import type { AudioInput, SpeechAudio, SpeechAudioOptions } from '../speech-audio.js';
import { resolveVadOptions, runVad, type VadOptions } from '../vad/detect-speech.js';
import type { SpeechDetection } from '../vad/types.js';
import { resolveWhisperOptions, type WhisperOptions } from '../whisper/options.js';
import { whisperLanguageOf } from '../whisper/languages.js';
import { resolvePocketsphinxOptions, type PocketsphinxOptions } from './pocketsphinx.js';
import { ASR_ENGINE_IDS, ASR_ENGINES, unsupportedSourceLanguage, type AsrEngineEnv, type AsrEngineId, type ResolvedAsrEngineOptions } from './registry.js';
import { parseSourceTranscript, sourceTextNeedsSpeech, type SourceTextFormat } from './source-text.js';
import type { AsrEngine, AsrSegment, DetectedLanguage, RemovedRepeats, SkippedWindow } from './types.js';

export interface TranscribeOptions extends EngineEnvOptions, SpeechAudioOptions {
  /** Contract locale of the source, e.g. "en-US". */
  locale: string;
  /** `auto` (default: Whisper when installed and it speaks the locale, else pocketsphinx for English) or an engine id (DUB_ASR_ENGINE's values). */
  engine?: AsrEngineId | 'auto';
  /** The asset's source_srt: when given it is the transcript. */
  sourceSrt?: string;
  /** Speech regions already found (skips VAD). */
  speech?: SpeechDetection;
  vad?: Omit<VadOptions, keyof EngineEnvOptions | keyof SpeechAudioOptions>;
  pocketsphinx?: PocketsphinxOptions;
  whisper?: WhisperOptions;
  /**
   * Remove the repeats of a repetition loop the engine decoded at every temperature (Whisper), its
   * first copy kept and each removal listed in `removedRepeats`, instead of only marking its words
   * `loop` (default false: a back-transcription measured against known text keeps them).
   */
  removeLoopRepeats?: boolean;
  /**
   * When Whisper judges every window silent although the VAD found speech there, keep what it
   * decoded (each window listed in `skippedWindows` with `kept: true`) instead of failing with
   * `empty_transcript` (default false).
   */
  noSpeechFallback?: boolean;
}

export interface ResolvedTranscribeOptions {
  locale: string;
  engine: AsrEngineId | 'auto';
  sourceSrt: string | undefined;
  speech: SpeechDetection | undefined;
  vad: VadOptions;
  engines: ResolvedAsrEngineOptions;
  env: EngineEnvOptions;
  audio: SpeechAudioOptions;
  removeLoopRepeats: boolean;
  noSpeechFallback: boolean;
}

export function resolveTranscribeOptions(o: TranscribeOptions): ResolvedTranscribeOptions {
  if (!o || typeof o.locale !== 'string' || !getLocale(o.locale)) throw new ValidationError(`unknown source locale ${JSON.stringify(o?.locale)}`, { field: 'locale' });
  const env: EngineEnvOptions = { ...(o.models ? { models: o.models } : {}), ...(o.sessions ? { sessions: o.sessions } : {}), ...(o.device ? { device: o.device } : {}), ...(o.threads !== undefined ? { threads: o.threads } : {}) };
  const audio: SpeechAudioOptions = { ...(o.tmpDir ? { tmpDir: o.tmpDir } : {}), ...(o.ffmpegPath ? { ffmpegPath: o.ffmpegPath } : {}), ...(o.ffprobePath ? { ffprobePath: o.ffprobePath } : {}) };
  return {
    locale: o.locale,
    engine: engineChoiceOf('engine', o.engine, ASR_ENGINE_IDS),
    sourceSrt: o.sourceSrt !== undefined && o.sourceSrt.trim() !== '' ? o.sourceSrt : undefined,
    speech: o.speech,
    vad: { ...o.vad, ...env, ...audio },
    engines: {
      pocketsphinx: resolvePocketsphinxOptions({ ...(o.tmpDir ? { tmpDir: o.tmpDir } : {}), ...o.pocketsphinx }),
      whisper: resolveWhisperOptions(o.whisper),
    },
    env,
    audio,
    removeLoopRepeats: o.removeLoopRepeats === true,
    noSpeechFallback: o.noSpeechFallback === true,
  };
}

export interface Transcription {
  /** Engine id, or "source_srt". */
  engine: string;
  locale: string;
  /** Seconds of audio. */
  duration: number;
  segments: AsrSegment[];
  /** The speech regions used (VAD). */
  speech?: SpeechDetection;
  /** For source_srt: how the text was read. */
  sourceFormat?: SourceTextFormat;
  detectedLanguage?: DetectedLanguage;
  /** Windows the engine skipped as no speech (Whisper), with the numbers that decided it. */
  skippedWindows?: SkippedWindow[];
  /** Repetition loops cut to their first copy (removeLoopRepeats), with the removed text and the reason. */
  removedRepeats?: RemovedRepeats[];
}

/** The registry env of these options: the caller's env with the engines' resolved options. */
function asrHost(o: ResolvedTranscribeOptions, env: EngineEnv): AsrEngineEnv {
  return { ...env, engines: o.engines };
}

/** Which engines (best first) can transcribe `locale` with what is installed. */
export async function engineSupport(locale: string, o: ResolvedTranscribeOptions, env: EngineEnv): Promise<AsrEngineId[]> {
  const out: AsrEngineId[] = [];
  for (const id of ASR_ENGINES.preference) if ((await ASR_ENGINES.get(id).supports(locale, asrHost(o, env))).ok) out.push(id as AsrEngineId);
  return out;
}

/**
 * The engine of ASR_ENGINES for these options, why, and its model files' identity; fails with
 * `unsupported_source_language` naming what to install when `auto` finds none for the locale or
 * the explicit engine cannot transcribe it.
 */
export async function resolveAsrEngine(o: ResolvedTranscribeOptions, env: EngineEnv): Promise<ResolvedEngine<AsrEngine, ResolvedAsrEngineOptions, AsrEngineEnv>> {
  try {
    return await ASR_ENGINES.resolve(o.engine, o.locale, asrHost(o, env));
  } catch (e) {
    if (o.engine === 'auto' && e instanceof EngineUnavailableError) throw unsupportedSourceLanguage(o.locale, ASR_ENGINE_IDS);
    throw e;
  }
}

/** Pick the engine for the locale, or fail with unsupported_source_language. */
export async function chooseAsrEngine(o: ResolvedTranscribeOptions, env: EngineEnv): Promise<AsrEngineId> {
  return (await resolveAsrEngine(o, env)).id as AsrEngineId;
}

async function speechOf(audio: SpeechAudio, o: ResolvedTranscribeOptions, env: EngineEnv, ctx: StageContext): Promise<SpeechDetection> {
  return o.speech ?? runVad(audio, resolveVadOptions(o.vad), env, ctx);
}

function empty(detail: string): AssetError {
  return new AssetError('empty_transcript', detail);
}

export async function runTranscribe(audio: SpeechAudio, o: ResolvedTranscribeOptions, env: EngineEnv, ctx: StageContext): Promise<Transcription> {
  if (o.sourceSrt !== undefined) {
    const speech = sourceTextNeedsSpeech(o.sourceSrt) ? await speechOf(audio, o, env, subContext(ctx, 'vad', 0, 0.9)) : undefined;
    const { format, segments } = parseSourceTranscript(o.sourceSrt, o.locale, speech?.regions ?? [], audio.duration);
    if (!segments.length) throw empty('source_srt holds no text');
    return { engine: 'source_srt', locale: o.locale, duration: audio.duration, segments, sourceFormat: format, ...(speech ? { speech } : {}) };
  }
  const chosen = await resolveAsrEngine(o, env);
  const id = chosen.id;
  const engine = await ASR_ENGINES.create(id, o.engines, asrHost(o, env));
  const speech = await speechOf(audio, o, env, subContext(ctx, 'vad', 0, 0.2));
  if (!speech.regions.length) throw empty('no speech was found in the audio');
  ctx.logger.info({ engine: id, reason: chosen.reason, locale: o.locale, regions: speech.regions.length }, 'transcribing');
  const out = await engine.transcribe(audio, { locale: o.locale, language: whisperLanguageOf(o.locale) ?? o.locale, regions: speech.regions, ...(o.removeLoopRepeats ? { removeLoopRepeats: true } : {}), ...(o.noSpeechFallback ? { noSpeechFallback: true } : {}) }, subContext(ctx, 'asr', 0.2, 1));
  const segments = out.segments.filter((s) => s.words.length > 0);
  if (!segments.length) throw empty(`the ${id} engine recognised no words in ${speech.regions.length} speech region(s)`);
  return { engine: id, locale: o.locale, duration: audio.duration, segments, speech, ...(out.detectedLanguage ? { detectedLanguage: out.detectedLanguage } : {}), ...(out.skippedWindows ? { skippedWindows: out.skippedWindows } : {}), ...(out.removedRepeats ? { removedRepeats: out.removedRepeats } : {}) };
}

/** Transcribe `input` (a media path, samples, or an open SpeechAudio). */
export async function transcribe(input: AudioInput, options: TranscribeOptions, context: PartialContext = {}): Promise<Transcription> {
  const ctx = resolveContext(context);
  const o = resolveTranscribeOptions(options);
  return runOnSpeech(input, o, ctx, (audio, env) => runTranscribe(audio, o, env, ctx));
}

/** Engines that can transcribe `locale` here, best first (empty: provide source_srt or install one). */
export async function asrEnginesFor(locale: string, options: Omit<TranscribeOptions, 'locale'> = {}): Promise<AsrEngineId[]> {
  const o = resolveTranscribeOptions({ ...options, locale });
  const { env, release } = createEngineEnv(o.env, resolveContext().logger);
  try {
    return await engineSupport(locale, o, env);
  } finally {
    await release();
  }
}
