export type { SourceSegment, TranslateRequest, TranslatedSegment, Translator, PairSupport, NBestSegment } from './types.js';
export {
  BaseTranslator,
  resolveBaseOptions,
  checkBatchResult,
  type BaseTranslatorOptions,
  type ResolvedBaseOptions,
  type TranslateBatch,
  type BatchCall,
} from './base-translator.js';
export {
  TermMatcher,
  glossaryMatcher,
  termsIn,
  maskTerms,
  unmaskTerms,
  substituteTerms,
  defaultPlaceholder,
  checkGlossaryLine,
  recheckGlossaryLine,
  type TermMatch,
  type MaskSlot,
  type MaskedText,
} from './glossary.js';
export { makeBatches, type BatchLimits } from './batching.js';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryOptions } from './retry.js';
export { charBudget, speakingRate } from './length-budget.js';
export { ENGINE_IDS, type EngineId, type ConcreteEngineId } from './engine-ids.js';
export { loadTranslateConfig, engineForPair, pairVariable, type TranslateConfig } from './config.js';
export { TRANSLATE_ENGINES, TRANSLATE_HOST, createTranslator } from './registry.js';
export { translatorForPair, pairEngine } from './select-translator.js';
export type { AutoTranslator, AutoChoice } from './auto.js';
export { isSameLanguage, passThroughReason } from './same-language.js';
export { alignReferenceSrt, cleanCueText, type TimedSegment, type TimedCue } from './align-reference-srt.js';
export type { ApertiumOptions, ApertiumTranslator } from './engines/apertium.js';
export { APERTIUM_PACKAGES, apertiumPackagesFor, packageOfMode, type ApertiumPackage, type PackageAdvice } from './engines/apertium-packages.js';
export { apertiumCodes, findRoute, parseModeList, type ApertiumMode } from './engines/apertium-modes.js';
export type { M2M100Options, M2M100Translator, NBestTranslation } from './engines/m2m100/translator.js';
export { translateNBest } from './engines/m2m100/nbest.js';
export { M2M100_FILES, M2M100_MODEL_ID, m2m100Files, m2m100Installed } from './engines/m2m100/files.js';
export { M2M100_LANGUAGES, m2m100Code } from './engines/m2m100/languages.js';
export type { OpenAiCompatibleOptions, OpenAiCompatibleTranslator } from './engines/openai-compatible.js';
export type { DeeplOptions, DeeplTranslator } from './engines/deepl.js';
export type { LibreTranslateOptions, LibreTranslateTranslator } from './engines/libretranslate.js';
