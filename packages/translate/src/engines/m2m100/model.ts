/**
 * The two ONNX sessions of an M2M100 export in Optimum's layout (Xenova/m2m100_418M: onnx/
 * encoder_model_quantized.onnx and onnx/decoder_model_merged_quantized.onnx; names from Optimum's
 * exporter, fixtures/m2m100-signature.json):
 * - encoder: input_ids i64[B, S], attention_mask i64[B, S] -> last_hidden_state f32[B, S, d_model];
 * - merged decoder: encoder_attention_mask i64[B, S], input_ids i64[B, T], encoder_hidden_states
 *   f32[B, S, d_model], past_key_values.N.{decoder,encoder}.{key,value} f32[B, heads, P, head_dim],
 *   use_cache_branch bool[1] -> logits f32[B, T, vocab], present.N.*. The first call runs without
 *   cache (empty pasts, use_cache_branch false) and computes the encoder keys/values; later calls
 *   feed one token per row and the cache.
 * onnxruntime-node runs each session off the JavaScript thread (its run() is asynchronous), as the
 * other ONNX engines do.
 */
import { ModelError } from '@dub/core';
import { kvCacheLayout, nextKvCache, ort, tensorF32, tensorI64, type OnnxModel } from '@dub/onnx';
import type { BeamDecoder } from './beam-search.js';
import { PAD_ID } from './tokenizer.js';

type Tensor = ReturnType<typeof tensorF32>;

export interface M2M100Layout {
  layers: number;
  heads: number;
  headDim: number;
}


/** The inputs and outputs both sessions must have (the export's signature). */
export const ENCODER_IO = { inputs: ['input_ids', 'attention_mask'], outputs: ['last_hidden_state'] } as const;
export const DECODER_IO = { inputs: ['encoder_attention_mask', 'input_ids', 'encoder_hidden_states', 'use_cache_branch'], outputs: ['logits'] } as const;

/** Layers, heads and head size read from the decoder's past_key_values inputs (fallback: M2M100 418M's 12 x 16 x 64). */
export function m2m100Layout(decoder: OnnxModel, fallback: Partial<M2M100Layout> = {}): M2M100Layout {
  const { layers, heads, headDim } = kvCacheLayout(decoder);
  if (!layers) throw new ModelError(`${decoder.path}: no past_key_values.N.decoder.key inputs (not a merged decoder with KV cache)`);
  return { layers, heads: heads ?? fallback.heads ?? 16, headDim: headDim ?? fallback.headDim ?? 64 };
}

export class M2M100Sessions {
  readonly layout: M2M100Layout;

  constructor(readonly encoder: OnnxModel, readonly decoder: OnnxModel, fallback: Partial<M2M100Layout> = {}) {
    for (const [m, io, what] of [[encoder, ENCODER_IO, 'encoder'], [decoder, DECODER_IO, 'merged decoder']] as const) {
      const missingIn = io.inputs.filter((n) => !m.inputNames.includes(n));
      const missingOut = io.outputs.filter((n) => !m.outputNames.includes(n));
      if (missingIn.length || missingOut.length) {
        throw new ModelError(`${m.path} is not an M2M100 ${what} in Optimum's layout: missing ${[...missingIn.map((n) => `input ${n}`), ...missingOut.map((n) => `output ${n}`)].join(', ')} (inputs: ${m.inputNames.join(', ')}; outputs: ${m.outputNames.join(', ')})`);
      }
    }
    this.layout = m2m100Layout(decoder, fallback);
  }

  /** Encode sources (right-padded with <pad> to the longest): hidden states and mask, batch-major. */
  async encode(sources: readonly (readonly number[])[]): Promise<EncodedBatch> {
    const B = sources.length;
    const S = Math.max(...sources.map((s) => s.length));
    const ids = new BigInt64Array(B * S).fill(BigInt(PAD_ID));
    const mask = new BigInt64Array(B * S);
    sources.forEach((s, b) => s.forEach((t, i) => {
      ids[b * S + i] = BigInt(t);
      mask[b * S + i] = 1n;
    }));
    const out = await this.encoder.run({ input_ids: tensorI64(ids, [B, S]), attention_mask: tensorI64(mask, [B, S]) });
    const h = out.last_hidden_state;
    if (!h || h.dims.length !== 3 || h.dims[0] !== B || h.dims[1] !== S) throw new ModelError(`encoder returned last_hidden_state [${h?.dims.join(', ')}], expected [${B}, ${S}, d_model]`);
    return { hidden: h.data as Float32Array, mask, batch: B, length: S, dModel: h.dims[2] as number };
  }

  /** A decoder over segment `b` of an encoded batch, started with `prompt` (decoder start + language token). */
  async start(enc: EncodedBatch, b: number, prompt: readonly number[]): Promise<{ decoder: SegmentDecoder; logits: Float32Array }> {
    const d = new SegmentDecoder(this.decoder, this.layout, enc, b);
    const [logits] = await d.run([prompt], [0]);
    return { decoder: d, logits: logits! };
  }
}

export interface EncodedBatch {
  hidden: Float32Array;
  mask: BigInt64Array;
  batch: number;
  length: number;
  dModel: number;
}

/** Rows `rows` of a [R, ...] tensor's data, each row `size` values long. */
function pickRows(data: Float32Array, size: number, rows: readonly number[]): Float32Array {
  const out = new Float32Array(rows.length * size);
  rows.forEach((r, i) => out.set(data.subarray(r * size, (r + 1) * size), i * size));
  return out;
}

/** One segment's decoder: its beams are the rows of each call; the cache is kept per row. */
export class SegmentDecoder implements BeamDecoder {
  private past: Record<string, Tensor> | undefined;
  private rows = 1;
  /** Decoder calls made (for tests and measurements). */
  calls = 0;
  /** Tokens in the self-attention cache after the last call. */
  pastLength = 0;
  private readonly hidden: Float32Array;
  private readonly mask: BigInt64Array;
  private repeated: { rows: number; hidden: Tensor; mask: Tensor } | undefined;

  constructor(private readonly model: OnnxModel, private readonly layout: M2M100Layout, private readonly enc: EncodedBatch, b: number) {
    const S = enc.length;
    this.hidden = enc.hidden.subarray(b * S * enc.dModel, (b + 1) * S * enc.dModel);
    this.mask = enc.mask.subarray(b * S, (b + 1) * S);
  }

  /** Row `row` of cache tensor `name` (e.g. past_key_values.0.decoder.key), for tests. */
  cacheRow(name: string, row: number): Float32Array {
    const t = this.past?.[name];
    if (!t) throw new RangeError(`no cache tensor ${name}`);
    const [r, h, p, d] = t.dims as number[];
    if (row < 0 || row >= r!) throw new RangeError(`no row ${row} in ${name}`);
    const size = h! * p! * d!;
    return (t.data as Float32Array).slice(row * size, (row + 1) * size);
  }

  step(tokens: readonly number[], rows: readonly number[]): Promise<Float32Array[]> {
    return this.run(tokens.map((t) => [t]), rows);
  }

  /** Feed `ids` (one list per row, all the same length) continuing the previous call's rows `rows`. */
  async run(ids: readonly (readonly number[])[], rows: readonly number[]): Promise<Float32Array[]> {
    const R = ids.length;
    const T = ids[0]!.length;
    const S = this.enc.length;
    const D = this.enc.dModel;
    const { layers, heads, headDim } = this.layout;
    const flat = new BigInt64Array(R * T);
    ids.forEach((r, i) => r.forEach((t, j) => (flat[i * T + j] = BigInt(t))));
    // every row decodes the same source: its encoder states, repeated R times (made once per R)
    if (this.repeated?.rows !== R) {
      const hidden = new Float32Array(R * S * D);
      const mask = new BigInt64Array(R * S);
      for (let r = 0; r < R; r++) {
        hidden.set(this.hidden, r * S * D);
        mask.set(this.mask, r * S);
      }
      this.repeated = { rows: R, hidden: tensorF32(hidden, [R, S, D]), mask: tensorI64(mask, [R, S]) };
    }
    const feeds: Record<string, Tensor> = {
      encoder_attention_mask: this.repeated.mask,
      input_ids: tensorI64(flat, [R, T]),
      encoder_hidden_states: this.repeated.hidden,
      use_cache_branch: new (ort().Tensor)('bool', Uint8Array.from([this.past ? 1 : 0]), [1]),
    };
    const identity = this.past && rows.length === this.rows && rows.every((r, i) => r === i);
    for (let l = 0; l < layers; l++) {
      for (const part of ['decoder', 'encoder'] as const) {
        for (const kind of ['key', 'value'] as const) {
          const name = `past_key_values.${l}.${part}.${kind}`;
          const p = this.past?.[name];
          if (!p) {
            feeds[name] = tensorF32(new Float32Array(0), [R, heads, 0, headDim]);
            continue;
          }
          // the encoder keys/values are the same in every row (one source): kept while the row count is
          if (identity || (part === 'encoder' && R === this.rows)) {
            feeds[name] = p;
            continue;
          }
          const dims = p.dims as number[];
          const size = dims[1]! * dims[2]! * dims[3]!;
          feeds[name] = tensorF32(pickRows(p.data as Float32Array, size, part === 'encoder' ? rows.map(() => 0) : rows), [R, dims[1]!, dims[2]!, dims[3]!]);
        }
      }
    }
    this.calls++;
    const out = await this.model.run(feeds);
    const logits = out.logits;
    if (!logits) throw new ModelError('decoder returned no logits');
    const [lb, lt, v] = logits.dims as number[];
    if (lb !== R || lt !== T) throw new ModelError(`decoder returned logits [${logits.dims.join(', ')}], expected [${R}, ${T}, vocab]`);
    // The cache branch passes the encoder keys/values through: keep the (row-picked) ones fed in.
    const next = nextKvCache(out, layers, this.past ? feeds : undefined);
    this.past = next;
    this.rows = R;
    this.pastLength = (next['past_key_values.0.decoder.key']!.dims as number[])[2]!;
    const data = logits.data as Float32Array;
    return Array.from({ length: R }, (_, r) => data.slice((r * T + T - 1) * v!, (r * T + T) * v!));
  }
}
