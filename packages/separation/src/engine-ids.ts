/**
 * The ids of SEPARATION_ENGINES (registry.ts), in its order, for code that must not load the
 * registry: the options check here, and the pipeline reading DUB_SEPARATION_ENGINE
 * (`@dub/separation/engine-ids` loads nothing else). The registry is defined from these ids and
 * throws at load when its entries differ. A leaf: it imports nothing.
 */
export const SEPARATION_ENGINE_IDS = Object.freeze(['htdemucs', 'htdemucs-int8', 'spleeter-2stems', 'none'] as const);
export type SeparationEngineId = (typeof SEPARATION_ENGINE_IDS)[number];

export function isSeparationEngineId(id: string): id is SeparationEngineId {
  return (SEPARATION_ENGINE_IDS as readonly string[]).includes(id);
}
