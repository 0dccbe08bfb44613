/**
 * A shorter line for one that does not fit its time (issue 26, item 4), from the engine configured
 * for the pair, in one of two ways:
 *   - `length_budget`: an engine that writes to a character budget (an LLM through
 *     openai-compatible) translates the source line again within the budget;
 *   - `n_best`: an engine that ranks several translations (Translator.nbest: an offline model's
 *     beam search) gives its NBEST_SIZE best; the best-ranked one within the budget is taken, else
 *     the shortest, as long as it is shorter than the script's line.
 * Where the pair's engine does neither (apertium, DeepL, LibreTranslate), the offline model's
 * n-best (M2M100) gives the shorter line when it is installed and serves the pair (the record names
 * it); else the shortener says why not, and the report records it for every line that needed one. Each request is a cached artifact
 * (engine, pair, text, budget or n). `shortenLine` asks, speaks the shorter text, and writes the
 * report's `shortening` record: what was tried, and whether the shorter line is spoken.
 */
import type { Glossary, ScriptSegment, StageContext, VersionScript } from '@dub/core';
import type { TranslateConfig, Translator } from '@dub/translate';
import type { ArtifactCache } from './artifacts.js';
import type { Shortening } from './generate-quality.js';
import { CONDENSE_LANGUAGES, condenseLine } from './condense.js';

/** How many alternatives an n-best engine is asked for. */
export const NBEST_SIZE = 8;

export type ShortenMethod = 'length_budget' | 'n_best' | 'condensed';

export interface ShortenAttempt {
  /** Whether the engine was asked. */
  attempted: boolean;
  /** The shorter line (fewer characters than the script's), when there is one. */
  text?: string;
  /** Why there is none. */
  reason: string;
  method?: ShortenMethod;
  /** n_best: the distinct alternatives the engine gave. */
  candidates?: number;
  /** condensed: what was left out of the source line (condense.ts). */
  removed?: string[];
}

export interface Shortener {
  engine: string;
  possible: boolean;
  reason: string;
  method?: ShortenMethod;
  shorten(segment: ScriptSegment, budgetChars: number, seconds: number): Promise<ShortenAttempt>;
}

const firstLine = (e: unknown): string => String((e as Error)?.message ?? e).split('\n')[0]!;

export async function shortenerFor(script: VersionScript, config: TranslateConfig | undefined, cache: ArtifactCache, ctx: StageContext, o: { condense?: boolean } = {}): Promise<Shortener> {
  const { createTranslator, engineForPair, loadTranslateConfig, translatorForPair } = await import('@dub/translate');
  const cfg = config ?? loadTranslateConfig(process.env);
  const source = script.source_locale;
  const target = script.target_locale;
  let translator;
  try {
    translator = await translatorForPair(cfg, source, target);
  } catch (e) {
    const engine = engineForPair(cfg, source, target).engine;
    return refuse(engine, `no shorter line is possible: ${engine} cannot translate ${source} -> ${target} here (${firstLine(e)})`);
  }
  const own = shortenerOf(translator, script, cache, ctx);
  if (own.possible || translator.id === 'm2m100') return own;
  // The pair's engine cannot (apertium): the offline model's n-best, where it is installed and serves the pair.
  try {
    const m2m100 = await createTranslator('m2m100', cfg);
    const support = await m2m100.supports(source, target);
    if (support.supported && m2m100.nbest) {
      const s = shortenerOf(m2m100, script, cache, ctx);
      return { ...s, reason: `${translator.id} translates ${source} -> ${target} at its own length; ${s.reason}` };
    }
    await m2m100.dispose();
    return condensedOr(translator, script, cache, ctx, `${own.reason}; M2M100's n-best would, where it serves the pair (here: ${support.reason ?? 'unsupported'})`, o.condense);
  } catch (e) {
    return condensedOr(translator, script, cache, ctx, `${own.reason}; M2M100's n-best would, where it serves the pair (here: ${firstLine(e)})`, o.condense);
  }
}

/** The condensing shortener over `translator` where the source language has rules (condense.ts), else a refusal with `why`. */
function condensedOr(translator: Translator, script: VersionScript, cache: ArtifactCache, ctx: StageContext, why: string, condense = true): Shortener {
  if (!condense) return refuse(translator.id, `${why}; condensing the source line is off (DUB_SHORTEN_CONDENSE=off)`);
  return condensingShortener(translator, script, cache, ctx, why) ?? { ...refuse(translator.id, `${why}; no condensing rules for ${script.source_locale} sources (condense.ts has ${CONDENSE_LANGUAGES.join(', ')})`) };
}

/**
 * Where the pair's engine can give no shorter line (`why`): the source line condensed by
 * condense.ts's rules (hesitations, fillers, discourse markers and repetitions left out) and
 * translated again by the same engine; undefined where the source language has no rules. A line
 * with nothing to leave out is not asked for (attempted: false, the reason says so).
 */
export function condensingShortener(translator: Translator, script: VersionScript, cache: ArtifactCache, ctx: StageContext, why: string): Shortener | undefined {
  const source = script.source_locale;
  const target = script.target_locale;
  const engine = translator.id;
  if (condenseLine('', source) === undefined) return undefined;
  const base = { method: 'condensed' as const };
  return {
    engine,
    possible: true,
    method: 'condensed',
    reason: `${why}; instead the source line is condensed (hesitations, fillers, discourse markers and repeated words left out, as subtitling does: condense.ts) and translated again by ${engine}`,
    async shorten(segment) {
      const c = condenseLine(segment.source_text, source)!;
      if (c.removed.length === 0 || c.text === '') return { ...base, attempted: false, reason: `the source line has no hesitation, filler, discourse marker or repeated word to leave out (condense.ts); ${why}` };
      try {
        const r = await cache.run<{ text: string }>('shorten', { engine, source, target, text: c.text, speaker: segment.speaker, condensed: CONDENSE_VERSION, ...lineGlossary(segment) }, ctx, async () => {
          const [t] = await translator.translate({ sourceLocale: source, targetLocale: target, segments: [{ id: segment.id, text: c.text, speaker: segment.speaker }], ...lineGlossary(segment) }, ctx);
          return { text: (t?.text ?? '').trim() };
        });
        const text = sentenceCase(r.value.text, segment.target_text);
        const seen = { ...base, attempted: true, removed: c.removed };
        if (text === '') return { ...seen, reason: `${engine} returned an empty line for the condensed source` };
        if (text.length >= segment.target_text.length) return { ...seen, reason: `${engine}'s line for the condensed source (${text.length} characters) is not shorter than the script's (${segment.target_text.length})` };
        return { ...seen, text, reason: '' };
      } catch (e) {
        ctx.logger.warn({ segment: segment.id, err: firstLine(e) }, 'shorter translation failed');
        return { ...base, attempted: true, removed: c.removed, reason: `the request to ${engine} failed: ${firstLine(e)}` };
      }
    },
  };
}

/** `text` with its first letter capitalized where the script's line starts with a capital (a condensed source may start mid-sentence: "there is" for "Well, there is"). */
export function sentenceCase(text: string, like: string): string {
  const first = like.match(/\p{L}/u)?.[0];
  if (!first || first === first.toLowerCase()) return text;
  return text.replace(/\p{L}/u, (l) => l.toUpperCase());
}

/** Bump when condense.ts's rules change (the cached condensed translations are keyed by it). */
export const CONDENSE_VERSION = 1;

function refuse(engine: string, reason: string): Shortener {
  return { engine, possible: false, reason, shorten: async () => ({ attempted: false, reason }) };
}

/** The shortener of `translator` for the script's pair: by a length budget, by its n-best, or none (the reason says why). */
export function shortenerOf(translator: Translator, script: VersionScript, cache: ArtifactCache, ctx: StageContext): Shortener {
  const source = script.source_locale;
  const target = script.target_locale;
  const engine = translator.id;
  if (translator.lengthBudget) {
    return {
      engine,
      possible: true,
      method: 'length_budget',
      reason: `${engine} re-translates a line that does not fit within a character budget`,
      async shorten(segment, budget, seconds) {
        const base = { method: 'length_budget' as const };
        try {
          const r = await cache.run<{ text: string }>('shorten', { engine, source, target, text: segment.source_text, speaker: segment.speaker, budget, ...lineGlossary(segment) }, ctx, async () => {
            const [t] = await translator.translate(
              { sourceLocale: source, targetLocale: target, segments: [{ id: segment.id, text: segment.source_text, speaker: segment.speaker, duration: seconds, maxChars: budget }], ...lineGlossary(segment) },
              ctx,
            );
            return { text: (t?.text ?? '').trim() };
          });
          const text = r.value.text;
          if (text === '') return { ...base, attempted: true, reason: `${engine} returned an empty line` };
          if (text.length >= segment.target_text.length) return { ...base, attempted: true, reason: `${engine}'s line (${text.length} characters, budget ${budget}) is not shorter than the script's (${segment.target_text.length})` };
          return { ...base, attempted: true, text, reason: '' };
        } catch (e) {
          ctx.logger.warn({ segment: segment.id, err: firstLine(e) }, 'shorter translation failed');
          return { ...base, attempted: true, reason: `the request to ${engine} failed: ${firstLine(e)}` };
        }
      },
    };
  }
  const nbest = translator.nbest?.bind(translator);
  if (nbest) {
    return {
      engine,
      possible: true,
      method: 'n_best',
      reason: `${engine} gives its ${NBEST_SIZE} best translations of a line that does not fit; the best-ranked within its character budget is spoken, else the shortest`,
      async shorten(segment, budget) {
        const base = { method: 'n_best' as const };
        try {
          const r = await cache.run<{ texts: string[] }>('shorten', { engine, source, target, text: segment.source_text, speaker: segment.speaker, nbest: NBEST_SIZE, ...lineGlossary(segment) }, ctx, async () => {
            const [alt] = await nbest({ sourceLocale: source, targetLocale: target, segments: [{ id: segment.id, text: segment.source_text, speaker: segment.speaker }], ...lineGlossary(segment) }, NBEST_SIZE, ctx);
            return { texts: alt?.texts ?? [] };
          });
          const pick = pickShorter(r.value.texts, segment.target_text, budget);
          const seen = { ...base, attempted: true, candidates: pick.candidates };
          if (pick.text === undefined) return { ...seen, reason: pick.candidates ? `none of ${engine}'s ${pick.candidates} alternatives is shorter than the script's line (${segment.target_text.length} characters)` : `${engine} gave no alternative` };
          return { ...seen, text: pick.text, reason: '' };
        } catch (e) {
          ctx.logger.warn({ segment: segment.id, err: firstLine(e) }, 'shorter translation failed');
          return { ...base, attempted: true, reason: `the request to ${engine} failed: ${firstLine(e)}` };
        }
      },
    };
  }
  return refuse(
    engine,
    `no shorter line is possible: ${engine} translates at its own length (it takes no length budget and gives no alternatives); an engine that does (DUB_TRANSLATE_ENGINE=openai-compatible, or an offline model with n-best) can give a shorter line`,
  );
}

/**
 * Of an engine's alternatives (best first): the best-ranked one within `budget` characters, else
 * the shortest; only one shorter than `current`. `candidates`: the distinct non-empty alternatives.
 */
export function pickShorter(texts: readonly string[], current: string, budget: number): { text?: string; candidates: number } {
  const distinct = [...new Set(texts.map((t) => t.trim()).filter((t) => t !== ''))];
  const shorter = distinct.filter((t) => t.length < current.length);
  const within = shorter.find((t) => t.length <= budget);
  if (within !== undefined) return { text: within, candidates: distinct.length };
  const shortest = shorter.reduce<string | undefined>((a, t) => (a === undefined || t.length < a.length ? t : a), undefined);
  return shortest !== undefined ? { text: shortest, candidates: distinct.length } : { candidates: distinct.length };
}

/** A line's lengths for placement: at its pace, and at its speaker's rate when the engine's range could not reach it. */
export interface LineLength {
  natural: number;
  atSpeakerRate?: number;
}

/**
 * Ask for a shorter `segment` that would last about `room` seconds at the speed `cap`; speak it
 * (`speak`: its lengths) and keep it only when it is shorter to speak. The record says what was
 * tried: engine, method, budget, characters and seconds before and after, and why not.
 */
export async function shortenLine(
  shortener: Shortener,
  segment: ScriptSegment,
  before: LineLength,
  room: number,
  cap: number,
  speak: (text: string) => Promise<LineLength>,
): Promise<{ record: Shortening; text?: string; length?: LineLength }> {
  const text0 = segment.target_text;
  const demand = (l: LineLength): number => l.atSpeakerRate ?? l.natural;
  const budget = Math.max(1, Math.floor((text0.length * cap * room) / Math.max(1e-3, demand(before))));
  const asked = await shortener.shorten(segment, budget, room);
  const common = {
    engine: shortener.engine,
    attempted: asked.attempted,
    ...(asked.attempted ? { budget_chars: budget } : {}),
    chars_before: text0.length,
    ...(asked.method && asked.attempted ? { method: asked.method } : {}),
    ...(asked.candidates !== undefined ? { candidates: asked.candidates } : {}),
    ...(asked.removed !== undefined ? { removed: asked.removed } : {}),
    seconds_before: r3(demand(before)),
  };
  if (asked.text === undefined) return { record: { ...common, applied: false, reason: asked.reason } };
  const after = await speak(asked.text);
  const applied = demand(after) < demand(before);
  const how =
    asked.method === 'n_best'
      ? `${shortener.engine}'s alternative${asked.text.length <= budget ? ` within ${budget} characters` : ` (the shortest; none within ${budget} characters)`}`
      : asked.method === 'condensed'
        ? `the source condensed (left out: ${(asked.removed ?? []).join(', ')}) and translated again${asked.text.length <= budget ? ` within ${budget} characters` : ` (${budget} characters asked)`}`
        : `re-translated within ${budget} characters`;
  const record: Shortening = {
    ...common,
    applied,
    chars_after: asked.text.length,
    seconds_after: r3(demand(after)),
    reason: applied ? `${how}: ${text0.length} -> ${asked.text.length} characters, ${r3(demand(before))} -> ${r3(demand(after))} s` : `the shorter text (${asked.text.length} characters) is not shorter to speak (${r3(demand(after))} s, was ${r3(demand(before))} s)`,
  };
  return applied ? { record, text: asked.text, length: after } : { record };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** The glossary terms of a script line (as prepare-version found them), for its shorter translation. */
function lineGlossary(segment: ScriptSegment): { glossary?: Glossary } {
  if (!segment.glossary?.length) return {};
  return { glossary: segment.glossary.map((t) => (t.keep ? { term: t.term, keep: true as const } : { term: t.term, translation: t.expected })) };
}
