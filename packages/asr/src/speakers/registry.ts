import { defineEngineRegistry, modelEntry, type EngineRegistry } from '@dub/core';
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
 * Speaker engines of diarization and speaker similarity, in the one registry shape of @dub/core
 * (DUB_SPEAKER_ENGINE): `auto` takes WeSpeaker's ONNX embedding when its model resolves, else the
 * MFCC statistics (no weights). `create` builds the embedding from the resolved options of its kind.
 */
export const SPEAKER_ENGINES: EngineRegistry<SpeakerEmbeddingEngine, ResolvedEmbeddingEngineOptions, EngineEnv> = defineEngineRegistry<SpeakerEmbeddingEngine, ResolvedEmbeddingEngineOptions, EngineEnv>({
  stage: 'speakers',
  envVar: 'DUB_SPEAKER_ENGINE',
  entries: [
    modelEntry({
      id: 'wespeaker',
      label: 'WeSpeaker ResNet34',
      model: WESPEAKER_MODEL,
      reasons: { ok: 'the WeSpeaker model is installed', missing: 'no WeSpeaker model here' },
      create: async (o: ResolvedEmbeddingEngineOptions, env: EngineEnv) => (await import('./onnx-embedding.js')).createOnnxEmbedding(o.onnx, env),
    }),
    {
      id: 'mfcc',
      label: 'MFCC statistics',
      fallbackNote: 'MFCC statistics, no weights',
      weights: { none: 'MFCC statistics, no trained weights' },
      supports: () => ({ ok: true, reason: 'MFCC statistics (no weights)' }),
      create: async (o, env) => (await import('./mfcc-stats.js')).createMfccStats(o.mfcc, env),
    },
  ],
});

export type SpeakerEngineId = 'wespeaker' | 'mfcc';

export const SPEAKER_ENGINE_IDS = SPEAKER_ENGINES.ids as readonly SpeakerEngineId[];

/**
 * The embedding kind each speaker engine computes: diarization's and similarity's `embedding`
 * option, and the records they write, name an engine by its kind (`onnx` is WeSpeaker's).
 */
export const SPEAKER_EMBEDDING_KIND: Readonly<Record<SpeakerEngineId, EmbeddingEngineId>> = Object.freeze({ wespeaker: 'onnx', mfcc: 'mfcc' });

/** The embedding engine of `kind`, created by its SPEAKER_ENGINES entry from the options of that kind. */
export function createSpeakerEmbedding<K extends EmbeddingEngineId>(kind: K, options: Pick<ResolvedEmbeddingEngineOptions, K>, env: EngineEnv): Promise<SpeakerEmbeddingEngine> {
  const id = SPEAKER_ENGINE_IDS.find((i) => SPEAKER_EMBEDDING_KIND[i] === kind)!;
  return SPEAKER_ENGINES.create(id, options as ResolvedEmbeddingEngineOptions, env);
}
