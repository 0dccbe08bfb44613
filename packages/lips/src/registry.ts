/**
 * Lips engines in the one registry shape of @dub/core (DUB_LIPS_ENGINE), loaded lazily (importing
 * @dub/lips loads no model): `auto` takes wav2lip when its model resolves on this host (the
 * manifest's `wav2lip-gan-96`, or an explicit `wav2lip.modelPath`), else musetalk when its exported
 * graphs resolve and the device is CUDA (MuseTalk v1.5, weights cleared for commercial use), else
 * the classical viseme-warp. Under the model policy `commercial` Wav2Lip's non-commercial weights
 * are passed over, so musetalk is what auto runs there when installed.
 */
import path from 'node:path';
import { DubError, defineEngineRegistry, isModelAvailable, type EngineHost, type EngineRegistry } from '@dub/core';
import type { VisemeWarpOptions } from './engines/viseme-warp.js';
import type { Wav2LipOptions } from './engines/wav2lip.js';
import type { MuseTalkOptions } from './engines/musetalk.js';
import type { DeviceChoice } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from './engine-ids.js';
import type { LipsEngine } from './types.js';

export interface LipsEngineConfig {
  wav2lip?: Wav2LipOptions;
  musetalk?: MuseTalkOptions;
  'viseme-warp'?: VisemeWarpOptions;
}

/** What the lips engines' `supports` see: where models are, and Wav2Lip's own options (an explicit modelPath). */
export interface LipsEngineHost extends EngineHost {
  wav2lip?: Wav2LipOptions;
  /** MuseTalk's own options (an explicit modelDir). */
  musetalk?: MuseTalkOptions;
  /** Where the models run: auto takes musetalk on CUDA only. */
  device?: DeviceChoice;
}

/** MuseTalk v1.5 (code MIT, trained models "available for any purpose, even commercially"): the UNet's checkpoint, then the VAE and Whisper whose weights its graphs also hold. */
export const MUSETALK_WEIGHTS = Object.freeze(['musetalk-v15', 'sd-vae-ft-mse', 'whisper-tiny'] as const);

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
      id: 'musetalk',
      label: 'MuseTalk v1.5',
      installHint: 'npx dub models fetch musetalk-v15 sd-vae-ft-mse whisper-tiny, then python3 scripts/export-musetalk-onnx.py (packages/lips/README.md)',
      // the UNet's weights first (the record's model), then the VAE's and whisper-tiny's its graphs hold: all cleared for commercial use
      weights: { models: MUSETALK_WEIGHTS },
      supports: async (_locale, env) => {
        const { resolveMuseTalkModels, MUSETALK_INSTALL_HINT } = await import('./engines/musetalk.js');
        let files: string[];
        try {
          files = Object.values(resolveMuseTalkModels({ ...env.models, ...env.musetalk }));
        } catch (e) {
          // not installed: auto passes over it without a word (dub doctor says how to install it)
          if (e instanceof DubError) return { ok: false, reason: `no MuseTalk export here (${MUSETALK_INSTALL_HINT})`, error: e, silent: true };
          throw e;
        }
        const device = env.device ?? env.musetalk?.device;
        if (!device || !String(device).startsWith('cuda'))
          return { ok: true, files, auto: false, note: 'MuseTalk is installed, but auto runs it on a CUDA device only (DUB_DEVICE=cuda): each frame is a Stable Diffusion sized UNet and VAE pass; DUB_LIPS_ENGINE=musetalk runs it on the CPU anyway' };
        return { ok: true, files, reason: 'the MuseTalk v1.5 export is installed (weights cleared for commercial use), on CUDA' };
      },
      create: async (c, env) => (await import('./engines/musetalk.js')).createMuseTalkEngine({ ...(env.device ? { device: env.device } : {}), ...c.musetalk }),
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
export function lipsEngineHost(o: { modelsDir?: string | undefined; searchDirs?: string[] | undefined; wav2lip?: Wav2LipOptions | undefined; musetalk?: MuseTalkOptions | undefined; device?: DeviceChoice | undefined }): LipsEngineHost {
  return {
    models: { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) },
    ...(o.wav2lip ? { wav2lip: o.wav2lip } : {}),
    ...(o.musetalk ? { musetalk: o.musetalk } : {}),
    ...(o.device ? { device: o.device } : {}),
  };
}

/** Whether the Wav2Lip model resolves with these options. */
export function hasWav2LipModel(o: { modelsDir?: string; searchDirs?: string[] }): boolean {
  return isModelAvailable('wav2lip-gan-96', ['wav2lip_gan_96.onnx'], { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) });
}
