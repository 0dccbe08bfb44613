/**
 * `auto`, the default translation engine (DUB_TRANSLATE_ENGINE unset or `auto`): the offline
 * engines, chosen per pair.
 *
 * 1. apertium where it has a direct mode for the pair (one Debian package, rule-based: its pairs
 *    are tested on real output here, fast and predictable);
 * 2. M2M100 (the offline neural model) where its files are installed and it has both languages:
 *    the pairs apertium lacks, and those apertium would only reach through Spanish (two rule-based
 *    legs compound their errors; one neural model translates directly);
 * 3. apertium through Spanish where both legs are installed and M2M100 is not;
 * 4. else no engine: the answer names what is missing (apertium's Debian packages, `npx dub
 *    models fetch m2m100-418m`).
 * Nothing is substituted silently: `choose()` says which engine serves the pair and why; the
 * translation record names that engine (translatorForPair returns it, not this chooser). What
 * each engine can do for the pair is its registry entry's answer (registry.ts), the one
 * `resolve('auto')` ranks the same way (apertium through Spanish is a fallback there).
 */
import type { EngineSupport, StageContext } from '@dub/core';
import type { ConcreteEngineId } from './engine-ids.js';
import type { PairSupport, TranslateRequest, TranslatedSegment, Translator } from './types.js';

export interface AutoChoice {
  /** The engine that serves the pair (apertium when none does: its answer carries the fixes). */
  engine: ConcreteEngineId;
  translator: Translator;
  support: PairSupport;
  /** Why this engine, for the record and `dub doctor`. */
  reason: string;
}

export class AutoTranslator implements Translator {
  readonly id = 'auto';
  readonly label = 'auto (apertium or M2M100 per pair)';
  /** @deprecated `id`. */
  readonly engine = 'auto';
  readonly lengthBudget = false;
  private apertium: Promise<Translator> | undefined;
  private m2m100: Promise<Translator> | undefined;

  /**
   * `create` builds an engine of TRANSLATE_ENGINES (registry.ts, which imports this module on first
   * use) from the configuration; `support` is that engine's registry entry's answer for a pair.
   */
  constructor(
    private readonly create: (id: 'apertium' | 'm2m100') => Promise<Translator>,
    private readonly support: (id: 'apertium' | 'm2m100', sourceLocale: string, targetLocale: string) => Promise<EngineSupport>,
  ) {}

  private getApertium(): Promise<Translator> {
    return (this.apertium ??= this.create('apertium'));
  }
  private getM2M100(): Promise<Translator> {
    return (this.m2m100 ??= this.create('m2m100'));
  }

  async choose(sourceLocale: string, targetLocale: string): Promise<AutoChoice> {
    const a = await this.support('apertium', sourceLocale, targetLocale);
    if (a.ok && !a.fallback) return { engine: 'apertium', translator: await this.getApertium(), support: { supported: true }, reason: `auto: ${a.reason}` };
    const m = await this.support('m2m100', sourceLocale, targetLocale);
    if (m.ok) {
      return { engine: 'm2m100', translator: await this.getM2M100(), support: { supported: true }, reason: `auto: apertium has no direct mode for ${sourceLocale} -> ${targetLocale}${a.ok ? ' (only through Spanish)' : ''}; the offline model M2M100 translates it` };
    }
    if (a.ok) return { engine: 'apertium', translator: await this.getApertium(), support: { supported: true }, reason: `auto: ${a.reason}; M2M100 does not serve it here: ${m.reason}` };
    const fixes = [a.fix, m.fix].filter((f): f is string => !!f);
    return {
      engine: 'apertium',
      translator: await this.getApertium(),
      support: { supported: false, reason: `${a.reason}; M2M100: ${m.reason}`, ...(fixes.length ? { fix: fixes.join('; or ') } : {}) },
      reason: 'auto: no offline engine serves the pair here',
    };
  }

  /** The engine `auto` runs for a pair (apertium when none serves it: its refusal names the fixes). */
  async engineFor(sourceLocale: string, targetLocale: string): Promise<ConcreteEngineId> {
    return (await this.choose(sourceLocale, targetLocale)).engine;
  }

  async supports(sourceLocale: string, targetLocale: string): Promise<PairSupport> {
    return (await this.choose(sourceLocale, targetLocale)).support;
  }

  async translate(request: TranslateRequest, ctx?: Partial<StageContext>): Promise<TranslatedSegment[]> {
    const c = await this.choose(request.sourceLocale, request.targetLocale);
    return c.translator.translate(request, ctx);
  }

  /** The engines it created. */
  async dispose(): Promise<void> {
    const made = [this.apertium, this.m2m100];
    this.apertium = this.m2m100 = undefined;
    for (const t of made) await (await t?.catch(() => undefined))?.dispose();
  }
}

export function createAutoTranslator(
  create: (id: 'apertium' | 'm2m100') => Promise<Translator>,
  support: (id: 'apertium' | 'm2m100', sourceLocale: string, targetLocale: string) => Promise<EngineSupport>,
): AutoTranslator {
  return new AutoTranslator(create, support);
}
