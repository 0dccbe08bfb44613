/**
 * Decoding of one 30 s window, with openai/whisper's safeguards (decoding.py, transcribe.py), and
 * the language detector. Tokens after the prompt [<|startoftranscript|>, <|lang|>, <|transcribe|>]
 * (plus <|notimestamps|> without timestamps) are sampled one at a time with the KV cache; each keeps
 * its probability for word confidences.
 *
 * Logit filters, in openai's order: at the first sampled position the blank (" ") and
 * <|endoftext|> are suppressed (SuppressBlank); the suppressed tokens (SuppressTokens: by default
 * the non-speech tokens, plus <|transcribe|>, <|translate|>, <|startoftranscript|>,
 * <|startofprev|>, <|startoflm|> and the no-speech token) never; then the timestamp rules.
 * Per window the decoder reports the probability of the no-speech token at
 * <|startoftranscript|>, the average log probability of the sampled tokens (their sum, the end
 * token's included, over their count + 1) and the gzip compression ratio of the text.
 *
 * decodeWithFallback decodes greedily first and again at rising temperatures (0.2 .. 1.0, best of
 * 5 samples by log probability per token) while the text is too repetitive (compression ratio
 * > 2.4, or a repetition loop in its words: repetition.ts, which catches the loops of short
 * windows that zlib's fixed cost keeps under 2.4) or too unlikely (average log probability < -1),
 * unless the window looks silent (no-speech probability > 0.6 with a low average log probability).
 * When every temperature fails, openai keeps the last decoding (at 1.0, often text of another
 * language or script); this keeps the lowest temperature's that is not repetitive (bestOfFailed).
 * A window whose no-speech probability is above 0.6 is skipped as silence unless its average log
 * probability is above -1.
 *
 * With the loop check on, a decoding stops as soon as its complete words hold a loop (stopOnLoop):
 * a loop fails the decoding whatever follows, so running on to the token limit (224 tokens, about
 * 3.5 s of decoder steps with base on a CPU core) only costs time. Among the samples of one
 * temperature, one that is not repetitive ranks above one that is (a repetitive best sample fails
 * the temperature even when another sample would pass); among either kind, by log probability per
 * token. Measured on the separated speech of 8 s of a real talking head (Whisper base q8, one
 * window): before, the greedy text and the best samples at 0.2 looped to 211-224 tokens, every
 * temperature failed and 26 decodings took 56 s; now 6 decodings take 7 s, and a sample at 0.2
 * that does not loop passes. Sampling uses a seeded generator, so a window decodes the same way
 * every time.
 */
import { deflate } from 'pako';
import { throwIfAborted } from '@dub/core';
import type { WhisperSessions } from './model.js';
import { ALIGNMENT_FRAME_SECONDS, alignmentStartFrames } from './alignment.js';
import { loopWords, repetitionLoops, type RepetitionOptions } from './repetition.js';
import { applyTimestampRules, argmax } from './timestamp-rules.js';
import type { WhisperTokenizer } from './tokenizer.js';

type Tensor = Awaited<ReturnType<WhisperSessions['encode']>>;

/** What the decoding loop needs of the sessions (WhisperSessions; tests script it). */
export interface WindowDecoder {
  startDecoding(
    encoded: Tensor,
    alignmentHeads?: readonly (readonly [number, number])[],
  ): { step(ids: readonly number[]): Promise<Float32Array>; positionLogits(p: number): Float32Array; readonly pastLength: number; crossAttention?(): Float32Array[][] };
}

export interface DecodedToken {
  id: number;
  probability: number;
  /** Seconds into the window where the token starts and ends, from the cross-attention (alignmentHeads; text tokens only). */
  start?: number;
  end?: number;
}

export interface DecodeResult {
  tokens: DecodedToken[];
  /** Decoder cache length after each step (for diagnostics and tests). */
  cacheLengths: number[];
  /** The text of the tokens (timestamps and special tokens left out), trimmed. */
  text: string;
  /** Sum of the log probabilities of the sampled tokens, the end token's included. */
  sumLogprob: number;
  /** sumLogprob / (tokens + 1), openai's avg_logprob. */
  avgLogprob: number;
  /** Probability of the no-speech token at <|startoftranscript|> (undefined when the vocabulary has none). */
  noSpeechProbability: number | undefined;
  /** Bytes of the text over bytes of its zlib compression. */
  compressionRatio: number;
  /** Whether the text's words hold a repetition loop (repetition.ts, default options). */
  repetitionLoop: boolean;
  /** The decoding stopped at a loop in its complete words, before its end token or the token limit (stopOnLoop). */
  stoppedOnLoop: boolean;
  temperature: number;
}

export interface DecodeOptions {
  language: string;
  timestamps: boolean;
  maxNewTokens: number;
  signal?: AbortSignal;
  /** 0 (default): the most likely token; above: sampled from softmax(logits / temperature). */
  temperature?: number;
  /** Uniform [0, 1) numbers for sampling (default: a generator seeded with 0). */
  random?: () => number;
  /** Token ids never sampled (default none; the engine passes suppressTokenIds()). */
  suppress?: readonly number[];
  /** Suppress the blank and the end token at the first sampled position (default true). */
  suppressBlank?: boolean;
  /** What makes a repetition loop (repetitionLoop of the result). */
  repetition?: RepetitionOptions;
  /**
   * Stop decoding once the complete words decoded so far (the last, maybe unfinished, word left
   * out) hold a repetition loop: the loop stays in any continuation, so the result loops either
   * way (default false; decodeWithFallback sets it with its loop check).
   */
  stopOnLoop?: boolean;
  /** Time the text tokens by these heads' cross-attention (alignment.ts; [layer, head]); with audioSeconds. */
  alignmentHeads?: readonly (readonly [number, number])[];
  /** Seconds of audio in the window (the frames the alignment reads). */
  audioSeconds?: number;
}

export function promptTokens(tok: WhisperTokenizer, language: string, timestamps: boolean): number[] {
  const tail = timestamps ? [] : [tok.noTimestamps];
  // English-only models (*.en) have no language or task tokens.
  if (tok.languages.size === 0) return [tok.sot, ...tail];
  const lang = tok.languageToken(language);
  if (lang === undefined) throw new RangeError(`the Whisper tokenizer has no language token for "${language}"`);
  return [tok.sot, lang, tok.transcribe, ...tail];
}

/**
 * The tokens decoding never samples, as openai's DecodingTask._get_suppress_tokens makes them:
 * `suppress` ('non-speech', openai's "-1", by default; or explicit ids) plus <|transcribe|>,
 * <|translate|>, <|startoftranscript|>, <|startofprev|>, <|startoflm|> and the no-speech token.
 */
export function suppressTokenIds(tok: WhisperTokenizer, suppress: 'non-speech' | readonly number[] = 'non-speech'): number[] {
  const ids = new Set<number>(suppress === 'non-speech' ? tok.nonSpeechTokens() : suppress.filter((t) => t >= 0));
  for (const t of [tok.transcribe, tok.translate, tok.sot, tok.sotPrev, tok.sotLm, tok.noSpeech]) if (t !== undefined) ids.add(t);
  return [...ids].sort((a, b) => a - b);
}

/**
 * openai/whisper's compression_ratio: UTF-8 bytes of the text over bytes of Python's
 * zlib.compress of them (level 6). Compressed by pako 2.1.0, whose output is zlib's byte for byte,
 * not by node:zlib: Node's zlib is Chromium's fork, whose matcher finds other matches (on 300
 * short Portuguese texts, 108 came out 1 to 3 bytes apart from Python's), which moves a short
 * window's ratio across 2.4.
 */
export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length / deflate(bytes).length;
}

/** log softmax of `logits` at `index` (-Infinity for a suppressed index). */
export function logSoftmaxAt(logits: Float32Array, index: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  return logits[index]! - max - Math.log(sum);
}

/** A token drawn from softmax(logits / temperature). */
export function sampleToken(logits: Float32Array, temperature: number, random: () => number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  const w = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) {
    w[i] = Math.exp((logits[i]! - max) / temperature);
    sum += w[i]!;
  }
  let r = random() * sum;
  let last = 0;
  for (let i = 0; i < w.length; i++) {
    if (w[i]! === 0) continue;
    last = i;
    r -= w[i]!;
    if (r < 0) return i;
  }
  return last;
}

/** mulberry32: a small seeded generator of uniform [0, 1) numbers. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Decode one window once (greedy at temperature 0, sampled above). */
export async function decodeWindow(sessions: WindowDecoder, tok: WhisperTokenizer, encoded: Tensor, o: DecodeOptions): Promise<DecodeResult> {
  const temperature = o.temperature ?? 0;
  const random = o.random ?? seededRandom(0);
  const aligned = !!o.alignmentHeads?.length && o.audioSeconds !== undefined;
  const state = aligned ? sessions.startDecoding(encoded, o.alignmentHeads) : sessions.startDecoding(encoded);
  const prompt = promptTokens(tok, o.language, o.timestamps);
  let logits = await state.step(prompt);
  const noSpeechProbability = tok.noSpeech !== undefined ? Math.exp(logSoftmaxAt(state.positionLogits(prompt.indexOf(tok.sot)), tok.noSpeech)) : undefined;
  const tokens: DecodedToken[] = [];
  const cacheLengths = [state.pastLength];
  const seq: number[] = [];
  const blank = o.suppressBlank === false ? [] : [...tok.encode(' '), tok.eot];
  let sumLogprob = 0;
  let stoppedOnLoop = false;
  for (let i = 0; i < o.maxNewTokens; i++) {
    throwIfAborted(o.signal);
    if (i === 0) for (const id of blank) logits[id] = -Infinity;
    for (const id of o.suppress ?? []) if (id < logits.length) logits[id] = -Infinity;
    if (o.timestamps) applyTimestampRules(logits, seq, tok);
    else for (let k = tok.eot + 1; k < logits.length; k++) logits[k] = -Infinity;
    const id = temperature > 0 ? sampleToken(logits, temperature, random) : argmax(logits);
    if (logits[id] === -Infinity) break;
    const logprob = logSoftmaxAt(logits, id);
    sumLogprob += logprob;
    if (id === tok.eot) break;
    tokens.push({ id, probability: Math.exp(logprob) });
    seq.push(id);
    if (o.stopOnLoop && loopsSoFar(tok, tokens, o.repetition)) {
      stoppedOnLoop = true;
      break;
    }
    logits = await state.step([id]);
    cacheLengths.push(state.pastLength);
  }
  if (aligned && state.crossAttention) timeTokens(tokens, tok, state.crossAttention(), Math.max(1, Math.round(o.audioSeconds! / ALIGNMENT_FRAME_SECONDS)));
  const text = tok.decode(tokens.map((t) => t.id)).trim();
  return {
    tokens,
    cacheLengths,
    text,
    sumLogprob,
    avgLogprob: sumLogprob / (tokens.length + 1),
    noSpeechProbability,
    compressionRatio: compressionRatio(text),
    repetitionLoop: stoppedOnLoop || repetitionLoops(loopWords(text), o.repetition).length > 0,
    stoppedOnLoop,
    temperature,
  };
}

/** Whether the complete words of the text decoded so far hold a repetition loop (the last word, maybe unfinished, left out). */
function loopsSoFar(tok: WhisperTokenizer, tokens: readonly DecodedToken[], o: RepetitionOptions | undefined): boolean {
  // a loop needs at least 6 words (minWords' default) of at least one token each
  if (tokens.length < 6) return false;
  const words = loopWords(tok.decode(tokens.map((t) => t.id)));
  words.pop();
  return words.length >= 2 && repetitionLoops(words, o).length > 0;
}

/**
 * Sets `start` and `end` of the text tokens (not the timestamps) from the cross-attention rows
 * (`rows[h][k]`: head h predicting the k-th token; one row more, for the end): the rows of the
 * text tokens and the last one go through alignmentStartFrames over the audio's `frames`.
 */
function timeTokens(tokens: DecodedToken[], tok: WhisperTokenizer, rows: Float32Array[][], frames: number): void {
  const text = tokens.flatMap((t, k) => (tok.isTimestamp(t.id) ? [] : [k]));
  if (!text.length || rows.some((r) => r.length < tokens.length + 1)) return;
  const picked = [...text, tokens.length];
  const starts = alignmentStartFrames(rows.map((r) => picked.map((k) => r[k]!)), Math.min(frames, rows[0]![0]!.length));
  if (starts.length !== picked.length) return;
  for (const [i, k] of text.entries()) {
    tokens[k]!.start = starts[i]! * ALIGNMENT_FRAME_SECONDS;
    tokens[k]!.end = starts[i + 1]! * ALIGNMENT_FRAME_SECONDS;
  }
}

/** Greedy decoding of one window (decodeWindow at temperature 0). */
export function greedyDecode(sessions: WindowDecoder, tok: WhisperTokenizer, encoded: Tensor, o: DecodeOptions): Promise<DecodeResult> {
  return decodeWindow(sessions, tok, encoded, { ...o, temperature: 0 });
}

export interface FallbackOptions {
  /** Temperatures tried in turn (default 0, 0.2, 0.4, 0.6, 0.8, 1). */
  temperatures?: readonly number[];
  /** Samples per temperature above 0, the best by log probability per token kept (default 5). */
  bestOf?: number;
  /** Text more compressible than this is a failed decoding (default 2.4; null: no check). */
  compressionRatioThreshold?: number | null;
  /** A text with a repetition loop in its words is a failed decoding (default true; beyond openai, whose compression ratio misses the loops of short texts). */
  repetitionCheck?: boolean;
  /** An average log probability below this is a failed decoding (default -1; null: no check). */
  logprobThreshold?: number | null;
  /** A no-speech probability above this makes a window silence (default 0.6; null: no check). */
  noSpeechThreshold?: number | null;
  /** Seed of the sampling (default 0); the engine passes the window index. */
  seed?: number;
}

export interface ResolvedFallbackOptions {
  temperatures: readonly number[];
  bestOf: number;
  compressionRatioThreshold: number | null;
  repetitionCheck: boolean;
  logprobThreshold: number | null;
  noSpeechThreshold: number | null;
}

export function resolveFallbackOptions(o: FallbackOptions = {}): ResolvedFallbackOptions {
  const temperatures = o.temperatures ?? [0, 0.2, 0.4, 0.6, 0.8, 1];
  if (temperatures.length === 0 || temperatures.some((t) => !(t >= 0 && Number.isFinite(t)))) throw new RangeError('whisper temperatures must be a non-empty list of numbers >= 0');
  const bestOf = o.bestOf ?? 5;
  if (!(Number.isInteger(bestOf) && bestOf >= 1)) throw new RangeError('whisper bestOf must be an integer >= 1');
  return {
    temperatures,
    bestOf,
    compressionRatioThreshold: o.compressionRatioThreshold === undefined ? 2.4 : o.compressionRatioThreshold,
    repetitionCheck: o.repetitionCheck ?? true,
    logprobThreshold: o.logprobThreshold === undefined ? -1 : o.logprobThreshold,
    noSpeechThreshold: o.noSpeechThreshold === undefined ? 0.6 : o.noSpeechThreshold,
  };
}

export interface FallbackResult extends DecodeResult {
  /** The temperatures tried, in order. */
  tried: number[];
  /** Whether every temperature failed the checks (the result is then bestOfFailed's choice). */
  allFailed: boolean;
  /** openai's no-speech rule: the no-speech probability is above the threshold and the average log probability is not above its threshold. */
  silent: boolean;
}

/** Whether a decoding is too repetitive: compression ratio above the threshold, or a repetition loop. */
function repetitive(r: DecodeResult, f: Pick<ResolvedFallbackOptions, 'compressionRatioThreshold' | 'repetitionCheck'>): boolean {
  return (f.compressionRatioThreshold !== null && r.compressionRatio > f.compressionRatioThreshold) || (f.repetitionCheck && r.repetitionLoop);
}

function failed(r: DecodeResult, f: ResolvedFallbackOptions): boolean {
  let fail = false;
  if (repetitive(r, f)) fail = true; // too repetitive
  if (f.logprobThreshold !== null && r.avgLogprob < f.logprobThreshold) fail = true; // too unlikely
  if (f.noSpeechThreshold !== null && f.logprobThreshold !== null && (r.noSpeechProbability ?? 0) > f.noSpeechThreshold && r.avgLogprob < f.logprobThreshold) fail = false; // silence
  return fail;
}

/**
 * The decoding kept when every temperature failed (`results` in the order tried): the first one
 * (the lowest temperature) that is not too repetitive; when all are, the one with the highest
 * average log probability (the earliest on a tie). openai keeps the last (at the highest
 * temperature: on speech Whisper hears badly, text in other languages and scripts), faster-whisper
 * the most likely of the non-repetitive ones; but the average log probability favours text that
 * repeats itself without looping in a row (a phrase's second copy is predictable to the decoder:
 * measured on espeak-ng's Portuguese, -1.15 at 0.4 with one phrase three times against -1.35 for
 * the greedy text), so when no temperature reads the audio well, the plain (greedy) reading stands.
 */
export function bestOfFailed<R extends DecodeResult>(results: readonly R[], f: Pick<ResolvedFallbackOptions, 'compressionRatioThreshold' | 'repetitionCheck'>): R {
  const plain = results.find((r) => !repetitive(r, f));
  if (plain) return plain;
  let best = results[0]!;
  for (const r of results) if (r.avgLogprob > best.avgLogprob) best = r;
  return best;
}

/** openai's decode_with_fallback (bestOfFailed's choice when every temperature fails), then its no-speech check. */
export async function decodeWithFallback(sessions: WindowDecoder, tok: WhisperTokenizer, encoded: Tensor, o: DecodeOptions & FallbackOptions): Promise<FallbackResult> {
  const f = resolveFallbackOptions(o);
  const tried: number[] = [];
  const results: DecodeResult[] = [];
  let result: DecodeResult | undefined;
  let allFailed = true;
  for (const t of f.temperatures) {
    tried.push(t);
    if (t === 0) {
      result = await decodeWindow(sessions, tok, encoded, { ...o, temperature: 0, stopOnLoop: f.repetitionCheck });
    } else {
      const random = seededRandom(((o.seed ?? 0) * 7919 + Math.round(t * 1000)) >>> 0);
      let best: DecodeResult | undefined;
      let bestScore = -Infinity;
      for (let k = 0; k < f.bestOf; k++) {
        const r = await decodeWindow(sessions, tok, encoded, { ...o, temperature: t, random, stopOnLoop: f.repetitionCheck });
        // MaximumLikelihoodRanker without length penalty, a repetitive sample below any other
        const score = r.sumLogprob / Math.max(1, r.tokens.length) - (repetitive(r, f) ? 1e9 : 0);
        if (!best || score > bestScore) {
          best = r;
          bestScore = score;
        }
      }
      result = best!;
    }
    results.push(result);
    if (!failed(result, f)) {
      allFailed = false;
      break;
    }
  }
  const r = allFailed ? bestOfFailed(results, f) : result!;
  let silent = f.noSpeechThreshold !== null && (r.noSpeechProbability ?? 0) > f.noSpeechThreshold;
  if (silent && f.logprobThreshold !== null && r.avgLogprob > f.logprobThreshold) silent = false;
  return { ...r, tried, allFailed, silent };
}

export interface LanguageGuess {
  language: string;
  probability: number;
  /** Every language token's probability (softmax over language tokens only). */
  probabilities: Map<string, number>;
}

/** The spoken language: the most likely language token after <|startoftranscript|>. */
export async function detectLanguageFromEncoding(sessions: WindowDecoder, tok: WhisperTokenizer, encoded: Tensor): Promise<LanguageGuess> {
  const logits = await sessions.startDecoding(encoded).step([tok.sot]);
  const entries = [...tok.languages];
  let max = -Infinity;
  for (const [, id] of entries) max = Math.max(max, logits[id]!);
  let sum = 0;
  for (const [, id] of entries) sum += Math.exp(logits[id]! - max);
  const probabilities = new Map(entries.map(([lang, id]) => [lang, Math.exp(logits[id]! - max) / sum]));
  let best = entries[0]![0];
  for (const [lang] of entries) if (probabilities.get(lang)! > probabilities.get(best)!) best = lang;
  return { language: best, probability: probabilities.get(best)!, probabilities };
}
