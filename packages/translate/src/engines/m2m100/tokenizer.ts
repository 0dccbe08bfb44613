/**
 * M2M100's tokenizer as transformers' M2M100Tokenizer (the reference implementation) builds it
 * from the export's sentencepiece.bpe.model and vocab.json:
 * - encode: SentencePiece pieces, each mapped through vocab.json (a piece not in it is <unk>, 3);
 *   the source is `[__src__] + ids + [</s>]`.
 * - language tokens: `__xx__` = len(vocab.json) + index in M2M100_LANGUAGES; after them 8
 *   `madeupword` tokens, so the model's vocabulary is len(vocab.json) + 108 (128,112 for 418M).
 * - decode: ids to pieces through vocab.json, special and language tokens dropped, SentencePiece
 *   decoding.
 */
import fsp from 'node:fs/promises';
import { ModelError } from '@dub/core';
import { M2M100_LANGUAGES } from './languages.js';
import { SentencePieceBpe } from './sentencepiece.js';

export const BOS_ID = 0;
export const PAD_ID = 1;
export const EOS_ID = 2;
export const UNK_ID = 3;

export class M2M100Tokenizer {
  private readonly toId: Map<string, number>;
  private readonly toPiece: string[];
  /** len(vocab.json): the first language token's id. */
  readonly langOffset: number;
  /** The model's vocabulary size (vocab.json + 100 language tokens + 8 madeupwords). */
  readonly vocabSize: number;

  constructor(readonly spm: SentencePieceBpe, vocab: Record<string, number>) {
    this.toId = new Map(Object.entries(vocab));
    this.langOffset = this.toId.size;
    this.toPiece = [];
    for (const [p, id] of this.toId) {
      if (!Number.isInteger(id) || id < 0 || id >= this.langOffset) throw new ModelError(`vocab.json: id ${id} of "${p}" is outside 0..${this.langOffset - 1}`);
      this.toPiece[id] = p;
    }
    if (this.toId.get('</s>') !== EOS_ID || this.toId.get('<unk>') !== UNK_ID || this.toId.get('<pad>') !== PAD_ID) {
      throw new ModelError('vocab.json is not M2M100\'s: expected <s> 0, <pad> 1, </s> 2, <unk> 3');
    }
    this.vocabSize = this.langOffset + M2M100_LANGUAGES.length + 8;
  }

  static async load(spmFile: string, vocabFile: string): Promise<M2M100Tokenizer> {
    const [spm, vocab] = await Promise.all([fsp.readFile(spmFile), fsp.readFile(vocabFile, 'utf8')]);
    return new M2M100Tokenizer(new SentencePieceBpe(new Uint8Array(spm.buffer, spm.byteOffset, spm.byteLength)), JSON.parse(vocab) as Record<string, number>);
  }

  /** The id of `__code__` (throws for a code M2M100 does not have). */
  langId(code: string): number {
    const i = (M2M100_LANGUAGES as readonly string[]).indexOf(code);
    if (i < 0) throw new ModelError(`M2M100 has no language "${code}"`);
    return this.langOffset + i;
  }

  pieces(text: string): string[] {
    return this.spm.encode(text);
  }

  /** Source ids: [__src__] + pieces' ids + [</s>]. */
  encode(text: string, srcCode: string): number[] {
    return [this.langId(srcCode), ...this.pieces(text).map((p) => this.toId.get(p) ?? UNK_ID), EOS_ID];
  }

  /** Whether `id` is a special or language token (dropped from decoded text). */
  isSpecial(id: number): boolean {
    return id <= UNK_ID || id >= this.langOffset;
  }

  decode(ids: readonly number[]): string {
    const pieces: string[] = [];
    for (const id of ids) {
      if (this.isSpecial(id)) continue;
      const p = this.toPiece[id];
      if (p !== undefined) pieces.push(p);
    }
    return this.spm.decode(pieces).trim();
  }
}
