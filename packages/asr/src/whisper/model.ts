/**
 * The two ONNX sessions of a Whisper export (onnx-community/whisper-* layout):
 * encoder_model.onnx: input_features f32[1, nMels, 3000] -> last_hidden_state f32[1, 1500, D];
 * decoder_model_merged.onnx: input_ids i64[1, T], encoder_hidden_states, past_key_values.N.
 * {decoder,encoder}.{key,value} f32[1, H, P, Dh], use_cache_branch bool[1] -> logits f32[1, T, V]
 * and present.N.*. The first decoder call runs without cache (empty pasts) and computes the
 * encoder keys/values; later calls feed one token and the cache, which grows by one per step.
 */
import { ModelError } from '@dub/core';
import { declaredDim, kvCacheLayout, nextKvCache, ort, tensorF32, tensorI64, type OnnxModel } from '@dub/onnx';

type Tensor = ReturnType<typeof tensorF32>;

export interface DecoderLayout {
  layers: number;
  heads: number;
  headDim: number;
}

/** Layers, heads and head size read from the decoder's past_key_values inputs. */
export function decoderLayout(decoder: OnnxModel, fallback?: Partial<DecoderLayout>): DecoderLayout {
  const kv = kvCacheLayout(decoder);
  const layers = kv.layers;
  for (const need of ['input_ids', 'encoder_hidden_states', 'use_cache_branch']) {
    if (!decoder.inputNames.includes(need)) throw new ModelError(`${decoder.path} is not a merged Whisper decoder: no input "${need}" (inputs: ${decoder.inputNames.join(', ')})`);
  }
  if (!layers) throw new ModelError(`${decoder.path}: no past_key_values.N.decoder.key inputs (not a merged decoder with KV cache)`);
  const heads = kv.heads ?? fallback?.heads;
  const headDim = kv.headDim ?? fallback?.headDim;
  if (!heads || !headDim) throw new ModelError(`${decoder.path}: cannot tell the attention heads / head size from the model's inputs; pass them in options`);
  return { layers, heads, headDim };
}

/** Mel bins the encoder expects (input_features [1, nMels, 3000]). */
export function encoderMels(encoder: OnnxModel): number | undefined {
  return declaredDim(encoder, 'input', 'input_features', 1);
}

/** The encoder output Whisper reads: its session is loaded with this output alone (engine.ts loadWhisper). */
export const WHISPER_ENCODER_OUTPUT = 'last_hidden_state';

export class WhisperSessions {
  constructor(readonly encoder: OnnxModel, readonly decoder: OnnxModel, readonly layout: DecoderLayout, readonly nMels: number) {
    if (!encoder.inputNames.includes('input_features')) throw new ModelError(`${encoder.path}: expected input "input_features", has [${encoder.inputNames.join(', ')}]`);
    if (!encoder.outputNames.includes('last_hidden_state')) throw new ModelError(`${encoder.path}: expected output "last_hidden_state", has [${encoder.outputNames.join(', ')}]`);
  }

  async encode(features: Float32Array): Promise<Tensor> {
    const frames = features.length / this.nMels;
    // the hidden states only: Xenova's exports also output the six layers' attention maps (432 MB
    // per 30 s window for base, copied into JS and held until a GC; loadWhisper drops them from
    // the graph's outputs, so that onnxruntime frees them inside the run too)
    const out = await this.encoder.run({ input_features: tensorF32(features, [1, this.nMels, frames]) }, [WHISPER_ENCODER_OUTPUT]);
    return out[WHISPER_ENCODER_OUTPUT]!;
  }

  /** A decoding of one window; with `alignmentHeads` ([layer, head]), their cross-attention is kept per step (crossAttention). */
  startDecoding(encoderHidden: Tensor, alignmentHeads?: readonly (readonly [number, number])[]): DecoderState {
    return new DecoderState(this.decoder, this.layout, encoderHidden, alignmentHeads);
  }
}

export class DecoderState {
  private past: Record<string, Tensor> | undefined;
  private lastLogits: Float32Array | undefined;
  private vocab = 0;
  /** Tokens held in the decoder's self-attention cache. */
  pastLength = 0;
  private fetches: string[] | undefined;
  private firstFetches: string[] | undefined;

  /** The logits of position `p` (0-based) of the last step's input (e.g. <|startoftranscript|> of the prompt). */
  positionLogits(p: number): Float32Array {
    const all = this.lastLogits;
    if (!all || p < 0 || (p + 1) * this.vocab > all.length) throw new RangeError(`no logits for position ${p} of the last decoder step`);
    return all.subarray(p * this.vocab, (p + 1) * this.vocab);
  }

  /** Per alignment head, per step: the cross-attention of the step's last position over the encoder frames. */
  private readonly attention: Float32Array[][];

  constructor(
    private readonly decoder: OnnxModel,
    private readonly layout: DecoderLayout,
    private readonly encoderHidden: Tensor,
    private readonly alignmentHeads: readonly (readonly [number, number])[] = [],
  ) {
    for (const [l, h] of alignmentHeads) {
      if (!decoder.outputNames.includes(`cross_attentions.${l}`)) throw new ModelError(`${decoder.path} has no output cross_attentions.${l} (export it with attentions for word times)`);
      if (h >= layout.heads) throw new ModelError(`${decoder.path}: alignment head ${h} of layer ${l} is past its ${layout.heads} heads`);
    }
    this.attention = alignmentHeads.map(() => []);
  }

  /**
   * The alignment heads' cross-attention, per head, one row per step: row k is the attention of the
   * query that predicted the k-th token sampled (row 0: the prompt's last position).
   */
  crossAttention(): Float32Array[][] {
    return this.attention;
  }

  /** Feed `ids` and return the logits of the last position. */
  async step(ids: readonly number[]): Promise<Float32Array> {
    const { layers, heads, headDim } = this.layout;
    const feeds: Record<string, Tensor> = {
      input_ids: tensorI64(BigInt64Array.from(ids.map((i) => BigInt(i))), [1, ids.length]),
      encoder_hidden_states: this.encoderHidden,
      use_cache_branch: new (ort().Tensor)('bool', Uint8Array.from([this.past ? 1 : 0]), [1]),
    };
    for (let l = 0; l < layers; l++) {
      for (const part of ['decoder', 'encoder'] as const) {
        for (const kind of ['key', 'value'] as const) {
          const name = `past_key_values.${l}.${part}.${kind}`;
          feeds[name] = this.past?.[name] ?? tensorF32(new Float32Array(0), [1, heads, 0, headDim]);
        }
      }
    }
    // logits and the keys and values the next step reads: the encoder ones only on the first step
    // (the cache branch passes them through; nextKvCache keeps those fed), never the attention maps
    const layersAligned = new Set(this.alignmentHeads.map(([l]) => `cross_attentions.${l}`));
    this.fetches ??= this.decoder.outputNames.filter((n) => n === 'logits' || /^present\.\d+\.decoder\./.test(n) || layersAligned.has(n));
    this.firstFetches ??= this.decoder.outputNames.filter((n) => n === 'logits' || /^present\.\d+\.(decoder|encoder)\./.test(n) || layersAligned.has(n));
    const out = await this.decoder.run(feeds, this.past ? this.fetches : this.firstFetches);
    const logits = out.logits;
    if (!logits) throw new ModelError('decoder returned no logits');
    const [, t, v] = logits.dims as number[];
    if (t !== ids.length) throw new ModelError(`decoder returned logits for ${t} positions, expected ${ids.length}`);
    // The cache branch passes the encoder keys/values through (or returns nothing useful): keep the first ones.
    const next = nextKvCache(out, layers, this.past);
    this.past = next;
    this.pastLength = (next['past_key_values.0.decoder.key']!.dims as number[])[2]!;
    for (const [k, [l, h]] of this.alignmentHeads.entries()) {
      // cross_attentions.L: [1, heads, T, frames]; the last position's row of head h
      const a = out[`cross_attentions.${l}`]!;
      const [, , T, F] = a.dims as number[];
      const at = (h * T! + T! - 1) * F!;
      this.attention[k]!.push((a.data as Float32Array).slice(at, at + F!));
    }
    const data = logits.data as Float32Array;
    this.lastLogits = data;
    this.vocab = v!;
    return data.slice((t! - 1) * v!, t! * v!);
  }
}
