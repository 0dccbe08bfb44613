/**
 * Which form of HTDemucs a job runs (the whole graph, or its consecutive parts for bounded memory
 * on CPU; see @dub/separation's htdemucs-graph): the same decision for the separation stage's
 * cache key and record and for `dub doctor`. @dub/separation is imported when asked, as the
 * stages do.
 */
import type { DubConfig } from '@dub/core';
import type { HtdemucsGraph } from '@dub/separation';

/** `modelId`: the separation engine's model (htdemucs, htdemucs-int8), whose folder holds its parts; another engine's model (spleeter-2stems) runs as it is. */
export async function separationGraph(modelFile: string, config: Pick<DubConfig, 'modelsDir' | 'device'>, modelId = 'htdemucs'): Promise<HtdemucsGraph> {
  const { resolveHtdemucsGraph } = await import('@dub/separation');
  return resolveHtdemucsGraph(modelFile, { modelId, modelsDir: config.modelsDir, device: config.device });
}
