/**
 * Lips engines in the one registry shape of @dub/core (DUB_LIPS_ENGINE), loaded lazily (importing
 * @dub/lips loads no model): `auto` takes wav2lip when its model resolves on this host (the
 * manifest's `wav2lip-gan-96`, or an explicit `wav2lip.modelPath`), else the classical viseme-warp.
 */
import path from 'node:path';
import { DubError, defineEngineRegistry, isModelAvailable, type EngineHost, type EngineRegistry } from '@dub/core';
import type { VisemeWarpOptions } from './engines/viseme-warp.js';
import type { Wav2LipOptions } from './engines/wav2lip.js';
import { LIPS_ENGINE_IDS, type LipsEngineId } from './engine-ids.js';
import type { LipsEngine } from './types.js';

export interface LipsEngineConfig {
  wav2lip?: Wav2LipOptions;
  'viseme-warp'?: VisemeWarpOptions;
}

/** What the lips engines' `supports` see: where models are, and Wav2Lip's own options (an explicit modelPath). */
export interface LipsEngineHost extends EngineHost {
  wav2lip?: Wav2LipOptions;
}

export const LIPS_ENGINES: EngineRegistry<LipsEngine, LipsEngineConfig, LipsEngineHost> = defineEngineRegistry<LipsEngine, LipsEngineConfig, LipsEngineHost>({
  stage: 'lips',
  envVar: 'DUB_LIPS_ENGINE',
  ids: LIPS_ENGINE_IDS,
  entries: [
    {
      id: 'wav2lip',
      // the manifest's model, or the file an explicit modelPath names
      label: ([file]) => (!file || path.basename(file) === 'wav2lip_gan_96.onnx' ? 'Wav2Lip GAN 96' : `Wav2Lip (${path.basename(file)})`),
      installHint: 'npx dub models fetch wav2lip-gan-96',
      // any Wav2Lip checkpoint (an explicit modelPath too) comes from the authors' LRS2 training: their terms
      weights: { models: ['wav2lip-gan-96'] },
      supports: async (_locale, env) => {
        const { resolveWav2LipModel } = await import('./engines/wav2lip.js');
        try {
          return { ok: true, reason: 'the Wav2Lip model is installed', files: [resolveWav2LipModel({ ...env.models, ...env.wav2lip })] };
        } catch (e) {
          if (e instanceof DubError) return { ok: false, reason: 'no Wav2Lip model here', error: e };
          throw e;
        }
      },
      create: async (c) => (await import('./engines/wav2lip.js')).createWav2LipEngine(c.wav2lip ?? {}),
    },
    {
      id: 'viseme-warp',
      label: 'viseme warp',
      fallbackNote: 'classical mouth warp',
      weights: { none: 'a classical mouth warp, no trained weights' },
      supports: () => ({ ok: true, reason: 'classical mouth warp (no weights)' }),
      create: async (c) => (await import('./engines/viseme-warp.js')).createVisemeWarpEngine(c['viseme-warp'] ?? {}),
    },
  ],
});

export { isLipsEngineId, LIPS_ENGINE_IDS } from './engine-ids.js';

/** The engine that runs where no lips model is installed: classical, no weights. */
export const OFFLINE_LIPS_ENGINE: LipsEngineId = 'viseme-warp';

/** The registry host of resolved lips options: their model folders and Wav2Lip options. */
export function lipsEngineHost(o: { modelsDir?: string | undefined; searchDirs?: string[] | undefined; wav2lip?: Wav2LipOptions | undefined }): LipsEngineHost {
  return { models: { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) }, ...(o.wav2lip ? { wav2lip: o.wav2lip } : {}) };
}

/** Whether the Wav2Lip model resolves with these options. */
export function hasWav2LipModel(o: { modelsDir?: string; searchDirs?: string[] }): boolean {
  return isModelAvailable('wav2lip-gan-96', ['wav2lip_gan_96.onnx'], { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) });
}
