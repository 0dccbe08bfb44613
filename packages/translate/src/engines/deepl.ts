/**
 * deepl: the DeepL API v2. POST {baseUrl}/v2/translate with `Authorization: DeepL-Auth-Key <key>`,
 * body {text: [...], source_lang, target_lang, context?}; reply {translations: [{text}]} in input
 * order. Keys ending in ":fx" are Free keys and use https://api-free.deepl.com, others
 * https://api.deepl.com. Target codes carry the regional variant where DeepL needs one (EN-US,
 * PT-BR, PT-PT); source codes never do.
 */
import { getLocale } from '@dub/core';
import { BaseTranslator, resolveBaseOptions, type BaseTranslatorOptions, type BatchCall, type TranslateBatch } from '../base-translator.js';
import { malformedReply, postJson } from '../http.js';
import type { PairSupport, TranslatedSegment } from '../types.js';

export interface DeeplOptions extends BaseTranslatorOptions {
  apiKey?: string;
  /** Override of the API base URL (default chosen from the key: Free or Pro). */
  baseUrl?: string;
  /** Formality for target languages that support it: default, more, less, prefer_more, prefer_less. */
  formality?: string;
}

/** Languages DeepL translates (ISO 639-1, upper case), as source and as target. */
const DEEPL_LANGS = new Set(['AR', 'BG', 'CS', 'DA', 'DE', 'EL', 'EN', 'ES', 'ET', 'FI', 'FR', 'HU', 'ID', 'IT', 'JA', 'KO', 'LT', 'LV', 'NB', 'NL', 'PL', 'PT', 'RO', 'RU', 'SK', 'SL', 'SV', 'TR', 'UK', 'ZH']);

export function deeplBaseUrl(apiKey: string | undefined, override?: string): string {
  if (override) return override.replace(/\/+$/, '');
  return apiKey?.endsWith(':fx') ? 'https://api-free.deepl.com' : 'https://api.deepl.com';
}

export function deeplSourceLang(locale: string): string | undefined {
  const lang = getLocale(locale)?.iso639_1.toUpperCase() || locale.split('-')[0]!.toUpperCase();
  return DEEPL_LANGS.has(lang) ? lang : undefined;
}

export function deeplTargetLang(locale: string): string | undefined {
  const src = deeplSourceLang(locale);
  if (!src) return undefined;
  if (src === 'EN') return locale === 'en-GB' ? 'EN-GB' : 'EN-US';
  if (src === 'PT') return locale === 'pt-BR' ? 'PT-BR' : 'PT-PT';
  if (src === 'ZH') return 'ZH-HANS';
  return src;
}

export class DeeplTranslator extends BaseTranslator {
  readonly engine = 'deepl';
  private readonly cfg: { apiKey: string | undefined; baseUrl: string; formality: string | undefined };

  constructor(opts: DeeplOptions = {}) {
    super(resolveBaseOptions(opts, { timeoutMs: 60_000, batch: { maxSegments: 50, maxChars: 30_000 } }));
    this.cfg = { apiKey: opts.apiKey, baseUrl: deeplBaseUrl(opts.apiKey, opts.baseUrl), formality: opts.formality };
  }

  async supports(sourceLocale: string, targetLocale: string): Promise<PairSupport> {
    if (!this.cfg.apiKey) return { supported: false, reason: 'deepl needs DUB_TRANSLATE_DEEPL_API_KEY' };
    if (!deeplSourceLang(sourceLocale)) return { supported: false, reason: `DeepL does not translate from ${sourceLocale}` };
    if (!deeplTargetLang(targetLocale)) return { supported: false, reason: `DeepL does not translate into ${targetLocale}` };
    return { supported: true };
  }

  protected async translateBatch(batch: TranslateBatch, call: BatchCall): Promise<TranslatedSegment[]> {
    const body = {
      text: batch.segments.map((s) => s.text),
      source_lang: deeplSourceLang(batch.sourceLocale),
      target_lang: deeplTargetLang(batch.targetLocale),
      split_sentences: 'nonewlines',
      preserve_formatting: true,
      ...(batch.context ? { context: batch.context } : {}),
      ...(this.cfg.formality ? { formality: this.cfg.formality } : {}),
    };
    const reply = await postJson(`${this.cfg.baseUrl}/v2/translate`, body, {
      engine: this.engine,
      signal: call.signal,
      headers: { authorization: `DeepL-Auth-Key ${this.cfg.apiKey ?? ''}` },
    });
    const list = (reply as { translations?: unknown })?.translations;
    if (!Array.isArray(list) || list.length !== batch.segments.length) {
      throw malformedReply(this.engine, `expected ${batch.segments.length} translations, got ${Array.isArray(list) ? list.length : 'none'}`);
    }
    return batch.segments.map((s, i) => ({ id: s.id, text: (list[i] as { text?: unknown })?.text as string }));
  }
}

export function createDeeplTranslator(opts: DeeplOptions = {}): DeeplTranslator {
  return new DeeplTranslator(opts);
}
