/**
 * The translation contract: a batch of timed, speaker-attributed segments in, one translation per
 * segment out (same ids, same order). Engines implement it through BaseTranslator.
 */
import type { Engine, Glossary, StageContext } from '@dub/core';

export interface SourceSegment {
  /** Unique within the request; the translation carries the same id. */
  id: string;
  text: string;
  /** Speaker label; engines that read context (LLMs) keep speaker turns apart with it. */
  speaker?: string;
  /** Speaking time of the segment in seconds: the dubbed line should fit in about this time. */
  duration?: number;
  /**
   * At most this many characters (engines with `lengthBudget` take it instead of the budget they
   * derive from `duration`; generation asks for a shorter line with it).
   */
  maxChars?: number;
}

export interface TranslateRequest {
  /** Contract locale codes, e.g. "en-US" -> "es-ES". */
  sourceLocale: string;
  targetLocale: string;
  segments: SourceSegment[];
  /** Free text about the material (title, domain) for engines that can use it. */
  context?: string;
  /** Terms with a fixed translation or kept as they are (glossary.ts says how each engine applies them). */
  glossary?: Glossary;
}

export interface TranslatedSegment {
  id: string;
  text: string;
}

export interface PairSupport {
  supported: boolean;
  /** Why not, naming what would make it work. */
  reason?: string;
  /** What makes it work on this host, where the engine knows (apertium: the Debian packages to install). */
  fix?: string;
}

/** A translation engine: `id` is its registry id ("apertium", "m2m100", `auto`'s "auto"). */
export interface Translator extends Engine {
  /** @deprecated The same as `id` (what translators called their id before the Engine contract). */
  readonly engine: string;
  /**
   * Whether the engine writes to a per-segment character budget (`maxChars`): an LLM does; rule-
   * based and MT services (apertium, DeepL, LibreTranslate) translate at their own length.
   */
  readonly lengthBudget: boolean;
  /** Whether this engine, as configured, can translate sourceLocale -> targetLocale. */
  supports(sourceLocale: string, targetLocale: string): Promise<PairSupport>;
  /** Translate every segment; all or nothing (never a partial result). */
  translate(request: TranslateRequest, ctx?: Partial<StageContext>): Promise<TranslatedSegment[]>;
  /**
   * Optional, for engines that rank several translations (an offline model's beam search): up to
   * `n` distinct translations of each segment, best first, the first being what `translate` gives.
   * Generation takes a shorter one for a line that does not fit its time (pipeline
   * generate-shorten.ts: the best-ranked within the line's character budget, else the shortest).
   * Glossary terms apply to every alternative as they do in `translate`.
   */
  nbest?(request: TranslateRequest, n: number, ctx?: Partial<StageContext>): Promise<NBestSegment[]>;
}

/** A segment's alternative translations, best first (Translator.nbest). */
export interface NBestSegment {
  id: string;
  texts: string[];
}
