/**
 * Configuration read from the environment once and validated. Every variable is documented in
 * the README. Call `loadConfig()` at process start and pass the result down; nothing reads
 * process.env elsewhere.
 */
import os from 'node:os';
import path from 'node:path';
import { ValidationError } from './errors.js';

export type DeviceChoice = 'cpu' | 'cuda' | `cuda:${number}`;

export interface DubConfig {
  /** Directory with model files (DUB_MODELS_DIR); the repo's models/ is searched after it. */
  modelsDir: string | undefined;
  /** Execution device for ONNX models (DUB_DEVICE): cpu, cuda or cuda:N. */
  device: DeviceChoice;
  /** Intra-op threads per ONNX session (DUB_ONNX_THREADS, 0 = onnxruntime's default). */
  onnxThreads: number;
  /** Data directory of the embedded mode (DUB_DATA_DIR). */
  dataDir: string;
  /** NATS server URL (DUB_NATS_URL); undefined means embedded (in-process) queue. */
  natsUrl: string | undefined;
  /** PostgreSQL URL (DATABASE_URL); undefined means embedded PGlite in the data dir. */
  databaseUrl: string | undefined;
  /** Log level (DUB_LOG_LEVEL). */
  logLevel: string;
  /** ffmpeg and ffprobe binaries (FFMPEG_PATH, FFPROBE_PATH). */
  ffmpegPath: string;
  ffprobePath: string;
  /** Temporary work directory for stages (DUB_TMP_DIR). */
  tmpDir: string;
  /**
   * Load the default models when a worker thread starts (DUB_WARMUP=1; `dub worker` turns it on
   * unless --no-warmup), so the execution provider of each model is logged before the first job.
   */
  warmup: boolean;
  /**
   * Whether the ONNX sessions a job loads stay loaded for the jobs after it (DUB_KEEP_MODELS=1) or
   * are released as soon as the job is done with them (DUB_KEEP_MODELS=0: the TTS model after the
   * speech timeline, every other one when its job ends), which lowers peak memory and costs a
   * model load per job. Unset: the command's default, `dub serve` and `dub worker` keeping them
   * warm across jobs, `dub run` releasing them.
   */
  keepModels?: boolean;
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, def: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ValidationError(`${name} must be an integer >= ${min}, got "${raw}"`, { field: name });
  return n;
}

function boolFlag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false' || raw === 'no') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes') return true;
  throw new ValidationError(`${name} must be 1 or 0, got "${env[name]}"`, { field: name });
}

export function parseDevice(raw: string | undefined): DeviceChoice {
  const v = (raw ?? 'cpu').trim().toLowerCase();
  if (v === 'cpu' || v === 'cuda' || /^cuda:\d+$/.test(v)) return v as DeviceChoice;
  throw new ValidationError(`DUB_DEVICE must be cpu, cuda or cuda:N, got "${raw}"`, { field: 'DUB_DEVICE' });
}

export function loadConfig(env: Env = process.env): DubConfig {
  const dataDir = path.resolve(env.DUB_DATA_DIR || '.dub');
  return {
    modelsDir: env.DUB_MODELS_DIR ? path.resolve(env.DUB_MODELS_DIR) : undefined,
    device: parseDevice(env.DUB_DEVICE),
    onnxThreads: intVar(env, 'DUB_ONNX_THREADS', 0),
    dataDir,
    natsUrl: env.DUB_NATS_URL || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    logLevel: env.DUB_LOG_LEVEL || 'info',
    ffmpegPath: env.FFMPEG_PATH || 'ffmpeg',
    ffprobePath: env.FFPROBE_PATH || 'ffprobe',
    tmpDir: env.DUB_TMP_DIR ? path.resolve(env.DUB_TMP_DIR) : os.tmpdir(),
    warmup: boolFlag(env, 'DUB_WARMUP'),
    ...(env.DUB_KEEP_MODELS?.trim() ? { keepModels: boolFlag(env, 'DUB_KEEP_MODELS') } : {}),
  };
}
