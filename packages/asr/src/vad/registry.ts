import type { LazyRegistry } from '../engine-env.js';
import type { VadEngineFactory } from './types.js';

/** VAD engines by id, imported on first use. */
export const VAD_ENGINES = {
  silero: () => import('./silero.js').then((m) => m.createSileroVad),
  energy: () => import('./energy.js').then((m) => m.createEnergyVad),
} satisfies LazyRegistry<VadEngineFactory>;

export type VadEngineId = keyof typeof VAD_ENGINES;
