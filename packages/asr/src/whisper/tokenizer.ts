/**
 * Whisper's tokenizer: GPT-2 byte-level BPE read from a Hugging Face `tokenizer.json` (model.vocab,
 * model.merges as "a b" strings or [a, b] pairs, added_tokens), plus Whisper's special tokens:
 * <|endoftext|>, <|startoftranscript|>, language tokens (<|en|>, ...), <|translate|>,
 * <|transcribe|>, <|notimestamps|> and the timestamp tokens <|0.00|> .. <|30.00|> (0.02 s apart;
 * when the file does not list them they follow <|notimestamps|>).
 */
import { readFileSync } from 'node:fs';
import { bpeMerge, ModelError } from '@dub/core';

interface TokenizerJson {
  model: { type?: string; vocab: Record<string, number>; merges: Array<string | [string, string]> };
  added_tokens?: Array<{ id: number; content: string; special?: boolean }>;
}

/** GPT-2's reversible map from bytes to printable unicode characters. */
export function bytesToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out = new Array<string>(256);
  bs.forEach((b, i) => (out[b] = String.fromCharCode(cs[i]!)));
  return out;
}

const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const LANGUAGE_TOKEN = /^<\|([a-z]{2,3}|haw)\|>$/;
const TIMESTAMP_TOKEN = /^<\|(\d+\.\d{2})\|>$/;

export class WhisperTokenizer {
  private readonly vocab: Map<string, number>;
  private readonly idToToken: Map<number, string>;
  private readonly ranks: Map<string, number>;
  private readonly byteEncoder = bytesToUnicode();
  private readonly byteDecoder: Map<string, number>;
  private readonly special: Map<string, number>;
  private readonly bpeCache = new Map<string, string[]>();
  readonly eot: number;
  readonly sot: number;
  readonly transcribe: number;
  readonly translate: number;
  readonly noTimestamps: number;
  /** <|startofprev|>, <|startoflm|> and the no-speech token (<|nospeech|>, <|nocaptions|> in older vocabularies), when the vocabulary has them. */
  readonly sotPrev: number | undefined;
  readonly sotLm: number | undefined;
  readonly noSpeech: number | undefined;
  /** Id of <|0.00|>; every id from here on is a timestamp, 0.02 s apart. */
  readonly timestampBegin: number;
  /** Language code -> token id, in vocabulary order. */
  readonly languages: ReadonlyMap<string, number>;
  readonly vocabSize: number;

  constructor(json: TokenizerJson) {
    if (!json?.model?.vocab || !Array.isArray(json.model.merges)) throw new ModelError('tokenizer.json has no model.vocab / model.merges (not a BPE tokenizer)');
    this.vocab = new Map(Object.entries(json.model.vocab));
    this.special = new Map();
    for (const t of json.added_tokens ?? []) {
      this.vocab.set(t.content, t.id);
      this.special.set(t.content, t.id);
    }
    this.idToToken = new Map([...this.vocab].map(([t, i]) => [i, t]));
    this.ranks = new Map();
    json.model.merges.forEach((m, i) => this.ranks.set(typeof m === 'string' ? m : `${m[0]} ${m[1]}`, i));
    this.byteDecoder = new Map(this.byteEncoder.map((c, b) => [c, b]));
    const need = (t: string): number => {
      const id = this.vocab.get(t);
      if (id === undefined) throw new ModelError(`tokenizer.json lacks the Whisper special token ${t}`);
      return id;
    };
    this.eot = need('<|endoftext|>');
    this.sot = need('<|startoftranscript|>');
    this.transcribe = need('<|transcribe|>');
    this.translate = need('<|translate|>');
    this.noTimestamps = need('<|notimestamps|>');
    this.sotPrev = this.special.get('<|startofprev|>');
    this.sotLm = this.special.get('<|startoflm|>');
    this.noSpeech = this.special.get('<|nospeech|>') ?? this.special.get('<|nocaptions|>');
    this.timestampBegin = this.vocab.get('<|0.00|>') ?? this.noTimestamps + 1;
    const langs = [...this.special].filter(([t, id]) => LANGUAGE_TOKEN.test(t) && id > this.sot && id < this.translate).sort((a, b) => a[1] - b[1]);
    this.languages = new Map(langs.map(([t, id]) => [LANGUAGE_TOKEN.exec(t)![1]!, id]));
    let maxId = 0;
    for (const id of this.vocab.values()) maxId = Math.max(maxId, id);
    this.vocabSize = Math.max(maxId + 1, this.timestampBegin + 1501);
  }

  static fromFile(file: string): WhisperTokenizer {
    try {
      return new WhisperTokenizer(JSON.parse(readFileSync(file, 'utf8')) as TokenizerJson);
    } catch (e) {
      if (e instanceof ModelError) throw new ModelError(`${file}: ${e.message}`, { cause: e });
      throw new ModelError(`cannot read tokenizer ${file}: ${(e as Error).message}`, { cause: e });
    }
  }

  languageToken(language: string): number | undefined {
    return this.languages.get(language);
  }

  isTimestamp(id: number): boolean {
    return id >= this.timestampBegin;
  }

  timestampSeconds(id: number): number {
    return Math.round((id - this.timestampBegin) * 2) / 100;
  }

  private bpe(word: string): string[] {
    const cached = this.bpeCache.get(word);
    if (cached) return cached;
    const parts = bpeMerge([...word], this.ranks);
    this.bpeCache.set(word, parts);
    return parts;
  }

  /** Token ids of ordinary text (special-token text is not interpreted). */
  encode(text: string): number[] {
    const ids: number[] = [];
    for (const m of text.matchAll(PRETOKENIZE)) {
      const mapped = [...Buffer.from(m[0], 'utf8')].map((b) => this.byteEncoder[b]!).join('');
      for (const piece of this.bpe(mapped)) {
        const id = this.vocab.get(piece);
        if (id === undefined) throw new ModelError(`tokenizer cannot encode piece ${JSON.stringify(piece)}`);
        ids.push(id);
      }
    }
    return ids;
  }

  /**
   * Tokens that only write speaker tags or non-speech annotations ("♪♪♪", "( SPEAKING ... )",
   * "[DAVID]"), as openai/whisper's Tokenizer.non_speech_tokens lists them: each symbol that is a
   * single token, with or without a leading space (the first token of the musical symbols
   * ♩♪♫♬♭♮♯ whatever their length), and " -" and " '" (hyphens and quotes are allowed inside
   * words, not at their start). " -" and " '" are single tokens in every Whisper vocabulary; where
   * a vocabulary splits them they are left alone rather than suppressing their first piece, a
   * bare space.
   */
  nonSpeechTokens(): number[] {
    const symbols = [...'"#()*+/:;<=>@[\\]^_`{|}~「」『』', ...'<< >> <<< >>> -- --- -( -[ (\' (" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪'.split(' ')];
    const miscellaneous = new Set([...'♩♪♫♬♭♮♯']);
    const result = new Set<number>();
    for (const start of [' -', " '"]) {
      const t = this.encode(start);
      if (t.length === 1) result.add(t[0]!);
    }
    for (const symbol of [...symbols, ...miscellaneous]) {
      for (const tokens of [this.encode(symbol), this.encode(' ' + symbol)]) {
        if (tokens.length === 1 || miscellaneous.has(symbol)) result.add(tokens[0]!);
      }
    }
    return [...result].sort((a, b) => a - b);
  }

  /** Bytes of the text tokens among `ids` (special and timestamp tokens are skipped). */
  decodeBytes(ids: readonly number[]): Buffer {
    const bytes: number[] = [];
    for (const id of ids) {
      if (id >= this.eot || id >= this.timestampBegin) continue;
      const tok = this.idToToken.get(id);
      if (tok === undefined || this.special.has(tok)) continue;
      for (const ch of tok) {
        const b = this.byteDecoder.get(ch);
        if (b !== undefined) bytes.push(b);
      }
    }
    return Buffer.from(bytes);
  }

  decode(ids: readonly number[]): string {
    return this.decodeBytes(ids).toString('utf8');
  }

  /** The token's text form as written in the vocabulary (for logs and tests). */
  tokenText(id: number): string | undefined {
    return this.idToToken.get(id) ?? (id >= this.timestampBegin ? `<|${this.timestampSeconds(id).toFixed(2)}|>` : undefined);
  }
}
