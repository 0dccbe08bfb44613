/** Engine ids of DUB_TRANSLATE_ENGINE: `auto` (the default) picks the offline engine per pair (auto.ts). */
export const ENGINE_IDS = ['auto', 'apertium', 'm2m100', 'openai-compatible', 'deepl', 'libretranslate'] as const;
export type EngineId = (typeof ENGINE_IDS)[number];
/** The engines that translate (every id but `auto`). */
export type ConcreteEngineId = Exclude<EngineId, 'auto'>;
/** The ids of TRANSLATE_ENGINES' entries, in its order (the registry throws at load when they differ). */
export const CONCRETE_ENGINE_IDS: readonly ConcreteEngineId[] = ENGINE_IDS.filter((id): id is ConcreteEngineId => id !== 'auto');
