/**
 * Lips engines by id, loaded lazily (importing @dub/lips loads no model), and the choice the
 * `real_face` models make: wav2lip when its model resolves on this host, else viseme-warp.
 */
import { isModelAvailable, ValidationError, type Logger } from '@dub/core';
import type { VisemeWarpOptions } from './engines/viseme-warp.js';
import type { Wav2LipOptions } from './engines/wav2lip.js';
import type { LipsEngineId, ResolvedLipsOptions } from './options.js';
import type { LipsEngine } from './types.js';

export interface LipsEngineConfig {
  wav2lip?: Wav2LipOptions;
  'viseme-warp'?: VisemeWarpOptions;
}

type Factory<K extends LipsEngineId> = (opts: LipsEngineConfig[K]) => Promise<LipsEngine>;

export const LIPS_ENGINES: { [K in LipsEngineId]-?: Factory<K> } = {
  wav2lip: async (o) => (await import('./engines/wav2lip.js')).createWav2LipEngine(o ?? {}),
  'viseme-warp': async (o) => (await import('./engines/viseme-warp.js')).createVisemeWarpEngine(o ?? {}),
};

export const LIPS_ENGINE_IDS = Object.keys(LIPS_ENGINES) as LipsEngineId[];

/** The engine that runs where no lips model is installed: classical, no weights. */
export const OFFLINE_LIPS_ENGINE: LipsEngineId = 'viseme-warp';

export function isLipsEngineId(id: string): id is LipsEngineId {
  return (LIPS_ENGINE_IDS as string[]).includes(id);
}

export function createLipsEngine<K extends LipsEngineId>(id: K, opts?: LipsEngineConfig[K]): Promise<LipsEngine> {
  const f = LIPS_ENGINES[id] as Factory<K> | undefined;
  if (!f) return Promise.reject(new ValidationError(`unknown lips engine "${String(id)}" (known: ${LIPS_ENGINE_IDS.join(', ')})`, { field: 'engine' }));
  return f(opts);
}

/** Which engine these options run: the explicit one, else wav2lip when its model resolves, else viseme-warp (logged). */
export async function chooseLipsEngine(o: ResolvedLipsOptions, logger: Logger): Promise<LipsEngineId> {
  if (o.engine !== 'auto') return o.engine;
  const { resolveWav2LipModel } = await import('./engines/wav2lip.js');
  let modelPath: string | undefined;
  try {
    modelPath = resolveWav2LipModel(o.wav2lip);
  } catch {
    modelPath = undefined;
  }
  if (modelPath) {
    logger.info({ lips_model: o.model, engine: 'wav2lip', model: modelPath }, 'lips: wav2lip model found');
    return 'wav2lip';
  }
  logger.info({ lips_model: o.model, engine: OFFLINE_LIPS_ENGINE }, 'lips: no wav2lip model on this host (npx dub models fetch wav2lip-gan-96); using the classical viseme-warp engine');
  return OFFLINE_LIPS_ENGINE;
}

/** Whether the Wav2Lip model resolves with these options. */
export function hasWav2LipModel(o: { modelsDir?: string; searchDirs?: string[] }): boolean {
  return isModelAvailable('wav2lip-gan-96', ['wav2lip_gan_96.onnx'], { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) });
}
