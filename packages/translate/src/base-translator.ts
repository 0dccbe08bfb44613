/**
 * The part every engine shares. The public `translate()` validates the request, drops empty
 * segments, splits the rest into batches and runs each batch through the engine's
 * `translateBatch()` with a per-request timeout (AbortSignal.timeout combined with the caller's
 * signal) and retries with exponential backoff on retryable errors (honouring Retry-After).
 * Each batch's reply is checked (every id exactly once, no extra id, strings) before it is used;
 * a bad reply is retried like a transient failure and in the end fails the whole request.
 */
import {
  AbortedError,
  DubError,
  UpstreamError,
  ValidationError,
  reportProgress,
  resolveContext,
  throwIfAborted,
  toDubError,
  type GlossaryEntry,
  type Logger,
  type StageContext,
} from '@dub/core';
import { makeBatches, type BatchLimits } from './batching.js';
import { maskTerms, termsIn, unmaskTerms, type MaskSlot } from './glossary.js';
import { malformedReply } from './http.js';
import { DEFAULT_RETRY, backoffDelay, sleep, type RetryOptions } from './retry.js';
import type { PairSupport, SourceSegment, TranslateRequest, TranslatedSegment, Translator } from './types.js';

export interface BaseTranslatorOptions {
  /** Time limit of one request (one batch, one attempt) in ms. */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** Batch bounds; engines set their own defaults. */
  maxBatchSegments?: number;
  maxBatchChars?: number;
}

export interface ResolvedBaseOptions {
  timeoutMs: number;
  retry: RetryOptions;
  batch: BatchLimits;
}

export function resolveBaseOptions(opts: BaseTranslatorOptions, defaults: { timeoutMs: number; batch: BatchLimits }): ResolvedBaseOptions {
  return {
    timeoutMs: opts.timeoutMs ?? defaults.timeoutMs,
    retry: { ...DEFAULT_RETRY, ...opts.retry },
    batch: { maxSegments: opts.maxBatchSegments ?? defaults.batch.maxSegments, maxChars: opts.maxBatchChars ?? defaults.batch.maxChars },
  };
}

/** One batch as an engine sees it: non-empty, trimmed segment texts. */
export interface TranslateBatch {
  sourceLocale: string;
  targetLocale: string;
  segments: SourceSegment[];
  context?: string;
  /** Up to a few segments right before this batch (already translated), for engines that use context. */
  preceding: SourceSegment[];
  /**
   * The glossary entries found in this batch's segments, for engines that apply a glossary
   * themselves (`glossaryHandling: 'engine'`); absent for the others (their terms come masked).
   */
  glossary?: GlossaryEntry[];
}

export interface BatchCall {
  /** Fires on the per-request timeout or on the caller's cancel. */
  signal: AbortSignal;
  logger: Logger;
  attempt: number;
}

const PRECEDING = 3;

export abstract class BaseTranslator implements Translator {
  abstract readonly id: string;
  abstract readonly label: string;
  /** @deprecated `id`. */
  get engine(): string {
    return this.id;
  }
  /** Nothing held by default (a service; M2M100's sessions are in a cache shared across translators). */
  async dispose(): Promise<void> {}
  /** Engines that honour SourceSegment.maxChars override this. */
  readonly lengthBudget: boolean = false;
  /**
   * How a request's glossary is applied: 'mask' (default) replaces each term by a placeholder the
   * engine passes through and puts the term's translation in its place afterwards (glossary.ts);
   * 'engine': the batch carries the entries found in it and the engine applies them (prompt, tags).
   */
  readonly glossaryHandling: 'mask' | 'engine' = 'mask';
  readonly options: ResolvedBaseOptions;

  constructor(options: ResolvedBaseOptions) {
    this.options = options;
  }

  abstract supports(sourceLocale: string, targetLocale: string): Promise<PairSupport>;

  /** Translate one batch; return one entry per segment (checked by the caller). */
  protected abstract translateBatch(batch: TranslateBatch, call: BatchCall): Promise<TranslatedSegment[]>;

  async translate(request: TranslateRequest, partialCtx: Partial<StageContext> = {}): Promise<TranslatedSegment[]> {
    const ctx = resolveContext(partialCtx);
    checkRequest(request);
    const out = new Map<string, string>();
    const work: SourceSegment[] = [];
    for (const s of request.segments) {
      const text = s.text.replace(/\s+/g, ' ').trim();
      if (text === '') out.set(s.id, '');
      else work.push({ ...s, text });
    }
    const batches = makeBatches(work, this.options.batch);
    let done = 0;
    for (const [i, segments] of batches.entries()) {
      throwIfAborted(ctx.signal);
      const batch: TranslateBatch = {
        sourceLocale: request.sourceLocale,
        targetLocale: request.targetLocale,
        segments,
        ...(request.context ? { context: request.context } : {}),
        preceding: i === 0 ? [] : batches[i - 1]!.slice(-PRECEDING),
      };
      let masks: Map<string, MaskSlot[]> | undefined;
      if (request.glossary?.length && this.glossaryHandling === 'engine') {
        const found = termsIn(segments.map((s) => s.text), request.glossary);
        if (found.length) batch.glossary = found;
      } else if (request.glossary?.length) {
        masks = new Map();
        batch.segments = segments.map((s) => {
          const m = maskTerms(s.text, request.glossary!);
          if (!m.slots.length) return s;
          masks!.set(s.id, m.slots);
          return { ...s, text: m.text };
        });
      }
      const result = await this.runWithRetries(batch, ctx);
      for (const r of result) {
        const slots = masks?.get(r.id);
        if (!slots) {
          out.set(r.id, r.text);
          continue;
        }
        const u = unmaskTerms(r.text, slots);
        if (u.lost.length) ctx.logger.warn({ engine: this.engine, segment: r.id, terms: u.lost.map((l) => l.entry.term) }, 'glossary placeholders lost in translation');
        out.set(r.id, u.text);
      }
      done += segments.length;
      reportProgress(ctx, 'translation', work.length ? done / work.length : 1);
    }
    return request.segments.map((s) => ({ id: s.id, text: out.get(s.id) ?? '' }));
  }

  private async runWithRetries(batch: TranslateBatch, ctx: StageContext): Promise<TranslatedSegment[]> {
    const { retry, timeoutMs } = this.options;
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(ctx.signal);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
      let err: DubError;
      try {
        const result = await this.translateBatch(batch, { signal, logger: ctx.logger, attempt });
        return checkBatchResult(this.engine, batch.segments, result);
      } catch (e) {
        if (ctx.signal?.aborted) throw new AbortedError('translation cancelled', { cause: e });
        if (timeout.aborted) {
          err = new UpstreamError(`${this.engine}: request timed out after ${timeoutMs} ms`, { cause: e, retryable: true, details: { engine: this.engine, reason: 'timeout' } });
        } else {
          err = toDubError(e);
        }
      }
      if (!err.retryable || attempt >= retry.attempts) {
        if (attempt > 1) ctx.logger.warn({ engine: this.engine, attempts: attempt, code: err.code }, 'translation failed after retries');
        throw err;
      }
      const asked = typeof err.details?.retryAfterMs === 'number' ? Math.min(err.details.retryAfterMs, retry.maxRetryAfterMs) : undefined;
      const delay = asked ?? backoffDelay(attempt, retry);
      ctx.logger.warn({ engine: this.engine, attempt, delayMs: delay, code: err.code, err: err.message }, 'translation request failed; retrying');
      await sleep(delay, ctx.signal);
    }
  }
}

function checkRequest(request: TranslateRequest): void {
  const seen = new Set<string>();
  for (const s of request.segments) {
    if (typeof s.id !== 'string' || s.id === '') throw new ValidationError('every segment needs a non-empty id', { field: 'segments' });
    if (seen.has(s.id)) throw new ValidationError(`segment id "${s.id}" appears twice`, { field: 'segments' });
    if (typeof s.text !== 'string') throw new ValidationError(`segment "${s.id}" has no text`, { field: 'segments' });
    seen.add(s.id);
  }
}

/** Every id of the batch exactly once, no other id, string texts; returned in batch order. */
export function checkBatchResult(engine: string, segments: readonly SourceSegment[], result: unknown): TranslatedSegment[] {
  if (!Array.isArray(result)) throw malformedReply(engine, 'translations are not a list');
  const want = new Set(segments.map((s) => s.id));
  const got = new Map<string, string>();
  for (const r of result as unknown[]) {
    const id = (r as { id?: unknown })?.id;
    const text = (r as { text?: unknown })?.text;
    if (typeof id !== 'string' || typeof text !== 'string') throw malformedReply(engine, 'a translation lacks a string id or text');
    if (!want.has(id)) throw malformedReply(engine, `unknown segment id "${id}"`);
    if (got.has(id)) throw malformedReply(engine, `segment id "${id}" translated twice`);
    got.set(id, text.trim());
  }
  const missing = segments.filter((s) => !got.has(s.id)).map((s) => s.id);
  if (missing.length) throw malformedReply(engine, `no translation for segment(s) ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
  return segments.map((s) => ({ id: s.id, text: got.get(s.id)! }));
}
