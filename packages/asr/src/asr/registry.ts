import type { LazyRegistry } from '../engine-env.js';
import type { ResolvedWhisperOptions } from '../whisper/options.js';
import type { ResolvedPocketsphinxOptions } from './pocketsphinx.js';
import type { AsrEngineProvider } from './types.js';

/** Options of every ASR engine, resolved. */
export interface ResolvedAsrEngineOptions {
  pocketsphinx: ResolvedPocketsphinxOptions;
  whisper: ResolvedWhisperOptions;
}

export type AsrEngineId = keyof ResolvedAsrEngineOptions;

/** ASR engines by id, imported on first use. */
export const ASR_ENGINES: { readonly [K in AsrEngineId]: () => Promise<AsrEngineProvider<ResolvedAsrEngineOptions[K]>> } = {
  whisper: () => import('../whisper/engine.js').then((m) => m.whisperProvider),
  pocketsphinx: () => import('./pocketsphinx.js').then((m) => m.pocketsphinxProvider),
} satisfies LazyRegistry<AsrEngineProvider<never>>;

/** Default order of preference when the engine is `auto`: the best engine that supports the locale wins. */
export const DEFAULT_ASR_PREFERENCE: readonly AsrEngineId[] = ['whisper', 'pocketsphinx'];
