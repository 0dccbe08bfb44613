/**
 * Translation engines in the one registry shape of @dub/core (DUB_TRANSLATE_ENGINE, per pair
 * DUB_TRANSLATE_ENGINE_<SRC>_<TGT>), loaded lazily: importing @dub/translate loads no engine. Each
 * is built from its section of TranslateConfig. The engine of a pair comes from the configuration
 * (`engineForPair`, default `auto`). Given a pair (`TranslateHost.pair`: the source and the
 * configuration; the locale is the target), each entry answers for that pair: apertium by its
 * installed modes (a direct mode; through Spanish only as a fallback, after M2M100), M2M100 by its
 * language table and installed files, the services by their configuration. `resolve('auto')`,
 * auto.ts's choice, `pairEngine` and so `dub doctor --pairs` read these answers.
 */
import { ModelMissingError, defineEngineRegistry, resolveModelFile, type EngineHost, type EngineRegistry, type EngineSupport } from '@dub/core';
import type { BaseTranslatorOptions } from './base-translator.js';
import type { TranslateConfig } from './config.js';
import { CONCRETE_ENGINE_IDS, type EngineId } from './engine-ids.js';
import { M2M100_FILES, M2M100_MODEL_ID, m2m100Files, m2m100PairSupport } from './engines/m2m100/files.js';
import { M2M100_GAPS, m2m100Code } from './engines/m2m100/languages.js';
import type { PairSupport, Translator } from './types.js';

/** What translation's entries answer for: a locale (the target), or with `pair` that pair under a configuration. */
export interface TranslateHost extends EngineHost {
  pair?: { source: string; config: TranslateConfig };
}

const base = (c: TranslateConfig): BaseTranslatorOptions => ({ retry: { attempts: c.attempts }, ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}) });
const configured = (what: string) => () => ({ ok: true as const, reason: `${what}, when configured (given a pair, its configuration says whether it translates it)` });

/** The translators the entries ask about pairs (apertium's installed modes, a service's configuration), one per configuration and engine; never disposed (they hold no model). */
const asked = new WeakMap<TranslateConfig, Map<string, Promise<Translator>>>();
function askedTranslator(id: string, config: TranslateConfig): Promise<Translator> {
  let byId = asked.get(config);
  if (!byId) asked.set(config, (byId = new Map()));
  let t = byId.get(id);
  if (!t) {
    t = TRANSLATE_ENGINES.create(id, config, TRANSLATE_HOST);
    byId.set(id, t);
    t.catch(() => byId!.delete(id));
  }
  return t;
}

const fromPairSupport = (p: PairSupport): EngineSupport => (p.supported ? { ok: true } : { ok: false, reason: p.reason ?? 'unsupported', ...(p.fix ? { fix: p.fix } : {}) });

/** A translator's own answer for the pair, as the registry gives it. */
async function askTranslator(id: string, source: string, target: string, config: TranslateConfig): Promise<EngineSupport> {
  try {
    return fromPairSupport(await (await askedTranslator(id, config)).supports(source, target));
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

/** apertium for a pair: a direct mode; a route through Spanish runs, as a fallback; else why not and the Debian packages that would serve it. */
async function apertiumPair(source: string, target: string, config: TranslateConfig): Promise<EngineSupport> {
  let apertium: import('./engines/apertium.js').ApertiumTranslator;
  try {
    apertium = (await askedTranslator('apertium', config)) as import('./engines/apertium.js').ApertiumTranslator;
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  const route = await apertium.route(source, target).catch(() => undefined);
  if (route?.length === 1) return { ok: true, reason: `apertium has a direct mode (${route[0]!.name})` };
  if (route) return { ok: true, fallback: true, reason: `apertium through Spanish (${route.map((r) => r.name).join(' then ')})` };
  return askTranslator('apertium', source, target, config);
}

/** M2M100 for a pair: both languages in its table and its files installed here. */
function m2m100Pair(source: string, target: string, config: TranslateConfig): EngineSupport {
  const p = m2m100PairSupport(config.m2m100, source, target);
  if (!p.supported) return { ...(fromPairSupport(p) as EngineSupport & { ok: false }), ...(p.fix ? { silent: true } : {}) };
  return { ok: true, reason: 'the M2M100 model is installed', files: Object.values(m2m100Files(config.m2m100)) };
}

export const TRANSLATE_ENGINES: EngineRegistry<Translator, TranslateConfig, TranslateHost> = defineEngineRegistry<Translator, TranslateConfig, TranslateHost>({
  stage: 'translation',
  envVar: 'DUB_TRANSLATE_ENGINE',
  ids: CONCRETE_ENGINE_IDS,
  // `auto` is the offline default (per pair: auto.ts); the services run only when named
  preference: ['apertium', 'm2m100'],
  entries: [
    { id: 'apertium', label: 'Apertium', weights: { models: ['apertium-data'] }, installHint: 'apt-get install apertium apertium-<pair>', supports: (target, env) => (env.pair && target ? apertiumPair(env.pair.source, target, env.pair.config) : { ok: true, reason: 'the offline default' }), create: async (c) => (await import('./engines/apertium.js')).createApertiumTranslator({ ...base(c), ...c.apertium }) },
    {
      id: 'm2m100',
      label: 'M2M100 418M (q8, ONNX Runtime)',
      weights: { models: ['m2m100-418m'] },
      installHint: 'npx dub models fetch m2m100-418m',
      supports: (locale, env) => {
        if (env.pair && locale) return m2m100Pair(env.pair.source, locale, env.pair.config);
        if (locale && !m2m100Code(locale)) return { ok: false, reason: M2M100_GAPS[locale] ?? `M2M100 has no language for ${locale}` };
        try {
          return { ok: true, reason: 'the M2M100 model is installed', files: Object.values(M2M100_FILES).map((f) => resolveModelFile(M2M100_MODEL_ID, f, env.models)) };
        } catch (e) {
          return { ok: false, reason: 'the M2M100 model is not installed (npx dub models fetch m2m100-418m)', silent: true, ...(e instanceof ModelMissingError ? { error: e } : {}) };
        }
      },
      create: async (c) => (await import('./engines/m2m100/translator.js')).createM2M100Translator({ ...base(c), ...c.m2m100 }),
    },
    { id: 'openai-compatible', label: 'OpenAI-compatible service', weights: { service: 'the model of the service you configure' }, supports: (target, env) => (env.pair && target ? askTranslator('openai-compatible', env.pair.source, target, env.pair.config) : configured('an OpenAI-compatible service')()), create: async (c) => (await import('./engines/openai-compatible.js')).createOpenAiCompatibleTranslator({ ...base(c), ...c.openai }) },
    { id: 'deepl', label: 'DeepL', weights: { service: "DeepL's API, under your contract with DeepL" }, supports: (target, env) => (env.pair && target ? askTranslator('deepl', env.pair.source, target, env.pair.config) : configured('DeepL')()), create: async (c) => (await import('./engines/deepl.js')).createDeeplTranslator({ ...base(c), ...c.deepl }) },
    { id: 'libretranslate', label: 'LibreTranslate', weights: { service: 'the LibreTranslate service you configure (its Argos models)' }, supports: (target, env) => (env.pair && target ? askTranslator('libretranslate', env.pair.source, target, env.pair.config) : configured('a LibreTranslate service')()), create: async (c) => (await import('./engines/libretranslate.js')).createLibreTranslateTranslator({ ...base(c), ...c.libretranslate }) },
  ],
});

/** The host translation engines need: M2M100 finds its files through the resolver's default places (DUB_MODELS_DIR, models/). */
export const TRANSLATE_HOST: TranslateHost = Object.freeze({ models: {} });

/** The host under which the entries answer for the pair from `source` (to the locale asked) under `config`. */
export function pairHost(source: string, config: TranslateConfig): TranslateHost {
  return { ...TRANSLATE_HOST, pair: { source, config } };
}

/** Entry `id`'s answer for the pair `source` -> `target` under `config`. */
export async function entryPairSupport(id: string, source: string, target: string, config: TranslateConfig): Promise<EngineSupport> {
  return TRANSLATE_ENGINES.get(id).supports(target, pairHost(source, config));
}

/** Build engine `id` from the configuration (`auto`: the per-pair chooser of auto.ts). */
export async function createTranslator(id: EngineId, config: TranslateConfig): Promise<Translator> {
  if (id === 'auto') {
    return (await import('./auto.js')).createAutoTranslator(
      (engine) => TRANSLATE_ENGINES.create(engine, config, TRANSLATE_HOST),
      (engine, source, target) => entryPairSupport(engine, source, target, config),
    );
  }
  return TRANSLATE_ENGINES.create(id, config, TRANSLATE_HOST);
}
