/**
 * Engine choices read from the environment of the worker process (`dub run`, `dub serve`,
 * `dub worker` alike): `DUB_SEPARATION_ENGINE` (auto, htdemucs, htdemucs-int8, spleeter-2stems, none), `DUB_VAD_ENGINE` (auto,
 * silero, energy), `DUB_ASR_ENGINE` (auto, whisper, pocketsphinx), `DUB_TTS_ENGINE` (auto,
 * espeak-ng, piper), `DUB_LIPS_ENGINE` (auto, wav2lip, musetalk, viseme-warp) and `DUB_SPEAKER_ENGINE`
 * (auto, mfcc, wespeaker). `auto` (or unset) picks the best installed engine that supports the
 * locale, else the offline one; an
 * explicit engine that cannot run fails the version with an error naming what is missing, it is
 * never replaced by another one. An unknown value is refused when the handlers are created.
 */
import { ASR_ENGINE_IDS, embeddingWindowOf, SPEAKER_EMBEDDING_KIND, SPEAKER_ENGINE_IDS, VAD_ENGINE_IDS, WESPEAKER_MODEL, type AsrEngineId, type EmbeddingEngineId, type SpeakerEngineId, type VadEngineId } from '@dub/asr';
import { engineChoiceOf, modelPolicyFromEnv, type EngineHost, type ModelPolicy, type ResolvedEngine } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from '@dub/lips';
import { SEPARATION_ENGINE_IDS, type SeparationEngineId } from '@dub/separation/engine-ids';
import { TTS_ENGINE_IDS, VOICE_CONVERSION_IDS, type TtsEngineId } from '@dub/voice';

export { ASR_ENGINE_IDS, SEPARATION_ENGINE_IDS, SPEAKER_ENGINE_IDS, type AsrEngineId, type SeparationEngineId, type SpeakerEngineId };

/** Where a stage's engine registry looks for model files (DUB_MODELS_DIR). */
export function engineHost(modelsDir: string | undefined): EngineHost {
  return { models: modelsDir ? { modelsDir } : {} };
}

export interface EngineChoice {
  separation: 'auto' | SeparationEngineId;
  vad: 'auto' | VadEngineId;
  asr: 'auto' | AsrEngineId;
  voiceConversion: 'auto' | 'openvoice' | 'none';
  tts: 'auto' | TtsEngineId;
  lips: 'auto' | LipsEngineId;
  speaker: 'auto' | SpeakerEngineId;
  /** Which weights may run (DUB_MODEL_POLICY, `--model-policy`; default any). */
  policy: ModelPolicy;
}

/** Each stage's choice from its variable; the ids are the registries' own (an unknown one is @dub/core's one "is not an engine" error). */
export function engineChoiceFromEnv(env: Record<string, string | undefined> = process.env): EngineChoice {
  const pick = <T extends string>(name: string, ids: readonly T[]) => engineChoiceOf(name, env[name], ids);
  return {
    separation: pick('DUB_SEPARATION_ENGINE', SEPARATION_ENGINE_IDS),
    vad: pick('DUB_VAD_ENGINE', VAD_ENGINE_IDS),
    asr: pick('DUB_ASR_ENGINE', ASR_ENGINE_IDS),
    voiceConversion: pick('DUB_VOICE_CONVERSION', VOICE_CONVERSION_IDS),
    tts: pick('DUB_TTS_ENGINE', TTS_ENGINE_IDS),
    lips: pick('DUB_LIPS_ENGINE', LIPS_ENGINE_IDS),
    speaker: pick('DUB_SPEAKER_ENGINE', SPEAKER_ENGINE_IDS),
    policy: modelPolicyFromEnv(env),
  };
}

/** Each stage's registry (the stage packages' own). */
interface StageRegistries {
  separation: (typeof import('@dub/separation'))['SEPARATION_ENGINES'];
  vad: (typeof import('@dub/asr'))['VAD_ENGINES'];
  asr: (typeof import('@dub/asr'))['ASR_ENGINES'];
  speakers: (typeof import('@dub/asr'))['SPEAKER_ENGINES'];
  tts: (typeof import('@dub/voice'))['TTS_ENGINES'];
  voiceConversion: (typeof import('@dub/voice'))['VOICE_CONVERSION_ENGINES'];
  lips: (typeof import('@dub/lips'))['LIPS_ENGINES'];
  translation: (typeof import('@dub/translate'))['TRANSLATE_ENGINES'];
}

/** Each stage's registry, imported on first use (reading the choices above loads no stage code beyond the ids). */
const REGISTRIES: { readonly [S in keyof StageRegistries]: () => Promise<StageRegistries[S]> } = {
  separation: async () => (await import('@dub/separation')).SEPARATION_ENGINES,
  vad: async () => (await import('@dub/asr')).VAD_ENGINES,
  asr: async () => (await import('@dub/asr')).ASR_ENGINES,
  speakers: async () => (await import('@dub/asr')).SPEAKER_ENGINES,
  tts: async () => (await import('@dub/voice')).TTS_ENGINES,
  voiceConversion: async () => (await import('@dub/voice')).VOICE_CONVERSION_ENGINES,
  lips: async () => (await import('@dub/lips')).LIPS_ENGINES,
  translation: async () => (await import('@dub/translate')).TRANSLATE_ENGINES,
};

/** A stage that has engines. */
export type EngineStage = keyof StageRegistries;
type RegistryOf<S extends EngineStage> = StageRegistries[S];
/** What stage `S`'s registry needs to know to choose: where models are, and the stage's own host fields (device, engine options). */
export type EngineHostOf<S extends EngineStage> = Parameters<RegistryOf<S>['resolve']>[2];
/** The engine stage `S` runs: its registry entry, how it was chosen and why, its model files' identity and its record. */
export type ResolvedStageEngine<S extends EngineStage> = Awaited<ReturnType<RegistryOf<S>['resolve']>>;

/**
 * The engine a stage runs here, the one way the pipeline (and `dub doctor`) chooses engines: the
 * stage's registry turns `auto` or an explicit id into its entry, the reason and the record
 * (`auto` takes the best engine that runs `locale` here; an explicit engine that cannot run
 * throws, naming what to install; the model policy is the host's). The stage then creates the
 * engine from the entry with its full options.
 */
export async function resolveEngine<S extends EngineStage>(stage: S, choice: string, locale: string | undefined, host: EngineHostOf<S>): Promise<ResolvedStageEngine<S>> {
  const registry = (await REGISTRIES[stage]()) as { resolve(choice: string, locale: string | undefined, host: unknown): Promise<unknown> };
  return (await registry.resolve(choice, locale, host)) as ResolvedStageEngine<S>;
}

/** The engine a prepare stage runs (any stage's ResolvedStageEngine): id, how it was chosen and why, model files (for cache keys), record. */
export type StageEngine = Pick<ResolvedEngine<unknown, never, never>, 'id' | 'selected' | 'reason' | 'models' | 'record'>;

/** The speaker engine a prepare runs, with what diarization needs of it: the @dub/asr embedding kind and the fbank window of its model. */
export interface SpeakerEngine extends StageEngine {
  id: SpeakerEngineId;
  embedding: EmbeddingEngineId;
  /** The Kaldi fbank window the embedding model takes (its manifest entry's `fbank.window`). */
  window?: string;
}

/**
 * The speaker engine of SPEAKER_ENGINES (@dub/asr) for this choice (resolveEngine), with the
 * embedding kind and fbank window diarization needs. An explicit `wespeaker` whose model is
 * missing throws the resolver's error naming `dub models fetch`.
 */
export async function speakerEngineOf(choice: EngineChoice['speaker'], modelsDir: string | undefined): Promise<SpeakerEngine> {
  const r = await resolveEngine('speakers', choice, undefined, engineHost(modelsDir) as EngineHostOf<'speakers'>);
  const id = r.id as SpeakerEngineId;
  return { ...r, id, embedding: SPEAKER_EMBEDDING_KIND[id], ...(r.models[0] ? { window: embeddingWindowOf(WESPEAKER_MODEL.id) } : {}) };
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
  const host = { models: {}, policy } as never;
  const check = async (stage: EngineStage, c: string, locale: string | undefined) => (await REGISTRIES[stage]()).checkPolicy(c, locale, host);
  await check('separation', choice.separation, undefined);
  await check('vad', choice.vad, undefined);
  await check('asr', choice.asr, job.source || undefined);
  await check('speakers', choice.speaker, undefined);
  for (const t of job.targets) {
    await check('tts', choice.tts, t);
    await check('voiceConversion', choice.voiceConversion, t);
    if (job.withLips) await check('lips', choice.lips, t);
  }
}

/** The part of GenerateVersionOptions (generate.ts) the engine choices set. */
export interface EngineGenerateOptions {
  voiceConversion?: 'openvoice' | 'none';
  tts?: { engine: TtsEngineId };
  lips?: { engine: LipsEngineId };
}

/** The generate-version options these choices make. */
export function generateOptionsOf(choice: EngineChoice): EngineGenerateOptions {
  return {
    ...(choice.voiceConversion !== 'auto' ? { voiceConversion: choice.voiceConversion } : {}),
    ...(choice.tts !== 'auto' ? { tts: { engine: choice.tts } } : {}),
    ...(choice.lips !== 'auto' ? { lips: { engine: choice.lips } } : {}),
  };
}

/** The speech recognition engine a prepare runs (id `none` where no engine here speaks the locale), why, and the identity of its model files. */
export interface AsrEngineChoice extends StageEngine {
  /** @deprecated id. */
  engine: string;
}

/**
 * The speech recognition engine of ASR_ENGINES (@dub/asr) a prepare of `locale` runs on this
 * host (resolveEngine) and the identity (name, size, sha256) of its model files, for the
 * transcription stage's cache key: installing Whisper (or replacing its model) makes the next
 * prepare transcribe again instead of reusing the old transcript. auto: the best engine that
 * speaks the locale; `none` when none does (the stage then fails naming what to install). An
 * explicit engine that cannot transcribe the locale fails here with `unsupported_source_language`
 * naming its install command, never replaced by another one.
 */
export async function asrEngineIdentity(locale: string, modelsDir: string | undefined, choice: EngineChoice['asr'] = 'auto'): Promise<AsrEngineChoice> {
  const { resolveTranscribeOptions } = await import('@dub/asr');
  const host = engineHost(modelsDir);
  // the engines' options as a transcription would resolve them (which Whisper model): resolve reads only where models are and which binaries are installed
  const { engines } = resolveTranscribeOptions({ locale, engine: choice, ...host });
  let r: StageEngine;
  try {
    r = await resolveEngine('asr', choice, locale, { ...host, engines } as EngineHostOf<'asr'>);
  } catch (e) {
    if (choice !== 'auto' || (e as { code?: string }).code !== 'engine_unavailable') throw e;
    const reason = `auto: no engine here speaks ${locale}`;
    r = { id: 'none', selected: 'auto', reason, models: [], record: { id: 'none', label: 'none', selected: 'auto', reason } };
  }
  return { ...r, engine: r.id };
}
