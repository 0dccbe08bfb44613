/**
 * A generate-version job resolved once, at the start of the generation (generateVersion) or of a
 * re-dub (redub.ts): its ids, its target locale's entry, its mode and options with their defaults
 * and every blob key of this generation (core's generationBlobKeys). The stages read this, never
 * the job: a key, a default or a locale lookup is derived here, in one place, the way the options
 * are resolved once in generate-options.ts.
 */
import { generationBlobKeys, getLocale, type GenerateVersionJob, type GenerationBlobKeys, type LipsModel, type LocaleInfo } from '@dub/core';

export interface ResolvedGenerateJob {
  readonly assetId: string;
  readonly versionId: string;
  readonly generation: number;
  /** The target locale's code, as the job gives it (cache inputs and engine choice take it). */
  readonly locale: string;
  /** Its entry in core's locale list; undefined for a code the list does not know (generateVersion refuses those). */
  readonly target: LocaleInfo | undefined;
  readonly mode: GenerateVersionJob['mode'];
  readonly withLips: boolean;
  /** options.voice_over: a ducked original under the speech instead of the separated background. */
  readonly voiceOver: boolean;
  /** options.voice_library_id: the library voice every speaker without a voice of their own takes. */
  readonly voiceLibraryId: string | undefined;
  /** options.voice_anonymization (0: the speakers' own timbre). */
  readonly anonymization: number;
  /** options.lips_model (real_face unless given). */
  readonly lipsModel: LipsModel;
  readonly keys: GenerationBlobKeys;
}

export function resolveGenerateJob(job: GenerateVersionJob): ResolvedGenerateJob {
  const { options } = job;
  return {
    assetId: job.asset_id,
    versionId: job.version_id,
    generation: job.generation,
    locale: job.locale,
    target: getLocale(job.locale),
    mode: job.mode,
    withLips: job.mode === 'with_lips',
    voiceOver: options.voice_over === true,
    voiceLibraryId: options.voice_library_id,
    anonymization: options.voice_anonymization ?? 0,
    lipsModel: (options.lips_model ?? 'real_face') as LipsModel,
    keys: generationBlobKeys(job),
  };
}
