/**
 * openai-compatible: any server speaking the OpenAI chat completions API (hosted LLMs, llama.cpp
 * server, vLLM, Ollama's /v1). POST {baseUrl}/chat/completions with the model name and a bearer
 * key, `response_format: {type: "json_object"}`, temperature low; the reply is validated strictly
 * (every id exactly once) and a malformed one is retried, then fails the request.
 */
import { BaseTranslator, resolveBaseOptions, type BaseTranslatorOptions, type BatchCall, type TranslateBatch } from '../base-translator.js';
import { malformedReply, postJson } from '../http.js';
import type { PairSupport, TranslatedSegment } from '../types.js';
import { buildMessages, parseTranslations } from './openai-prompt.js';

export interface OpenAiCompatibleOptions extends BaseTranslatorOptions {
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1 (no trailing /chat/completions). */
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  temperature?: number;
  /** Send response_format json_object (default true; turn off for servers that reject it). */
  jsonMode?: boolean;
}

export class OpenAiCompatibleTranslator extends BaseTranslator {
  readonly id = 'openai-compatible';
  readonly label = 'OpenAI-compatible service';
  /** The prompt gives every segment a character budget (max_chars), SourceSegment.maxChars when set. */
  override readonly lengthBudget = true;
  /** The batch's glossary terms go in the prompt (openai-prompt.ts). */
  override readonly glossaryHandling = 'engine' as const;
  private readonly cfg: { baseUrl: string | undefined; apiKey: string | undefined; model: string | undefined; temperature: number; jsonMode: boolean };

  constructor(opts: OpenAiCompatibleOptions = {}) {
    super(resolveBaseOptions(opts, { timeoutMs: 120_000, batch: { maxSegments: 40, maxChars: 6_000 } }));
    this.cfg = {
      baseUrl: opts.baseUrl?.replace(/\/+$/, ''),
      apiKey: opts.apiKey,
      model: opts.model,
      temperature: opts.temperature ?? 0.2,
      jsonMode: opts.jsonMode ?? true,
    };
  }

  async supports(): Promise<PairSupport> {
    if (!this.cfg.baseUrl) return { supported: false, reason: 'openai-compatible needs DUB_TRANSLATE_OPENAI_BASE_URL (and DUB_TRANSLATE_OPENAI_MODEL, DUB_TRANSLATE_OPENAI_API_KEY)' };
    if (!this.cfg.model) return { supported: false, reason: 'openai-compatible needs DUB_TRANSLATE_OPENAI_MODEL' };
    return { supported: true };
  }

  protected async translateBatch(batch: TranslateBatch, call: BatchCall): Promise<TranslatedSegment[]> {
    const body = {
      model: this.cfg.model,
      messages: buildMessages(batch),
      temperature: this.cfg.temperature,
      ...(this.cfg.jsonMode ? { response_format: { type: 'json_object' } } : {}),
    };
    const reply = await postJson(`${this.cfg.baseUrl}/chat/completions`, body, {
      engine: this.engine,
      signal: call.signal,
      headers: this.cfg.apiKey ? { authorization: `Bearer ${this.cfg.apiKey}` } : {},
    });
    const choice = (reply as { choices?: { message?: { content?: unknown }; finish_reason?: string }[] })?.choices?.[0];
    if (!choice) throw malformedReply(this.engine, 'no choices in the reply');
    if (choice.finish_reason === 'length') throw malformedReply(this.engine, 'the reply was cut off (finish_reason "length")');
    return parseTranslations(this.engine, choice.message?.content) as TranslatedSegment[];
  }
}

export function createOpenAiCompatibleTranslator(opts: OpenAiCompatibleOptions = {}): OpenAiCompatibleTranslator {
  return new OpenAiCompatibleTranslator(opts);
}
