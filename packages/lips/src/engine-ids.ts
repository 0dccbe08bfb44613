/**
 * The ids of LIPS_ENGINES (registry.ts), in its order, for the options check (options.ts), which
 * must not load the registry: the registry is defined from these ids and throws at load when its
 * entries differ. A leaf: it imports nothing.
 */
export const LIPS_ENGINE_IDS = Object.freeze(['wav2lip', 'musetalk', 'viseme-warp'] as const);
export type LipsEngineId = (typeof LIPS_ENGINE_IDS)[number];

export function isLipsEngineId(id: string): id is LipsEngineId {
  return (LIPS_ENGINE_IDS as readonly string[]).includes(id);
}
