/**
 * m2m100: offline neural translation with Meta's M2M100 (418M parameters, MIT licence) on ONNX
 * Runtime, from Xenova's q8 export (models/manifest.json `m2m100-418m`, fetched with
 * `npx dub models fetch m2m100-418m`). One model serves every direction between its 100
 * languages: 38 of the contract's 39 locales (languages.ts). CPU by default, CUDA where the
 * device says so and the CUDA execution provider loads.
 *
 * A batch is one encoder call over its segments (right-padded); each segment is then decoded by
 * beam search with its beams as the rows of one decoder call per token (beam-search.ts), the
 * target language forced as the first token, as transformers' generate() does with
 * forced_bos_token_id. `nBest()` returns the k best translations with their scores.
 */
import fsp from 'node:fs/promises';
import { EngineUnavailableError, ModelError, ValidationError, resolveContext, retryingOnce, type DeviceChoice, type Logger, type StageContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { BaseTranslator, resolveBaseOptions, type BaseTranslatorOptions, type BatchCall, type TranslateBatch } from '../../base-translator.js';
import { maskTerms, unmaskTerms } from '../../glossary.js';
import type { PairSupport, TranslateRequest, TranslatedSegment } from '../../types.js';
import { beamSearch, type Hypothesis } from './beam-search.js';
import { M2M100_FILES, M2M100_MODEL_ID, m2m100Files, m2m100Installed, m2m100PairSupport } from './files.js';
import { M2M100_GAPS, m2m100Code } from './languages.js';
import { M2M100Sessions } from './model.js';
import type { NBestTranslation } from './nbest.js';
import { EOS_ID, M2M100Tokenizer } from './tokenizer.js';


export { M2M100_FILES, M2M100_MODEL_ID, m2m100Files, m2m100Installed };

export interface M2M100Options extends BaseTranslatorOptions {
  /** Manifest id of the model (default m2m100-418m); tests name a stand-in. */
  model?: string;
  /** DUB_MODELS_DIR. */
  modelsDir?: string;
  /** Extra directories searched after it (tests point here at fixtures). */
  searchDirs?: string[];
  /** Sessions to load into (default: one cache shared by every M2M100 translator of the process). */
  sessions?: SessionCache;
  device?: DeviceChoice;
  /** Intra-op threads (0: onnxruntime's default). */
  threads?: number;
  /** Beams (default the export's generation_config num_beams, 5; 1 = greedy). */
  beams?: number;
  /** Tokens generated at most per segment (default 200, the export's max_length, and at most 3 x the source's tokens + 10). */
  maxNewTokens?: number;
  logger?: Logger;
}

export type { NBestTranslation };


interface Loaded {
  tokenizer: M2M100Tokenizer;
  sessions: M2M100Sessions;
  beams: number;
  files: Record<keyof typeof M2M100_FILES, string>;
}

const SHARED_SESSIONS = new SessionCache();
/** Sources per encoder call. */
const ENCODER_BATCH = 16;
const tokenizers = new Map<string, Promise<M2M100Tokenizer>>();


export class M2M100Translator extends BaseTranslator {
  readonly id = 'm2m100';
  readonly label = 'M2M100 418M (q8, ONNX Runtime)';

  constructor(private readonly opts: M2M100Options = {}) {
    super(resolveBaseOptions(opts, { timeoutMs: 600_000, batch: { maxSegments: 16, maxChars: 4000 } }));
  }

  get modelId(): string {
    return this.opts.model ?? M2M100_MODEL_ID;
  }

  async supports(sourceLocale: string, targetLocale: string): Promise<PairSupport> {
    return m2m100PairSupport(this.opts, sourceLocale, targetLocale);
  }

  /** Load tokenizer and sessions once (a failed load is retried on the next call). */
  readonly load: () => Promise<Loaded> = retryingOnce(() => this.doLoad());

  private async doLoad(): Promise<Loaded> {
    const files = m2m100Files(this.opts);
    let tok = tokenizers.get(files.spm + '|' + files.vocab);
    if (!tok) {
      tok = M2M100Tokenizer.load(files.spm, files.vocab);
      tokenizers.set(files.spm + '|' + files.vocab, tok);
      tok.catch(() => tokenizers.delete(files.spm + '|' + files.vocab));
    }
    const cache = this.opts.sessions ?? SHARED_SESSIONS;
    const so = { device: this.opts.device ?? 'cpu', threads: this.opts.threads ?? 0, ...(this.opts.logger ? { logger: this.opts.logger } : {}) };
    const [tokenizer, enc, dec, gen] = await Promise.all([tok, cache.get(files.encoder, so), cache.get(files.decoder, so), fsp.readFile(files.generation, 'utf8').then((t) => JSON.parse(t) as { num_beams?: number }).catch(() => ({}) as { num_beams?: number })]);
    const sessions = new M2M100Sessions(enc, dec);
    const beams = this.opts.beams ?? (Number.isInteger(gen.num_beams) && gen.num_beams! > 0 ? gen.num_beams! : 5);
    return { tokenizer, sessions, beams, files };
  }

  private codes(sourceLocale: string, targetLocale: string): [string, string] {
    const s = m2m100Code(sourceLocale);
    const t = m2m100Code(targetLocale);
    if (!s || !t || s === t) throw new EngineUnavailableError(`m2m100 cannot translate ${sourceLocale} -> ${targetLocale}`);
    return [s, t];
  }

  /** Translate each text and return its `k` best translations (k <= beams; beams raised to k). */
  async nBestMany(texts: readonly string[], sourceLocale: string, targetLocale: string, k: number, signal?: AbortSignal): Promise<NBestTranslation[][]> {
    const [s, t] = this.codes(sourceLocale, targetLocale);
    const m = await this.load();
    const sources = texts.map((x) => m.tokenizer.encode(x, s));
    for (const [i, ids] of sources.entries()) {
      if (ids.length > 1024) throw new ValidationError(`segment ${i + 1} is ${ids.length} tokens long; M2M100 reads at most 1024 (split it)`, { field: 'segments' });
    }
    const out: NBestTranslation[][] = [];
    const beams = Math.max(m.beams, k);
    // one encoder call per ENCODER_BATCH sources; each source then decoded with its beams as rows
    for (let b0 = 0; b0 < sources.length; b0 += ENCODER_BATCH) {
      const chunk = sources.slice(b0, b0 + ENCODER_BATCH);
      const enc = await m.sessions.encode(chunk);
      for (const [b, src] of chunk.entries()) {
        const { decoder, logits } = await m.sessions.start(enc, b, [EOS_ID, m.tokenizer.langId(t)]);
        const maxNewTokens = Math.min(this.opts.maxNewTokens ?? 198, 3 * src.length + 10);
        const hyps = await beamSearch(decoder, logits, { beams, maxNewTokens, eosId: EOS_ID, nBest: k, ...(signal ? { signal } : {}) });
        out.push(hyps.map((h: Hypothesis) => ({ text: m.tokenizer.decode(h.tokens), score: h.score, logprob: h.logprob, tokens: h.tokens, finished: h.finished })));
      }
    }
    return out;
  }

  /**
   * Translator.nbest: up to `n` distinct translations of each segment, best first (the first is
   * what translate() gives), with the request's glossary masked and put back as translate() does;
   * an alternative whose placeholder the model lost or broke is left out.
   */
  async nbest(request: TranslateRequest, n: number, partialCtx: Partial<StageContext> = {}): Promise<{ id: string; texts: string[] }[]> {
    const ctx = resolveContext(partialCtx);
    const k = Math.max(1, Math.floor(n));
    const items = request.segments.map((s) => {
      const text = s.text.replace(/\s+/g, ' ').trim();
      return { id: s.id, ...(request.glossary?.length && text ? maskTerms(text, request.glossary) : { text, slots: [] }) };
    });
    const todo = items.filter((x) => x.text !== '');
    const results = await this.nBestMany(todo.map((x) => x.text), request.sourceLocale, request.targetLocale, k, ctx.signal);
    const byId = new Map(todo.map((x, i) => [x.id, results[i]!]));
    return items.map((x) => {
      const hyps = byId.get(x.id);
      if (!hyps) return { id: x.id, texts: [''] };
      const texts: string[] = [];
      for (const [i, h] of hyps.entries()) {
        const u = unmaskTerms(h.text, x.slots);
        const t = u.text.trim();
        // an alternative that lost or broke a glossary placeholder is dropped (the best is kept, as translate() keeps it)
        if (i > 0 && x.slots.length && (u.lost.length || /zxq/i.test(t))) continue;
        if (!texts.includes(t)) texts.push(t);
      }
      return { id: x.id, texts };
    });
  }

  /** The k best translations of one text, best first. */
  async nBest(text: string, sourceLocale: string, targetLocale: string, k: number, signal?: AbortSignal): Promise<NBestTranslation[]> {
    const [r] = await this.nBestMany([text], sourceLocale, targetLocale, k, signal);
    return r ?? [];
  }

  protected async translateBatch(batch: TranslateBatch, call: BatchCall): Promise<TranslatedSegment[]> {
    const best = await this.nBestMany(batch.segments.map((s) => s.text), batch.sourceLocale, batch.targetLocale, 1, call.signal);
    return batch.segments.map((s, i) => {
      const h = best[i]?.[0];
      if (!h) throw new ModelError(`m2m100 produced no translation for segment ${s.id}`);
      return { id: s.id, text: h.text };
    });
  }
}


export function createM2M100Translator(opts: M2M100Options = {}): M2M100Translator {
  return new M2M100Translator(opts);
}

export { translateNBest } from './nbest.js';
