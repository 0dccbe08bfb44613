/** The n-best entry point, light to import (the translator itself is loaded when created). */

/** One translation of the n-best list. */
export interface NBestTranslation {
  text: string;
  /** The beam score: sum of token log-probabilities / generated length (length_penalty 1.0). */
  score: number;
  /** Sum of token log-probabilities. */
  logprob: number;
  /** Ids generated (without the language token and </s>). */
  tokens: number[];
  /** false where it was cut at the length limit instead of ending with </s>. */
  finished: boolean;
}

/** What translateNBest needs of an M2M100Translator (its type lives in translator.ts, which re-exports this module). */
export interface NBestSource {
  nBest(text: string, sourceLocale: string, targetLocale: string, k: number, signal?: AbortSignal): Promise<NBestTranslation[]>;
}

/**
 * The k best M2M100 translations of `text` with their scores, best first (for picking the
 * shortest that fits a length budget). Engine-agnostic callers use Translator.nbest().
 */
export function translateNBest(translator: NBestSource, request: { sourceLocale: string; targetLocale: string; text: string }, k: number, signal?: AbortSignal): Promise<NBestTranslation[]> {
  return translator.nBest(request.text, request.sourceLocale, request.targetLocale, k, signal);
}
