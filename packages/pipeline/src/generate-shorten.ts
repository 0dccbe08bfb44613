/**
 * A shorter line for one that does not fit its time: the source line translated again within a
 * character budget, by the engine configured for the pair when it writes to a length budget (an
 * LLM through openai-compatible). Engines that translate at their own length (apertium, DeepL,
 * LibreTranslate) cannot: the shortener says so, and the report records it for every line that
 * would have needed it. Each request is a cached artifact (engine, pair, text, budget).
 */
import type { Glossary, ScriptSegment, StageContext, VersionScript } from '@dub/core';
import type { TranslateConfig } from '@dub/translate';
import type { ArtifactCache } from './artifacts.js';

export interface ShortenAttempt {
  /** Whether the engine was asked. */
  attempted: boolean;
  /** The shorter line (fewer characters than the script's), when there is one. */
  text?: string;
  /** Why there is none. */
  reason: string;
}

export interface Shortener {
  engine: string;
  possible: boolean;
  reason: string;
  shorten(segment: ScriptSegment, budgetChars: number, seconds: number): Promise<ShortenAttempt>;
}

const firstLine = (e: unknown): string => String((e as Error)?.message ?? e).split('\n')[0]!;

export async function shortenerFor(script: VersionScript, config: TranslateConfig | undefined, cache: ArtifactCache, ctx: StageContext): Promise<Shortener> {
  const { engineForPair, loadTranslateConfig, translatorForPair } = await import('@dub/translate');
  const cfg = config ?? loadTranslateConfig(process.env);
  const source = script.source_locale;
  const target = script.target_locale;
  const refuse = (engine: string, reason: string): Shortener => ({ engine, possible: false, reason, shorten: async () => ({ attempted: false, reason }) });
  let translator;
  try {
    translator = await translatorForPair(cfg, source, target);
  } catch (e) {
    const engine = engineForPair(cfg, source, target).engine;
    return refuse(engine, `no shorter line is possible: ${engine} cannot translate ${source} -> ${target} here (${firstLine(e)})`);
  }
  if (!translator.lengthBudget) {
    return refuse(
      translator.engine,
      `no shorter line is possible: ${translator.engine} translates at its own length (it takes no length budget); an engine that does (DUB_TRANSLATE_ENGINE=openai-compatible) can re-translate a line within a character budget`,
    );
  }
  const engine = translator.engine;
  return {
    engine,
    possible: true,
    reason: `${engine} re-translates a line that does not fit within a character budget`,
    async shorten(segment, budget, seconds) {
      try {
        const r = await cache.run<{ text: string }>('shorten', { engine, source, target, text: segment.source_text, speaker: segment.speaker, budget, ...lineGlossary(segment) }, ctx, async () => {
          const [t] = await translator.translate(
            { sourceLocale: source, targetLocale: target, segments: [{ id: segment.id, text: segment.source_text, speaker: segment.speaker, duration: seconds, maxChars: budget }], ...lineGlossary(segment) },
            ctx,
          );
          return { text: (t?.text ?? '').trim() };
        });
        const text = r.value.text;
        if (text === '') return { attempted: true, reason: `${engine} returned an empty line` };
        if (text.length >= segment.target_text.length) return { attempted: true, reason: `${engine}'s line (${text.length} characters, budget ${budget}) is not shorter than the script's (${segment.target_text.length})` };
        return { attempted: true, text, reason: '' };
      } catch (e) {
        ctx.logger.warn({ segment: segment.id, err: firstLine(e) }, 'shorter translation failed');
        return { attempted: true, reason: `the request to ${engine} failed: ${firstLine(e)}` };
      }
    },
  };
}

/** The glossary terms of a script line (as prepare-version found them), for its shorter translation. */
function lineGlossary(segment: ScriptSegment): { glossary?: Glossary } {
  if (!segment.glossary?.length) return {};
  return { glossary: segment.glossary.map((t) => (t.keep ? { term: t.term, keep: true as const } : { term: t.term, translation: t.expected })) };
}
