import { defineEngineRegistry, modelEntry, ValidationError, type EngineEntry, type EngineRegistry } from '@dub/core';
import type { EngineEnv } from '../engine-env.js';
import type { ResolvedMfccStatsOptions } from './mfcc-stats.js';
import type { ResolvedOnnxEmbeddingOptions } from './onnx-embedding.js';
import type { SpeakerEmbeddingEngine } from './types.js';

export interface ResolvedEmbeddingEngineOptions {
  mfcc: ResolvedMfccStatsOptions;
  onnx: ResolvedOnnxEmbeddingOptions;
}

export type EmbeddingEngineId = keyof ResolvedEmbeddingEngineOptions;

/** WeSpeaker ResNet34-LM (VoxCeleb), the ONNX speaker embedding `auto` takes when it is installed. */
export const WESPEAKER_MODEL = Object.freeze({ id: 'wespeaker-resnet34', file: 'voxceleb_resnet34_LM.onnx' });

/**
 * A speaker engine's entry: the registry's, with the embedding kind it computes. Diarization's and
 * similarity's `embedding` option, and the records they write, name an engine by its kind (`onnx`
 * is WeSpeaker's); the entry is the one place that says which kind an engine id is.
 */
export interface SpeakerEngineEntry extends EngineEntry<SpeakerEmbeddingEngine, ResolvedEmbeddingEngineOptions, EngineEnv> {
  readonly embedding: EmbeddingEngineId;
}

/**
 * Speaker engines of diarization and speaker similarity, in the one registry shape of @dub/core
 * (DUB_SPEAKER_ENGINE): `auto` takes WeSpeaker's ONNX embedding when its model resolves, else the
 * MFCC statistics (no weights). `create` builds the embedding from the resolved options of its kind.
 */
export const SPEAKER_ENGINES: EngineRegistry<SpeakerEmbeddingEngine, ResolvedEmbeddingEngineOptions, EngineEnv, SpeakerEngineEntry> = defineEngineRegistry<SpeakerEmbeddingEngine, ResolvedEmbeddingEngineOptions, EngineEnv, SpeakerEngineEntry>({
  stage: 'speakers',
  envVar: 'DUB_SPEAKER_ENGINE',
  entries: [
    {
      ...modelEntry<SpeakerEmbeddingEngine, ResolvedEmbeddingEngineOptions, EngineEnv>({
        id: 'wespeaker',
        label: 'WeSpeaker ResNet34',
        model: WESPEAKER_MODEL,
        reasons: { ok: 'the WeSpeaker model is installed', missing: 'no WeSpeaker model here' },
        create: async (o: ResolvedEmbeddingEngineOptions, env: EngineEnv) => (await import('./onnx-embedding.js')).createOnnxEmbedding(o.onnx, env),
      }),
      embedding: 'onnx',
    },
    {
      id: 'mfcc',
      label: 'MFCC statistics',
      embedding: 'mfcc',
      fallbackNote: 'MFCC statistics, no weights',
      weights: { none: 'MFCC statistics, no trained weights' },
      supports: () => ({ ok: true, reason: 'MFCC statistics (no weights)' }),
      create: async (o, env) => (await import('./mfcc-stats.js')).createMfccStats(o.mfcc, env),
    },
  ],
});

export type SpeakerEngineId = 'wespeaker' | 'mfcc';

export const SPEAKER_ENGINE_IDS = SPEAKER_ENGINES.ids as readonly SpeakerEngineId[];

/** The embedding kind of each speaker engine id, read from the entries (`SPEAKER_ENGINES.get(id).embedding`). */
export const SPEAKER_EMBEDDING_KIND: Readonly<Record<SpeakerEngineId, EmbeddingEngineId>> = Object.freeze(
  Object.fromEntries(SPEAKER_ENGINES.entries.map((e) => [e.id, e.embedding])) as Record<SpeakerEngineId, EmbeddingEngineId>,
);

/** The embedding engine of `kind`, created by the SPEAKER_ENGINES entry of that kind from the options of that kind. */
export async function createSpeakerEmbedding<K extends EmbeddingEngineId>(kind: K, options: Pick<ResolvedEmbeddingEngineOptions, K>, env: EngineEnv): Promise<SpeakerEmbeddingEngine> {
  const entry = SPEAKER_ENGINES.entries.find((e) => e.embedding === kind);
  if (!entry) throw new ValidationError(`"${String(kind)}" is not a speaker embedding: ${SPEAKER_ENGINES.entries.map((e) => e.embedding).join(', ')}`, { field: 'embedding' });
  return entry.create(options as ResolvedEmbeddingEngineOptions, env);
}
