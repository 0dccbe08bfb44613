/**
 * Greedy decoding of one 30 s window and the language detector. Tokens after the prompt
 * [<|startoftranscript|>, <|lang|>, <|transcribe|>] (plus <|notimestamps|> without timestamps)
 * are sampled one at a time with the KV cache; each keeps its probability for word confidences.
 */
import { throwIfAborted } from '@dub/core';
import type { DecoderState, WhisperSessions } from './model.js';
import { applyTimestampRules, argmax, softmaxAt } from './timestamp-rules.js';
import type { WhisperTokenizer } from './tokenizer.js';

type Tensor = Awaited<ReturnType<WhisperSessions['encode']>>;

export interface DecodedToken {
  id: number;
  probability: number;
}

export interface DecodeResult {
  tokens: DecodedToken[];
  /** Decoder cache length after each step (for diagnostics and tests). */
  cacheLengths: number[];
}

export interface DecodeOptions {
  language: string;
  timestamps: boolean;
  maxNewTokens: number;
  signal?: AbortSignal;
}

export function promptTokens(tok: WhisperTokenizer, language: string, timestamps: boolean): number[] {
  const tail = timestamps ? [] : [tok.noTimestamps];
  // English-only models (*.en) have no language or task tokens.
  if (tok.languages.size === 0) return [tok.sot, ...tail];
  const lang = tok.languageToken(language);
  if (lang === undefined) throw new RangeError(`the Whisper tokenizer has no language token for "${language}"`);
  return [tok.sot, lang, tok.transcribe, ...tail];
}

export async function greedyDecode(sessions: WhisperSessions, tok: WhisperTokenizer, encoded: Tensor, o: DecodeOptions): Promise<DecodeResult> {
  const state: DecoderState = sessions.startDecoding(encoded);
  let logits = await state.step(promptTokens(tok, o.language, o.timestamps));
  const tokens: DecodedToken[] = [];
  const cacheLengths = [state.pastLength];
  const seq: number[] = [];
  for (let i = 0; i < o.maxNewTokens; i++) {
    throwIfAborted(o.signal);
    if (o.timestamps) applyTimestampRules(logits, seq, tok);
    else for (let k = tok.eot + 1; k < logits.length; k++) logits[k] = -Infinity;
    const id = argmax(logits);
    if (id === tok.eot || logits[id] === -Infinity) break;
    tokens.push({ id, probability: softmaxAt(logits, id) });
    seq.push(id);
    logits = await state.step([id]);
    cacheLengths.push(state.pastLength);
  }
  return { tokens, cacheLengths };
}

export interface LanguageGuess {
  language: string;
  probability: number;
  /** Every language token's probability (softmax over language tokens only). */
  probabilities: Map<string, number>;
}

/** The spoken language: the most likely language token after <|startoftranscript|>. */
export async function detectLanguageFromEncoding(sessions: WhisperSessions, tok: WhisperTokenizer, encoded: Tensor): Promise<LanguageGuess> {
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
