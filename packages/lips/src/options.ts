/**
 * Lips options: partial and public (`LipsOptions`), resolved once into a complete internal form.
 * The contract's two lips models are two profiles of the same engines:
 *
 * | profile | key frames detected | detector input when tracking | frames seen by the detector | mouth patch | x264 preset |
 * |---|---|---|---|---|---|
 * | real_face | every 0.25 s, refined where the face moves | 256 px (full range) | longest side 640 | full resolution | veryfast |
 * | real_face_turbo | every 0.5 s, refined where the face moves | 128 px (short range) | longest side 360 | half resolution | superfast |
 */
import { engineChoiceOf, ValidationError, type DeviceChoice, type LipsModel } from '@dub/core';
import { LIPS_ENGINE_IDS, type LipsEngineId } from './engine-ids.js';
import { type SessionCache } from '@dub/onnx';
import type { MediaToolOptions } from '@dub/media';
import type { BlazeFaceRange } from './face/blazeface.js';
import type { OneEuroOptions } from './face/one-euro.js';
import type { VisemeWarpOptions } from './engines/viseme-warp.js';
import type { Wav2LipOptions } from './engines/wav2lip.js';
import type { MuseTalkOptions } from './engines/musetalk.js';
import type { LipsEncodeOptions } from './types.js';

export type { LipsEngineId };

export interface LipsProfile {
  /** Seconds between key-frame detections (face-track.ts refines between them where the face moves). */
  detectSeconds: number;
  trackingRange: BlazeFaceRange;
  analysisMaxSide: number;
  workScale: number;
  preset: string;
}

export const LIPS_PROFILES: Readonly<Record<LipsModel, Readonly<LipsProfile>>> = Object.freeze({
  real_face: Object.freeze({ detectSeconds: 0.25, trackingRange: 'full', analysisMaxSide: 640, workScale: 1, preset: 'veryfast' }),
  real_face_turbo: Object.freeze({ detectSeconds: 0.5, trackingRange: 'short', analysisMaxSide: 360, workScale: 0.5, preset: 'superfast' }),
});

export interface LipsOptions {
  /** The contract's lips model (default real_face). */
  model?: LipsModel;
  /** `auto` (default): wav2lip when its model resolves, else musetalk when its export resolves on CUDA, else viseme-warp (under the model policy `commercial`: musetalk, else viseme-warp). */
  engine?: LipsEngineId | 'auto';
  /** Override the profile's values: key frames every `detectSeconds`, or every `detectEvery` frames. */
  detectSeconds?: number;
  detectEvery?: number;
  analysisMaxSide?: number;
  workScale?: number;
  trackingRange?: BlazeFaceRange;
  /** Minimum face score (default 0.6). */
  minFaceScore?: number;
  smoothing?: OneEuroOptions;
  encode?: Partial<LipsEncodeOptions>;
  wav2lip?: Wav2LipOptions;
  /** MuseTalk's options (modelDir: a folder holding its four exported graphs; extraMargin). */
  musetalk?: MuseTalkOptions;
  visemeWarp?: VisemeWarpOptions;
  /** BlazeFace model files (default: resolved from the manifest, `blazeface`). */
  detectorModels?: Partial<Record<BlazeFaceRange, string>>;
  /** DUB_MODELS_DIR and extra model folders. */
  modelsDir?: string;
  searchDirs?: string[];
  /** Shared ONNX sessions (the worker's); private ones, released at the end, otherwise. */
  sessions?: SessionCache;
  device?: DeviceChoice;
  /** Intra-op threads of private sessions (default 1: the stage runs next to ffmpeg). */
  threads?: number;
  media?: MediaToolOptions;
  /** Scratch space (default the OS temp dir). */
  tmpDir?: string;
}

export interface ResolvedLipsOptions {
  model: LipsModel;
  engine: LipsEngineId | 'auto';
  detectSeconds: number;
  /** Frames between key frames when given; else from `detectSeconds` and the video's rate (`detectStride`). */
  detectEvery: number | undefined;
  analysisMaxSide: number;
  workScale: number;
  trackingRange: BlazeFaceRange;
  minFaceScore: number;
  smoothing: OneEuroOptions;
  encode: LipsEncodeOptions;
  wav2lip: Wav2LipOptions;
  musetalk: MuseTalkOptions;
  visemeWarp: VisemeWarpOptions;
  detectorModels: Partial<Record<BlazeFaceRange, string>>;
  modelsDir: string | undefined;
  searchDirs: string[];
  sessions: SessionCache | undefined;
  device: DeviceChoice;
  threads: number;
  media: MediaToolOptions;
  tmpDir: string | undefined;
}

export function resolveLipsOptions(o: LipsOptions = {}): ResolvedLipsOptions {
  const model = o.model ?? 'real_face';
  const profile = LIPS_PROFILES[model];
  if (!profile) throw new ValidationError(`unknown lips model "${String(model)}" (known: ${Object.keys(LIPS_PROFILES).join(', ')})`, { field: 'lips_model' });
  const engine = engineChoiceOf('engine', o.engine, LIPS_ENGINE_IDS);
  const detectEvery = o.detectEvery;
  if (detectEvery !== undefined && !(Number.isInteger(detectEvery) && detectEvery >= 1)) throw new ValidationError(`detectEvery must be an integer >= 1, got ${detectEvery}`, { field: 'detectEvery' });
  const detectSeconds = o.detectSeconds ?? profile.detectSeconds;
  if (!(detectSeconds > 0 && detectSeconds <= 10)) throw new ValidationError(`detectSeconds must be in (0, 10], got ${detectSeconds}`, { field: 'detectSeconds' });
  const workScale = o.workScale ?? profile.workScale;
  if (!(workScale > 0 && workScale <= 1)) throw new ValidationError(`workScale must be in (0, 1], got ${workScale}`, { field: 'workScale' });
  const shared = { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}), ...(o.sessions ? { sessions: o.sessions } : {}), device: o.device ?? 'cpu' };
  return {
    model,
    engine,
    detectSeconds,
    detectEvery,
    analysisMaxSide: o.analysisMaxSide ?? profile.analysisMaxSide,
    workScale,
    trackingRange: o.trackingRange ?? profile.trackingRange,
    minFaceScore: o.minFaceScore ?? 0.6,
    smoothing: o.smoothing ?? {},
    encode: { crf: o.encode?.crf ?? 18, preset: o.encode?.preset ?? profile.preset },
    wav2lip: { ...shared, ...(o.threads !== undefined ? { threads: o.threads } : {}), ...o.wav2lip },
    musetalk: { ...shared, ...(o.threads !== undefined ? { threads: o.threads } : {}), ...o.musetalk },
    visemeWarp: o.visemeWarp ?? {},
    detectorModels: o.detectorModels ?? {},
    modelsDir: o.modelsDir,
    searchDirs: o.searchDirs ?? [],
    sessions: o.sessions,
    device: o.device ?? 'cpu',
    threads: o.threads ?? 1,
    media: o.media ?? {},
    tmpDir: o.tmpDir,
  };
}

/** Frames between key-frame detections for a video at `fps`: `detectEvery`, else `detectSeconds` of frames (at least 1). */
export function detectStride(o: Pick<ResolvedLipsOptions, 'detectEvery' | 'detectSeconds'>, fps: number): number {
  return o.detectEvery ?? Math.max(1, Math.round((fps > 0 ? fps : 25) * o.detectSeconds));
}
