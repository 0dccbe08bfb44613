/** The n-best entry point, light to import (the translator itself is loaded when created). */
import type { M2M100Translator, NBestTranslation } from './translator.js';

/**
 * The k best M2M100 translations of `text` with their scores, best first (for picking the
 * shortest that fits a length budget). Engine-agnostic callers use Translator.nbest().
 */
export function translateNBest(translator: M2M100Translator, request: { sourceLocale: string; targetLocale: string; text: string }, k: number, signal?: AbortSignal): Promise<NBestTranslation[]> {
  return translator.nBest(request.text, request.sourceLocale, request.targetLocale, k, signal);
}
