export const ENGINE_IDS = ['apertium', 'openai-compatible', 'deepl', 'libretranslate'] as const;
export type EngineId = (typeof ENGINE_IDS)[number];
