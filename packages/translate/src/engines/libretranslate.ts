/**
 * libretranslate: a LibreTranslate server (self-hosted or hosted). POST {baseUrl}/translate with
 * {q: [...], source, target, format: "text", api_key}; reply {translatedText: [...]} in input
 * order. Language codes are ISO 639-1 ("zh" for Chinese as older servers expect).
 */
import { getLocale } from '@dub/core';
import { BaseTranslator, resolveBaseOptions, type BaseTranslatorOptions, type BatchCall, type TranslateBatch } from '../base-translator.js';
import { getJson, malformedReply, postJson } from '../http.js';
import type { PairSupport, TranslatedSegment } from '../types.js';

export interface LibreTranslateOptions extends BaseTranslatorOptions {
  /** e.g. http://127.0.0.1:5000 */
  baseUrl?: string;
  apiKey?: string;
}

export function libreLang(locale: string): string {
  const l = getLocale(locale);
  return l?.iso639_1 || l?.iso639_3 || locale.split('-')[0]!.toLowerCase();
}

export class LibreTranslateTranslator extends BaseTranslator {
  readonly id = 'libretranslate';
  readonly label = 'LibreTranslate';
  private readonly cfg: { baseUrl: string | undefined; apiKey: string | undefined };
  private langs: Promise<{ code: string; targets?: string[] }[] | undefined> | undefined;

  constructor(opts: LibreTranslateOptions = {}) {
    super(resolveBaseOptions(opts, { timeoutMs: 60_000, batch: { maxSegments: 50, maxChars: 10_000 } }));
    this.cfg = { baseUrl: opts.baseUrl?.replace(/\/+$/, ''), apiKey: opts.apiKey };
  }

  async supports(sourceLocale: string, targetLocale: string): Promise<PairSupport> {
    if (!this.cfg.baseUrl) return { supported: false, reason: 'libretranslate needs DUB_TRANSLATE_LIBRETRANSLATE_URL' };
    const langs = await this.languages();
    if (!langs) return { supported: true };
    const src = libreLang(sourceLocale);
    const tgt = libreLang(targetLocale);
    const entry = langs.find((l) => l.code === src);
    if (entry && (!entry.targets || entry.targets.includes(tgt))) return { supported: true };
    return { supported: false, reason: `the LibreTranslate server at ${this.cfg.baseUrl} has no ${src} -> ${tgt} model` };
  }

  /**
   * The server's GET /languages list, asked once per translator; undefined when the server cannot
   * be asked now (the translation call then reports the failure, retryable).
   */
  private languages(): Promise<{ code: string; targets?: string[] }[] | undefined> {
    this.langs ??= getJson(`${this.cfg.baseUrl}/languages`, { engine: this.engine, signal: AbortSignal.timeout(this.options.timeoutMs) }).then(
      (v) => (Array.isArray(v) ? (v as { code: string; targets?: string[] }[]) : undefined),
      () => {
        this.langs = undefined;
        return undefined;
      },
    );
    return this.langs;
  }

  protected async translateBatch(batch: TranslateBatch, call: BatchCall): Promise<TranslatedSegment[]> {
    const body = {
      q: batch.segments.map((s) => s.text),
      source: libreLang(batch.sourceLocale),
      target: libreLang(batch.targetLocale),
      format: 'text',
      ...(this.cfg.apiKey ? { api_key: this.cfg.apiKey } : {}),
    };
    const reply = await postJson(`${this.cfg.baseUrl}/translate`, body, { engine: this.engine, signal: call.signal });
    const list = (reply as { translatedText?: unknown })?.translatedText;
    if (!Array.isArray(list) || list.length !== batch.segments.length) {
      throw malformedReply(this.engine, `expected ${batch.segments.length} translations, got ${Array.isArray(list) ? list.length : 'none'}`);
    }
    return batch.segments.map((s, i) => ({ id: s.id, text: list[i] as string }));
  }
}

export function createLibreTranslateTranslator(opts: LibreTranslateOptions = {}): LibreTranslateTranslator {
  return new LibreTranslateTranslator(opts);
}
