/**
 * Engine choices read from the environment of the worker process (`dub run`, `dub serve`,
 * `dub worker` alike): `DUB_SEPARATION_ENGINE` (auto, htdemucs, htdemucs-int8, none), `DUB_VAD_ENGINE` (auto,
 * silero, energy), `DUB_ASR_ENGINE` (auto, whisper, pocketsphinx), `DUB_TTS_ENGINE` (auto,
 * espeak-ng, piper), `DUB_LIPS_ENGINE` (auto, wav2lip, viseme-warp) and `DUB_SPEAKER_ENGINE`
 * (auto, mfcc, wespeaker). `auto` (or unset) picks the best installed engine that supports the
 * locale, else the offline one; an
 * explicit engine that cannot run fails the version with an error naming what is missing, it is
 * never replaced by another one. An unknown value is refused when the handlers are created.
 */
import { embeddingWindowOf, VAD_ENGINE_IDS, type VadEngineId } from '@dub/asr';
import { modelPolicyFromEnv, recordTerms, ValidationError, type EngineHost, type EngineRecord, type ModelIdentity, type ModelPolicy, type RecordTerms, type ResolvedEngine } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from '@dub/lips';
import { TTS_ENGINE_IDS, VOICE_CONVERSION_IDS, type TtsEngineId } from '@dub/voice';
import type { GenerateVersionOptions } from './generate.js';

export const SPEAKER_ENGINE_IDS = ['mfcc', 'wespeaker'] as const;
export type SpeakerEngineId = (typeof SPEAKER_ENGINE_IDS)[number];
export const ASR_ENGINE_IDS = ['whisper', 'pocketsphinx'] as const;
export type AsrEngineChoiceId = (typeof ASR_ENGINE_IDS)[number];
/** The ids of @dub/separation's SEPARATION_ENGINES (listed here so that reading the choice loads no separation code). */
export const SEPARATION_ENGINE_CHOICES = ['htdemucs', 'htdemucs-int8', 'none'] as const;
export type SeparationEngineChoiceId = (typeof SEPARATION_ENGINE_CHOICES)[number];

/** Where a stage's engine registry looks for model files (DUB_MODELS_DIR). */
export function engineHost(modelsDir: string | undefined): EngineHost {
  return { models: modelsDir ? { modelsDir } : {} };
}

export interface EngineChoice {
  separation: 'auto' | SeparationEngineChoiceId;
  vad: 'auto' | VadEngineId;
  asr: 'auto' | AsrEngineChoiceId;
  voiceConversion: 'auto' | 'openvoice' | 'none';
  tts: 'auto' | TtsEngineId;
  lips: 'auto' | LipsEngineId;
  speaker: 'auto' | SpeakerEngineId;
  /** Which weights may run (DUB_MODEL_POLICY, `--model-policy`; default any). */
  policy: ModelPolicy;
}

function pick<T extends string>(env: Record<string, string | undefined>, name: string, known: readonly T[]): 'auto' | T {
  const raw = env[name]?.trim();
  if (!raw || raw === 'auto') return 'auto';
  if (!(known as readonly string[]).includes(raw)) throw new ValidationError(`${name}="${raw}" is not an engine: auto, ${known.join(', ')}`, { field: name });
  return raw as T;
}

export function engineChoiceFromEnv(env: Record<string, string | undefined> = process.env): EngineChoice {
  return {
    separation: pick(env, 'DUB_SEPARATION_ENGINE', SEPARATION_ENGINE_CHOICES),
    vad: pick(env, 'DUB_VAD_ENGINE', VAD_ENGINE_IDS),
    asr: pick(env, 'DUB_ASR_ENGINE', ASR_ENGINE_IDS),
    voiceConversion: pick(env, 'DUB_VOICE_CONVERSION', VOICE_CONVERSION_IDS),
    tts: pick(env, 'DUB_TTS_ENGINE', TTS_ENGINE_IDS),
    lips: pick(env, 'DUB_LIPS_ENGINE', LIPS_ENGINE_IDS),
    speaker: pick(env, 'DUB_SPEAKER_ENGINE', SPEAKER_ENGINE_IDS),
    policy: modelPolicyFromEnv(env),
  };
}

/** The speaker engine a prepare runs: its id, the @dub/asr embedding it uses, and the identity of its model file (for cache keys). */
export interface SpeakerEngine {
  id: SpeakerEngineId;
  /** The record's label ("WeSpeaker ResNet34", "MFCC statistics"). */
  label: string;
  embedding: 'mfcc' | 'onnx';
  selected: 'auto' | 'explicit';
  reason: string;
  model?: ModelIdentity;
  /** The Kaldi fbank window the embedding model takes (its manifest entry's `fbank.window`). */
  window?: string;
  /** The licence fields of its weights (none for the MFCC statistics). */
  terms: RecordTerms;
}

/**
 * The speaker engine of SPEAKER_ENGINES (@dub/asr) for this choice, with what diarization needs
 * of it (embedding kind, fbank window). An explicit `wespeaker` whose model is missing throws the
 * resolver's error naming `dub models fetch`.
 */
export async function speakerEngineOf(choice: EngineChoice['speaker'], modelsDir: string | undefined): Promise<SpeakerEngine> {
  const { SPEAKER_ENGINES, SPEAKER_EMBEDDING_KIND, WESPEAKER_MODEL } = await import('@dub/asr');
  // resolve reads only where models are; the embedding itself is created by diarization with its full env
  const r = await SPEAKER_ENGINES.resolve(choice, undefined, engineHost(modelsDir) as Parameters<typeof SPEAKER_ENGINES.resolve>[2]);
  const id = r.id as SpeakerEngineId;
  return { id, label: r.record.label ?? id, embedding: SPEAKER_EMBEDDING_KIND[id]!, selected: r.selected, reason: r.reason, ...(r.models[0] ? { model: r.models[0], window: embeddingWindowOf(WESPEAKER_MODEL.id) } : {}), terms: recordTerms(r.record) };
}

/** What a job needs the model policy to check: its source locale, target locales and mode. */
export interface PolicyJob {
  /** Source locale ('' or undefined: identified later; speech recognition is then checked as auto would run it). */
  source?: string | undefined;
  targets: readonly string[];
  withLips?: boolean;
}

/**
 * The model policy (DUB_MODEL_POLICY unless given) against the explicit engine choices of a job,
 * before any work: throws the registry's ModelPolicyError (a ValidationError: `dub run` exits 2)
 * for the first explicit choice whose weights the policy refuses, naming the licence and what is
 * left. `auto` choices pass (they pass over such weights themselves and say so in their records).
 */
export async function checkModelPolicy(choice: EngineChoice, job: PolicyJob): Promise<void> {
  const policy = choice.policy;
  if (policy === 'any') return;
  const [{ ASR_ENGINES, SPEAKER_ENGINES, VAD_ENGINES }, { SEPARATION_ENGINES }, { TTS_ENGINES, VOICE_CONVERSION_ENGINES }, { LIPS_ENGINES }] = await Promise.all([import('@dub/asr'), import('@dub/separation'), import('@dub/voice'), import('@dub/lips')]);
  const host = { models: {}, policy } as never;
  SEPARATION_ENGINES.checkPolicy(choice.separation, undefined, host);
  VAD_ENGINES.checkPolicy(choice.vad, undefined, host);
  ASR_ENGINES.checkPolicy(choice.asr, job.source || undefined, host);
  SPEAKER_ENGINES.checkPolicy(choice.speaker, undefined, host);
  for (const t of job.targets) {
    TTS_ENGINES.checkPolicy(choice.tts, t, host);
    VOICE_CONVERSION_ENGINES.checkPolicy(choice.voiceConversion, t, host);
    if (job.withLips) LIPS_ENGINES.checkPolicy(choice.lips, t, host);
  }
}

/** The generate-version options these choices make. */
export function generateOptionsOf(choice: EngineChoice): GenerateVersionOptions {
  return {
    ...(choice.voiceConversion !== 'auto' ? { voiceConversion: choice.voiceConversion } : {}),
    ...(choice.tts !== 'auto' ? { tts: { engine: choice.tts } } : {}),
    ...(choice.lips !== 'auto' ? { lips: { engine: choice.lips } } : {}),
  };
}

/** The engine a prepare stage runs: its id, how it was chosen and why, its model files' identity (for cache keys) and its record. */
export interface StageEngine {
  id: string;
  selected: 'auto' | 'explicit';
  reason: string;
  /** Model files, the main one first; empty for engines without weights. */
  models: ModelIdentity[];
  /** The transcript's engine record (the stage adds the provider its model ran on). */
  record: EngineRecord;
}

function stageEngine(r: ResolvedEngine<unknown, unknown, EngineHost>): StageEngine {
  return { id: r.id, selected: r.selected, reason: r.reason, models: r.models, record: r.record };
}

/**
 * The voice activity engine of VAD_ENGINES (@dub/asr) for this choice: auto takes Silero when its
 * model resolves, else the energy VAD. An explicit `silero` whose model is missing throws the
 * resolver's error naming `npx dub models fetch silero-vad-v5`.
 */
export async function vadEngineOf(choice: EngineChoice['vad'], modelsDir: string | undefined): Promise<StageEngine> {
  const { VAD_ENGINES } = await import('@dub/asr');
  return stageEngine(await VAD_ENGINES.resolve(choice, undefined, engineHost(modelsDir) as Parameters<typeof VAD_ENGINES.resolve>[2]));
}

/**
 * The separation engine of SEPARATION_ENGINES (@dub/separation) for this choice: auto takes
 * the int8 HTDemucs on the CPU (`device`) when it was made from the float model here, else
 * HTDemucs when its model resolves, else none (the background stays in the speech track). An
 * explicit `htdemucs` whose model is missing throws the resolver's error naming
 * `npx dub models fetch htdemucs`; `htdemucs-int8` (the int8 file scripts/quantize-htdemucs.py
 * makes at set-up) has a record naming that file and its sha256.
 */
export async function separationEngineOf(choice: EngineChoice['separation'], modelsDir: string | undefined, device?: string): Promise<StageEngine> {
  const { SEPARATION_ENGINES } = await import('@dub/separation');
  return stageEngine(await SEPARATION_ENGINES.resolve(choice, undefined, { ...engineHost(modelsDir), device }));
}

/** The speech recognition engine a prepare runs, why, and the identity of its model files. */
export interface AsrEngineChoice {
  engine: string;
  /** The record's label ("Whisper base", "pocketsphinx (en-US)", "source subtitles"; "none" where no engine speaks the locale). */
  label: string;
  selected: 'auto' | 'explicit';
  reason: string;
  /** Model files (Whisper: encoder, decoder, tokenizer); null for engines without ONNX weights. */
  model: ModelIdentity[] | null;
  /** The engine record of ASR_ENGINES' choice; absent for `none` and for a source_srt. */
  record?: EngineRecord;
}

/**
 * The speech recognition engine of ASR_ENGINES (@dub/asr) a prepare of `locale` runs on this
 * host and the identity (name, size, sha256) of its model files, for the transcription stage's
 * cache key: installing Whisper (or replacing its model) makes the next prepare transcribe again
 * instead of reusing the old transcript. auto: the best engine that speaks the locale; `none` when
 * none does (the stage then fails naming what to install). An explicit engine that cannot
 * transcribe the locale fails here with `unsupported_source_language` naming its install command,
 * never replaced by another one.
 */
export async function asrEngineIdentity(locale: string, modelsDir: string | undefined, choice: EngineChoice['asr'] = 'auto'): Promise<AsrEngineChoice> {
  const { resolveAsrEngine, resolveTranscribeOptions } = await import('@dub/asr');
  const host = engineHost(modelsDir);
  const o = resolveTranscribeOptions({ locale, engine: choice, ...host });
  let r;
  try {
    // resolve reads only where models are and which binaries are installed; the engine itself is created by the stage with its full env
    r = await resolveAsrEngine(o, host as Parameters<typeof resolveAsrEngine>[1]);
  } catch (e) {
    if (choice === 'auto' && (e as { code?: string }).code === 'unsupported_source_language') return { engine: 'none', label: 'none', selected: 'auto', reason: `auto: no engine here speaks ${locale}`, model: null };
    throw e;
  }
  return { engine: r.id, label: r.record.label ?? r.id, selected: r.selected, reason: r.reason, model: r.models.length ? r.models : null, record: r.record };
}
