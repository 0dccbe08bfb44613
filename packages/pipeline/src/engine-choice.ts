/**
 * Engine choices read from the environment of the worker process (`dub run`, `dub serve`,
 * `dub worker` alike): `DUB_ASR_ENGINE` (auto, whisper, pocketsphinx), `DUB_TTS_ENGINE` (auto,
 * espeak-ng, piper), `DUB_LIPS_ENGINE` (auto, wav2lip, viseme-warp) and `DUB_SPEAKER_ENGINE`
 * (auto, mfcc, wespeaker). `auto` (or unset) picks the best installed engine that supports the
 * locale, else the offline one; an
 * explicit engine that cannot run fails the version with an error naming what is missing, it is
 * never replaced by another one. An unknown value is refused when the handlers are created.
 */
import { embeddingWindowOf } from '@dub/asr';
import { isModelAvailable, modelIdentity, resolveModelFile, ValidationError, type DeviceChoice, type ModelIdentity } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from '@dub/lips';
import { TTS_ENGINE_IDS, type TtsEngineId } from '@dub/voice';
import type { GenerateVersionOptions } from './generate.js';

export const SPEAKER_ENGINE_IDS = ['mfcc', 'wespeaker'] as const;
export type SpeakerEngineId = (typeof SPEAKER_ENGINE_IDS)[number];
export const ASR_ENGINE_IDS = ['whisper', 'pocketsphinx'] as const;
export type AsrEngineChoiceId = (typeof ASR_ENGINE_IDS)[number];

export interface EngineChoice {
  asr: 'auto' | AsrEngineChoiceId;
  voiceConversion: 'auto' | 'openvoice' | 'none';
  tts: 'auto' | TtsEngineId;
  lips: 'auto' | LipsEngineId;
  speaker: 'auto' | SpeakerEngineId;
}

function pick<T extends string>(env: Record<string, string | undefined>, name: string, known: readonly T[]): 'auto' | T {
  const raw = env[name]?.trim();
  if (!raw || raw === 'auto') return 'auto';
  if (!(known as readonly string[]).includes(raw)) throw new ValidationError(`${name}="${raw}" is not an engine: auto, ${known.join(', ')}`, { field: name });
  return raw as T;
}

export function engineChoiceFromEnv(env: Record<string, string | undefined> = process.env): EngineChoice {
  return {
    asr: pick(env, 'DUB_ASR_ENGINE', ASR_ENGINE_IDS),
    voiceConversion: pick(env, 'DUB_VOICE_CONVERSION', ['openvoice', 'none'] as const),
    tts: pick(env, 'DUB_TTS_ENGINE', TTS_ENGINE_IDS),
    lips: pick(env, 'DUB_LIPS_ENGINE', LIPS_ENGINE_IDS),
    speaker: pick(env, 'DUB_SPEAKER_ENGINE', SPEAKER_ENGINE_IDS),
  };
}

const WESPEAKER = { id: 'wespeaker-resnet34', file: 'voxceleb_resnet34_LM.onnx' };

/** The speaker engine a prepare runs: its id, the @dub/asr embedding it uses, and the identity of its model file (for cache keys). */
export interface SpeakerEngine {
  id: SpeakerEngineId;
  embedding: 'mfcc' | 'onnx';
  selected: 'auto' | 'explicit';
  reason: string;
  model?: ModelIdentity;
  /** The Kaldi fbank window the embedding model takes (its manifest entry's `fbank.window`). */
  window?: string;
}

/**
 * auto: WeSpeaker when its model is installed, else the MFCC statistics (no weights). An explicit
 * `wespeaker` whose model is missing throws the resolver's error naming `dub models fetch`.
 */
export async function resolveSpeakerEngine(choice: EngineChoice['speaker'], modelsDir: string | undefined): Promise<SpeakerEngine> {
  const where = modelsDir ? { modelsDir } : {};
  const selected = choice === 'auto' ? 'auto' : 'explicit';
  const wespeaker = choice === 'wespeaker' || (choice === 'auto' && isModelAvailable(WESPEAKER.id, [WESPEAKER.file], where));
  if (!wespeaker) return { id: 'mfcc', embedding: 'mfcc', selected, reason: choice === 'auto' ? 'auto: no WeSpeaker model here (MFCC statistics, no weights)' : 'DUB_SPEAKER_ENGINE=mfcc' };
  const file = resolveModelFile(WESPEAKER.id, WESPEAKER.file, where);
  return { id: 'wespeaker', embedding: 'onnx', selected, reason: choice === 'auto' ? 'auto: the WeSpeaker model is installed' : 'DUB_SPEAKER_ENGINE=wespeaker', model: await modelIdentity(file), window: embeddingWindowOf(WESPEAKER.id) };
}

/** The generate-version options these choices make. */
export function generateOptionsOf(choice: EngineChoice): GenerateVersionOptions {
  return {
    ...(choice.voiceConversion !== 'auto' ? { voiceConversion: choice.voiceConversion } : {}),
    ...(choice.tts !== 'auto' ? { tts: { engine: choice.tts } } : {}),
    ...(choice.lips !== 'auto' ? { lips: { engine: choice.lips } } : {}),
  };
}

/** The speech recognition engine a prepare runs, why, and the identity of its model files. */
export interface AsrEngineChoice {
  engine: string;
  selected: 'auto' | 'explicit';
  reason: string;
  /** Model files (Whisper: encoder, decoder, tokenizer); null for engines without ONNX weights. */
  model: ModelIdentity[] | null;
}

/**
 * The speech recognition engine a prepare of `locale` runs on this host and the identity (name,
 * size, sha256) of its model files, for the transcription stage's cache key: installing Whisper
 * (or replacing its model) makes the next prepare transcribe again instead of reusing the old
 * transcript. auto: the best engine that speaks the locale; `none` when none does (the stage then
 * fails naming what to install). An explicit engine that cannot transcribe the locale fails here
 * with `unsupported_source_language` naming its install command, never replaced by another one.
 */
export async function asrEngineIdentity(locale: string, modelsDir: string | undefined, choice: EngineChoice['asr'] = 'auto'): Promise<AsrEngineChoice> {
  const { asrEnginesFor, chooseAsrEngine, resolveTranscribeOptions, resolveWhisperOptions, WHISPER_FILES } = await import('@dub/asr');
  const where = modelsDir ? { modelsDir } : {};
  let engine: string | undefined;
  let reason: string;
  if (choice === 'auto') {
    const ok = await asrEnginesFor(locale, modelsDir ? { models: where } : {});
    engine = ok[0];
    reason = engine === 'whisper' ? `auto: Whisper is installed and speaks ${locale}` : engine ? `auto: the engine installed here that speaks ${locale}` : `auto: no engine here speaks ${locale}`;
  } else {
    const [{ silentLogger }, { SessionCache }] = await Promise.all([import('@dub/core'), import('@dub/onnx')]);
    const sessions = new SessionCache();
    try {
      const o = resolveTranscribeOptions({ locale, engine: choice, ...(modelsDir ? { models: where } : {}) });
      engine = await chooseAsrEngine(o, { models: where, sessions, device: 'cpu', threads: 0, logger: silentLogger });
    } finally {
      await sessions.disposeAll();
    }
    reason = `DUB_ASR_ENGINE=${choice}`;
  }
  const selected = choice === 'auto' ? 'auto' : 'explicit';
  if (!engine) return { engine: 'none', selected, reason, model: null };
  if (engine !== 'whisper') return { engine, selected, reason, model: null };
  const model = resolveWhisperOptions().model;
  const files: ModelIdentity[] = [];
  for (const f of [WHISPER_FILES.encoder, WHISPER_FILES.decoder, WHISPER_FILES.tokenizer]) files.push(await modelIdentity(resolveModelFile(model, f, where)));
  return { engine, selected, reason, model: files };
}

/** The speech synthesis engine a generate runs, why, and its voice model's identity (Piper, Chatterbox). */
export interface TtsEngineChoice {
  id: TtsEngineId;
  selected: 'auto' | 'explicit';
  reason: string;
  model?: ModelIdentity;
}

/**
 * auto: Chatterbox Multilingual (zero-shot cloning of each speaker's voice) when its export is
 * installed, it speaks the locale and the device is CUDA (on CPU it is far too slow for a dub:
 * a 0.5 B-parameter language model decoding 25 tokens per second of speech); else Piper when the
 * locale's default Piper voice is installed (`piper-<voice>` in the models dir); else espeak-ng
 * (offline, every target locale). An explicit `piper` or `chatterbox` without its model fails
 * with the resolver's error naming `dub models fetch ...`, never replaced by another engine.
 */
export async function resolveTtsEngine(choice: EngineChoice['tts'], locale: string, modelsDir: string | undefined, device: DeviceChoice = 'cpu'): Promise<TtsEngineChoice> {
  const { PIPER_DEFAULT_VOICES, ChatterboxEngine, chatterboxLanguage, CHATTERBOX_MODEL_ID, CHATTERBOX_FILES } = await import('@dub/voice');
  const where = modelsDir ? { modelsDir } : {};
  const voice = PIPER_DEFAULT_VOICES[locale];
  const files = voice ? { id: `piper-${voice}`, model: `${voice}.onnx`, config: `${voice}.onnx.json` } : undefined;
  if (choice === 'espeak-ng') return { id: 'espeak-ng', selected: 'explicit', reason: 'DUB_TTS_ENGINE=espeak-ng' };
  if (choice === 'chatterbox') {
    if (!chatterboxLanguage(locale)) throw new ValidationError(`DUB_TTS_ENGINE=chatterbox: Chatterbox Multilingual does not speak ${locale}`, { field: 'DUB_TTS_ENGINE' });
    return { id: 'chatterbox', selected: 'explicit', reason: 'DUB_TTS_ENGINE=chatterbox', model: await modelIdentity(ChatterboxEngine.files(where).languageModel) };
  }
  if (choice === 'piper') {
    if (!files) throw new ValidationError(`DUB_TTS_ENGINE=piper: no Piper voice is listed for ${locale} (voices: ${Object.keys(PIPER_DEFAULT_VOICES).join(', ')})`, { field: 'DUB_TTS_ENGINE' });
    resolveModelFile(files.id, files.config, where);
    return { id: 'piper', selected: 'explicit', reason: 'DUB_TTS_ENGINE=piper', model: await modelIdentity(resolveModelFile(files.id, files.model, where)) };
  }
  const graphs = [CHATTERBOX_FILES.speechEncoder, CHATTERBOX_FILES.embedTokens, CHATTERBOX_FILES.languageModel, CHATTERBOX_FILES.decoder, CHATTERBOX_FILES.tokenizer];
  const cloning = !!chatterboxLanguage(locale) && isModelAvailable(CHATTERBOX_MODEL_ID, graphs, where);
  if (cloning && device !== 'cpu') {
    return { id: 'chatterbox', selected: 'auto', reason: `auto: Chatterbox Multilingual is installed and the device is ${device} (each speaker's voice cloned from their reference clip)`, model: await modelIdentity(ChatterboxEngine.files(where).languageModel) };
  }
  const notCloning = cloning ? '; Chatterbox Multilingual is installed but auto uses it only on a CUDA device (DUB_DEVICE=cuda), it is far too slow on CPU (DUB_TTS_ENGINE=chatterbox forces it)' : '';
  if (files && isModelAvailable(files.id, [files.model, files.config], where)) {
    return { id: 'piper', selected: 'auto', reason: `auto: the Piper voice ${voice} is installed${notCloning}`, model: await modelIdentity(resolveModelFile(files.id, files.model, where)) };
  }
  return { id: 'espeak-ng', selected: 'auto', reason: (files ? `auto: no Piper voice here (npx dub models fetch ${files.id})` : `auto: no Piper voice is listed for ${locale}`) + notCloning };
}

export const VOICE_CONVERSION_IDS = ['openvoice', 'none'] as const;
export type VoiceConversionId = (typeof VOICE_CONVERSION_IDS)[number];

/** The voice conversion a generate runs after synthesis, why, and its model files' identity. */
export interface VoiceConversionChoice {
  id: VoiceConversionId;
  selected: 'auto' | 'explicit';
  reason: string;
  /** The export's folder and its tone_clone_model identity (openvoice). */
  dir?: string;
  model?: ModelIdentity;
  files?: ModelIdentity[];
}

/**
 * DUB_VOICE_CONVERSION: auto (OpenVoice V2's tone-colour converter when its export is installed,
 * else none), openvoice (fails naming `dub models fetch openvoice-v2-tone-clone` when missing),
 * none.
 */
export async function resolveVoiceConversion(choice: 'auto' | VoiceConversionId, modelsDir: string | undefined): Promise<VoiceConversionChoice> {
  if (choice === 'none') return { id: 'none', selected: 'explicit', reason: 'DUB_VOICE_CONVERSION=none' };
  const { ToneColorConverter, OPENVOICE_MODEL_ID, OPENVOICE_FILES } = await import('@dub/voice');
  const where = modelsDir ? { modelsDir } : {};
  const installed = isModelAvailable(OPENVOICE_MODEL_ID, Object.values(OPENVOICE_FILES), where);
  if (choice === 'auto' && !installed) return { id: 'none', selected: 'auto', reason: `auto: no voice conversion model here (npx dub models fetch ${OPENVOICE_MODEL_ID})` };
  const files = ToneColorConverter.files(where);
  const ids = await Promise.all([files.clone, files.extract, files.config].map((f) => modelIdentity(f)));
  return {
    id: 'openvoice',
    selected: choice === 'auto' ? 'auto' : 'explicit',
    reason: choice === 'auto' ? 'auto: the OpenVoice V2 tone-colour converter is installed' : 'DUB_VOICE_CONVERSION=openvoice',
    dir: files.clone.slice(0, files.clone.lastIndexOf('/')),
    model: ids[0]!,
    files: ids,
  };
}
