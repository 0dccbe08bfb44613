/**
 * Public options are partial; `resolveEngineOptions` / `resolveSeparateOptions` turn them into
 * complete internal ones once, from explicit values, then the loaded config (DUB_MODELS_DIR,
 * DUB_DEVICE, DUB_ONNX_THREADS, DUB_TMP_DIR, FFMPEG_PATH), then defaults.
 */
import os from 'node:os';
import { loadConfig, unknownEngineError, ValidationError, type DeviceChoice, type DubConfig } from '@dub/core';
import { type SessionCache } from '@dub/onnx';
import type { PlanarAudio, WavWriteFormat } from '@dub/media';
import type { SeparationEngine } from './types.js';
import type { SeparationPlan, TimeSpan } from './background.js';
import { resolveKeep, type KeepOutsideSpeechOptions, type ResolvedKeep } from './keep-outside-speech.js';
import { splitChoiceFromEnv } from './engines/htdemucs-graph.js';
import { isSeparationEngineId, SEPARATION_ENGINE_IDS, type SeparationEngineId } from './engine-ids.js';

export type SeparationConfig = Pick<DubConfig, 'modelsDir' | 'device' | 'onnxThreads' | 'tmpDir' | 'ffmpegPath' | 'ffprobePath'>;

export interface SeparationEngineOptions {
  /** cpu, cuda or cuda:N (default: config.device). CUDA falls back to CPU when not loadable. */
  device?: DeviceChoice;
  /** Intra-op threads of the ONNX session (default: config.onnxThreads, else every core). */
  threads?: number;
  /** Folder searched first for model files (default: config.modelsDir, DUB_MODELS_DIR). */
  modelsDir?: string;
  /**
   * Overlap of consecutive segments, in [0, 1) (default 0.1; demucs uses 0.25). 0.1 runs ~25% fewer
   * segments with speech SI-SDR within 0.05 dB of 0.25 on real speech over music
   * (bench/separation-fast.mjs).
   */
  overlap?: number;
  /**
   * Keep onnxruntime's CPU memory arena (default false). HTDemucs on CPU: with it, ~25% less
   * time per segment but ~5 GB resident for the engine's life; without, ~0.6 GB between
   * segments and ~2.9 GB at the peak of one.
   */
  cpuMemArena?: boolean;
  /**
   * onnxruntime's memory pattern (default true: one planned block per run, returned to the system
   * after it). Off, HTDemucs on CPU peaks ~0.3 GB lower (bench/separation-fast.mjs), but its many smaller blocks stay in the C heap between segments,
   * so the resident size between segments is higher and varies.
   */
  memPattern?: boolean;
  /**
   * HTDemucs as consecutive parts (scripts/split-htdemucs.py; ~0.9 GB peak per segment on CPU
   * instead of ~2.8 GB with dub's allocator setting, same outputs within float rounding): false runs the whole graph, true
   * requires the parts, unset (default, or DUB_HTDEMUCS_SPLIT) uses them on CPU when they are
   * present and match the model's sha256.
   */
  split?: boolean;
  /** Session cache to create the engine's session in (default: one owned by the engine). */
  sessions?: SessionCache;
  /** Where format conversions of WAV inputs go (default: config.tmpDir). */
  tmpDir?: string;
  /** ffmpeg binary for those conversions (default: config.ffmpegPath). */
  ffmpegPath?: string;
  /** A loaded config; read from the environment when absent. */
  config?: SeparationConfig;
}

export interface ResolvedEngineOptions {
  device: DeviceChoice;
  threads: number;
  modelsDir: string | undefined;
  overlap: number;
  cpuMemArena: boolean;
  memPattern: boolean;
  split: boolean | undefined;
  sessions: SessionCache | undefined;
  tmpDir: string;
  ffmpegPath: string;
  ffprobePath: string;
}

export function resolveEngineOptions(opts: SeparationEngineOptions = {}): ResolvedEngineOptions {
  const config = opts.config ?? loadConfig();
  const overlap = opts.overlap ?? 0.1;
  if (!(overlap >= 0 && overlap < 1)) throw new ValidationError(`overlap must be in [0, 1), got ${overlap}`, { field: 'overlap' });
  const threads = opts.threads ?? config.onnxThreads;
  if (!Number.isInteger(threads) || threads < 0) throw new ValidationError(`threads must be a non-negative integer, got ${threads}`, { field: 'threads' });
  return {
    device: opts.device ?? config.device,
    threads: threads > 0 ? threads : os.availableParallelism(),
    modelsDir: opts.modelsDir ?? config.modelsDir,
    overlap,
    cpuMemArena: opts.cpuMemArena ?? false,
    memPattern: opts.memPattern ?? true,
    split: opts.split ?? splitChoiceFromEnv(),
    sessions: opts.sessions,
    tmpDir: opts.tmpDir ?? config.tmpDir,
    ffmpegPath: opts.ffmpegPath ?? config.ffmpegPath,
    ffprobePath: config.ffprobePath,
  };
}

/** Clean tracks given with the asset: separation is skipped (see `fromGivenTracks`). */
export interface GivenTracks<T extends PlanarAudio | string = PlanarAudio | string> {
  speech?: T;
  background?: T;
}

export interface SeparateOptions extends SeparationEngineOptions {
  /** Engine to load (default htdemucs; `none`: the mix is the speech track, no model). Ignored when `engineInstance` is given. */
  engine?: SeparationEngineId;
  /** An engine already created, reused across calls (the caller disposes it). */
  engineInstance?: SeparationEngine;
  /** Clean tracks given with the asset: no model runs (see `fromGivenTracks`). */
  given?: GivenTracks;
  /** For a WAV input: where the speech track goes (default `<input>.speech.wav`). */
  speechPath?: string;
  /** For a WAV input: where the background track goes (default `<input>.background.wav`). */
  backgroundPath?: string;
  /** For a WAV input: sample encoding of written tracks (default float32). */
  format?: WavWriteFormat;
  /**
   * Where the model runs (`planSeparation`): `none` loads no model (speech = the mix and
   * background = silence, or the other way round when `background` is true), `spans` runs it on
   * `spans` only, `full` (the default) everywhere. With `speech` (the speech regions, seconds:
   * `SeparationPlan.speech`) only speech is replaced: outside those regions the background track
   * is the mix itself, cross-faded at their edges (`keepOutsideSpeech`), whatever the mode.
   */
  plan?: SeparatePlan;
  /** Padding, cross-fade and joining of the speech regions of `plan.speech` (KEEP_OUTSIDE_SPEECH_DEFAULTS). */
  keep?: KeepOutsideSpeechOptions;
}

/** The part of a SeparationPlan that `separate` applies. */
export type SeparatePlan = Pick<SeparationPlan, 'mode' | 'background' | 'spans'> & { speech?: readonly TimeSpan[] };

export interface ResolvedSeparateOptions {
  engine: SeparationEngineId;
  engineInstance: SeparationEngine | undefined;
  given: GivenTracks | undefined;
  speechPath: string | undefined;
  backgroundPath: string | undefined;
  format: WavWriteFormat;
  plan: SeparatePlan | undefined;
  keep: ResolvedKeep;
  engineOptions: ResolvedEngineOptions;
}

export function resolveSeparateOptions(opts: SeparateOptions = {}): ResolvedSeparateOptions {
  const engine = opts.engine ?? 'htdemucs';
  if (!isSeparationEngineId(engine)) throw unknownEngineError('engine', String(engine), SEPARATION_ENGINE_IDS, { auto: false });
  const given = opts.given && (opts.given.speech !== undefined || opts.given.background !== undefined) ? opts.given : undefined;
  return {
    engine,
    engineInstance: opts.engineInstance,
    given,
    speechPath: opts.speechPath,
    backgroundPath: opts.backgroundPath,
    format: opts.format ?? 'float32',
    plan: checkPlan(opts.plan),
    keep: resolveKeep(opts.keep),
    engineOptions: resolveEngineOptions(opts),
  };
}

function checkPlan(plan: SeparateOptions['plan']): ResolvedSeparateOptions['plan'] {
  if (plan === undefined) return undefined;
  if (!['none', 'spans', 'full'].includes(plan.mode)) throw new ValidationError(`plan.mode must be none, spans or full, got "${String(plan.mode)}"`, { field: 'plan' });
  for (const s of plan.spans) {
    if (!(Number.isFinite(s.start) && Number.isFinite(s.end) && s.start >= 0 && s.end >= s.start)) throw new ValidationError(`plan span [${s.start}, ${s.end}] is not a time span`, { field: 'plan' });
  }
  for (const s of plan.speech ?? []) {
    if (!(Number.isFinite(s.start) && Number.isFinite(s.end) && s.end >= s.start)) throw new ValidationError(`plan speech region [${s.start}, ${s.end}] is not a time span`, { field: 'plan' });
  }
  return plan;
}
