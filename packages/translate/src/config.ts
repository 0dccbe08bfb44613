/**
 * Translation configuration, read from the environment once by `loadTranslateConfig(env)` and
 * passed down. Every variable is listed in the package README.
 *
 * Engine choice per pair: DUB_TRANSLATE_ENGINE_<SRC>_<TGT> (language codes, e.g.
 * DUB_TRANSLATE_ENGINE_EN_DE=deepl) wins over DUB_TRANSLATE_ENGINE (default "auto": the offline
 * engines, apertium or M2M100, chosen per pair by auto.ts).
 */
import path from 'node:path';
import { engineChoiceOf, ValidationError, languageOf, parseDevice, type DeviceChoice } from '@dub/core';
import { CONCRETE_ENGINE_IDS, type EngineId } from './engine-ids.js';

type Env = Record<string, string | undefined>;

export interface TranslateConfig {
  /** DUB_TRANSLATE_ENGINE */
  defaultEngine: EngineId;
  /** DUB_TRANSLATE_ENGINE_<SRC>_<TGT>, keyed "src_tgt" in lower case (e.g. "en_de"). */
  pairEngines: Record<string, EngineId>;
  /** DUB_TRANSLATE_TIMEOUT_MS: time limit of one request; undefined = each engine's default. */
  timeoutMs: number | undefined;
  /** DUB_TRANSLATE_ATTEMPTS: attempts per batch, the first included. */
  attempts: number;
  apertium: { bin: string; dataDir: string | undefined; pivot: string };
  openai: { baseUrl: string | undefined; apiKey: string | undefined; model: string | undefined; temperature: number; jsonMode: boolean };
  deepl: { apiKey: string | undefined; baseUrl: string | undefined; formality: string | undefined };
  libretranslate: { baseUrl: string | undefined; apiKey: string | undefined };
  /** M2M100 on ONNX Runtime: DUB_TRANSLATE_M2M100_MODEL, DUB_MODELS_DIR, DUB_DEVICE, DUB_ONNX_THREADS, DUB_TRANSLATE_M2M100_BEAMS. */
  m2m100: { model: string; modelsDir: string | undefined; device: DeviceChoice; threads: number; beams: number | undefined };
}

/** The engine a variable names (unset: auto); an unknown one is @dub/core's one "is not an engine" error. */
function engineVar(env: Env, name: string): EngineId {
  return engineChoiceOf(name, env[name], CONCRETE_ENGINE_IDS);
}

function numVar(env: Env, name: string, def: number | undefined, check: (n: number) => boolean, what: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || !check(n)) throw new ValidationError(`${name} must be ${what}, got "${raw}"`, { field: name });
  return n;
}

function str(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

const PAIR_VAR = /^DUB_TRANSLATE_ENGINE_([A-Z]{2,3})_([A-Z]{2,3})$/;

export function loadTranslateConfig(env: Env): TranslateConfig {
  const pairEngines: Record<string, EngineId> = {};
  for (const name of Object.keys(env)) {
    const m = PAIR_VAR.exec(name);
    if (m && env[name]?.trim()) pairEngines[`${m[1]!.toLowerCase()}_${m[2]!.toLowerCase()}`] = engineVar(env, name);
  }
  return {
    defaultEngine: engineVar(env, 'DUB_TRANSLATE_ENGINE'),
    pairEngines,
    timeoutMs: numVar(env, 'DUB_TRANSLATE_TIMEOUT_MS', undefined, (n) => Number.isInteger(n) && n > 0, 'a positive integer'),
    attempts: numVar(env, 'DUB_TRANSLATE_ATTEMPTS', 4, (n) => Number.isInteger(n) && n >= 1, 'an integer >= 1')!,
    apertium: { bin: str(env, 'DUB_TRANSLATE_APERTIUM_PATH') ?? 'apertium', dataDir: str(env, 'DUB_TRANSLATE_APERTIUM_DATA_DIR'), pivot: str(env, 'DUB_TRANSLATE_APERTIUM_PIVOT') ?? 'spa' },
    openai: {
      baseUrl: str(env, 'DUB_TRANSLATE_OPENAI_BASE_URL'),
      apiKey: str(env, 'DUB_TRANSLATE_OPENAI_API_KEY'),
      model: str(env, 'DUB_TRANSLATE_OPENAI_MODEL'),
      temperature: numVar(env, 'DUB_TRANSLATE_OPENAI_TEMPERATURE', 0.2, (n) => n >= 0 && n <= 2, 'a number from 0 to 2')!,
      jsonMode: (str(env, 'DUB_TRANSLATE_OPENAI_JSON_MODE') ?? 'true') !== 'false',
    },
    deepl: { apiKey: str(env, 'DUB_TRANSLATE_DEEPL_API_KEY'), baseUrl: str(env, 'DUB_TRANSLATE_DEEPL_URL'), formality: str(env, 'DUB_TRANSLATE_DEEPL_FORMALITY') },
    libretranslate: { baseUrl: str(env, 'DUB_TRANSLATE_LIBRETRANSLATE_URL'), apiKey: str(env, 'DUB_TRANSLATE_LIBRETRANSLATE_API_KEY') },
    m2m100: {
      model: str(env, 'DUB_TRANSLATE_M2M100_MODEL') ?? 'm2m100-418m',
      modelsDir: str(env, 'DUB_MODELS_DIR') ? path.resolve(str(env, 'DUB_MODELS_DIR')!) : undefined,
      device: parseDevice(str(env, 'DUB_DEVICE')),
      threads: numVar(env, 'DUB_ONNX_THREADS', 0, (n) => Number.isInteger(n) && n >= 0, 'an integer >= 0')!,
      beams: numVar(env, 'DUB_TRANSLATE_M2M100_BEAMS', undefined, (n) => Number.isInteger(n) && n >= 1 && n <= 16, 'an integer from 1 to 16'),
    },
  };
}

/** The env variable that picks the engine of a pair, e.g. DUB_TRANSLATE_ENGINE_EN_DE. */
export function pairVariable(sourceLocale: string, targetLocale: string): string {
  return `DUB_TRANSLATE_ENGINE_${languageOf(sourceLocale).toUpperCase()}_${languageOf(targetLocale).toUpperCase()}`;
}

/** The engine configured for a pair and the variable it came from. */
export function engineForPair(config: TranslateConfig, sourceLocale: string, targetLocale: string): { engine: EngineId; from: string } {
  const key = `${languageOf(sourceLocale)}_${languageOf(targetLocale)}`.toLowerCase();
  const pair = config.pairEngines[key];
  if (pair) return { engine: pair, from: pairVariable(sourceLocale, targetLocale) };
  return { engine: config.defaultEngine, from: 'DUB_TRANSLATE_ENGINE' };
}
