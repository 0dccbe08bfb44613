/**
 * deepl: the DeepL API v2. POST {baseUrl}/v2/translate with `Authorization: DeepL-Auth-Key <key>`,
 * body {text: [...], source_lang, target_lang, context?}; reply {translations: [{text}]} in input
 * order. Keys ending in ":fx" are Free keys and use https://api-free.deepl.com, others
 * https://api.deepl.com. Target codes carry the regional variant where DeepL needs one (EN-US,
 * PT-BR, PT-PT); source codes never do.
 *
 * Glossary: a batch with glossary terms goes with `tag_handling: "xml"` and `ignore_tags: ["keep"]`;
 * each term is replaced by its translation (or itself, kept) inside `<keep>...</keep>`, which
 * DeepL leaves untranslated and places in the sentence; the tags are removed from the reply. No
 * glossary object is created on DeepL's side (its glossaries serve only some language pairs and
 * would outlive the request).
 */
import { getLocale, glossaryTarget, type GlossaryEntry } from '@dub/core';
import { glossaryMatcher } from '../glossary.js';
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

const XML_ESCAPE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const xmlEscape = (t: string) => t.replace(/[&<>]/g, (c) => XML_ESCAPE[c]!);
const XML_ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A segment as DeepL's XML: glossary terms as `<keep>target</keep>`, the rest escaped. */
export function deeplGlossaryXml(text: string, glossary: readonly GlossaryEntry[]): string {
  const matches = glossaryMatcher(glossary as GlossaryEntry[]).find(text);
  let out = '';
  let at = 0;
  for (const m of matches) {
    const e = glossary[m.index]!;
    out += xmlEscape(text.slice(at, m.start)) + `<keep>${xmlEscape(e.keep ? text.slice(m.start, m.end) : glossaryTarget(e))}</keep>`;
    at = m.end;
  }
  return out + xmlEscape(text.slice(at));
}

/** DeepL's XML reply as plain text: the keep tags removed, entities decoded. */
export function deeplPlainText(xml: string): string {
  return xml
    .replace(/<\/?keep\s*>/g, '')
    .replace(/&(amp|lt|gt|quot|apos);/g, (_w, n: string) => XML_ENTITY[n]!)
    .replace(/\s+/g, ' ')
    .trim();
}

export class DeeplTranslator extends BaseTranslator {
  readonly id = 'deepl';
  readonly label = 'DeepL';
  /** Glossary terms go as `<keep>` tags DeepL does not translate. */
  override readonly glossaryHandling = 'engine' as const;
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
    const xml = batch.glossary?.length ? batch.glossary : undefined;
    const body = {
      text: batch.segments.map((s) => (xml ? deeplGlossaryXml(s.text, xml) : s.text)),
      ...(xml ? { tag_handling: 'xml', ignore_tags: ['keep'] } : {}),
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
    return batch.segments.map((s, i) => {
      const text = (list[i] as { text?: unknown })?.text;
      return { id: s.id, text: (xml && typeof text === 'string' ? deeplPlainText(text) : text) as string };
    });
  }
}

export function createDeeplTranslator(opts: DeeplOptions = {}): DeeplTranslator {
  return new DeeplTranslator(opts);
}
