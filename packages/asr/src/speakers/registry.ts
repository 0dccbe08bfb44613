import type { ResolvedMfccStatsOptions } from './mfcc-stats.js';
import type { ResolvedOnnxEmbeddingOptions } from './onnx-embedding.js';
import type { SpeakerEmbeddingFactory } from './types.js';

export interface ResolvedEmbeddingEngineOptions {
  mfcc: ResolvedMfccStatsOptions;
  onnx: ResolvedOnnxEmbeddingOptions;
}

export type EmbeddingEngineId = keyof ResolvedEmbeddingEngineOptions;

/** Speaker-embedding engines by id, imported on first use. */
export const EMBEDDING_ENGINES: { readonly [K in EmbeddingEngineId]: () => Promise<SpeakerEmbeddingFactory<ResolvedEmbeddingEngineOptions[K]>> } = {
  mfcc: () => import('./mfcc-stats.js').then((m) => m.createMfccStats),
  onnx: () => import('./onnx-embedding.js').then((m) => m.createOnnxEmbedding),
};
