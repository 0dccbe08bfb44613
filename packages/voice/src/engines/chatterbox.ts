/**
 * Zero-shot voice cloning with Chatterbox Multilingual (Resemble AI, MIT) through its public ONNX
 * export (onnx-community/chatterbox-multilingual-ONNX): each line is spoken in the voice of the
 * speaker's reference clip (any language: the clip in the source language, the text in the
 * target language). Four graphs, run as the export's own inference script does
 * (fixtures/chatterbox-signature.json has the signature and its sources):
 *
 *   speech_encoder(audio_values 24 kHz) -> audio_features, audio_tokens, speaker_embeddings, speaker_features
 *   embed_tokens(input_ids, position_ids, exaggeration) -> inputs_embeds
 *   language_model(inputs_embeds, attention_mask, past_key_values.N.key/value) -> logits, present.N.*
 *   conditional_decoder(speech_tokens, speaker_embeddings, speaker_features) -> waveform 24 kHz
 *
 * Text: chatterbox-text.ts (punc_norm, lowercase, NFKD, language step, [lang], [SPACE], BPE of the
 * export's tokenizer.json with its template). Decoding: greedy with the repetition penalty (1.2)
 * over every token generated so far (START included), until STOP (6562) or the cap on new tokens:
 * the line's time slot (`maxSeconds`, 25 tokens a second) or `maxNewTokens`. The first step feeds
 * the reference's audio_features before the text embeddings; each later step one token at
 * position i + 1, the KV cache carried from present.* to past_key_values.* (its dtype, float32 or
 * float16, and its head count and size are read from the session). The vocoder gets the reference's
 * audio_tokens followed by the generated ones (tokens >= 6561 dropped, as the reference's
 * drop_invalid_tokens does); the last token's 40 ms are cut from the waveform (mtl_tts.py).
 *
 * onnxruntime-node runs every graph in native threads (the event loop keeps running), as the other
 * ONNX engines; the sessions come from @dub/onnx's SessionCache.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getLocale, ModelError, resolveModelFile, throwIfAborted, ValidationError, type DeviceChoice, type StageContext } from '@dub/core';
import { readWav, resample, type MediaToolOptions, type PlanarAudio } from '@dub/media';
import { OnnxModelsEngine, ort, tensorF32, tensorI64, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import type { SynthesisRequest, TtsCapabilities, TtsEngine } from '../types.js';
import { BpeTokenizer, chatterboxLanguage, prepareChatterboxText } from './chatterbox-text.js';

type Tensor = ReturnType<typeof tensorF32>;

export const CHATTERBOX_MODEL_ID = 'chatterbox-multilingual';
export const CHATTERBOX_FILES = Object.freeze({
  speechEncoder: 'speech_encoder.onnx',
  embedTokens: 'embed_tokens.onnx',
  languageModel: 'language_model.onnx',
  decoder: 'conditional_decoder.onnx',
  tokenizer: 'tokenizer.json',
  defaultVoice: 'default_voice.wav',
});
export const CHATTERBOX_SAMPLE_RATE = 24000;
/** Speech tokens per second (S3 tokenizer: one per 40 ms). */
export const CHATTERBOX_TOKEN_RATE = 25;
export const START_SPEECH_TOKEN = 6561;
export const STOP_SPEECH_TOKEN = 6562;
/** The reference clip is cut to this length before the speech encoder (the graph itself uses 10 s for the mel, 6 s for the prompt tokens). */
export const CHATTERBOX_MAX_REFERENCE_SECONDS = 30;

export interface ChatterboxOptions extends OnnxEngineOptions {
  /** Folder holding the export's files (default: resolved as manifest id chatterbox-multilingual). */
  dir?: string;
  /** Language model graph (default language_model.onnx; language_model_fp16.onnx on CUDA hosts that have it). */
  languageModel?: string;
  /** The export's exaggeration input (default 0.5). */
  exaggeration?: number;
  /** Repetition penalty (default 1.2, the export's inference script). */
  repetitionPenalty?: number;
  /** Cap on new speech tokens when a request gives no maxSeconds (default 1000: 40 s, mtl_tts.py). */
  maxNewTokens?: number;
  /** How a voice's `reference` becomes a local audio file (generation: the blob store); default: it is a path. */
  referenceFile?: (reference: string) => Promise<string>;
  tmpDir?: string;
  media?: MediaToolOptions;
}

export interface ChatterboxFiles {
  speechEncoder: string;
  embedTokens: string;
  languageModel: string;
  decoder: string;
  tokenizer: string;
  defaultVoice: string;
}

interface Conditioning {
  audioFeatures: { data: Float32Array; length: number };
  audioTokens: BigInt64Array;
  speakerEmbeddings: Tensor;
  speakerFeatures: Tensor;
}

interface Loaded {
  encoder: OnnxModel;
  embed: OnnxModel;
  lm: OnnxModel;
  decoder: OnnxModel;
  tokenizer: BpeTokenizer;
  /** past_key_values input names with their present.* output names, cache dtype, heads and head size. */
  cache: { past: string; present: string; dtype: 'float32' | 'float16'; heads: number; headDim: number }[];
}

export interface GeneratedTokens {
  /** Generated speech tokens, without START and STOP. */
  tokens: number[];
  /** Whether the model emitted STOP (false: the cap ended the line). */
  stopped: boolean;
  cap: number;
}

/** The cap on new tokens for a line that may last `maxSeconds` (25 tokens a second, one more for STOP). */
export function tokenCap(maxSeconds: number | undefined, fallback: number): number {
  if (maxSeconds === undefined || !(maxSeconds > 0)) return fallback;
  return Math.max(1, Math.min(fallback, Math.ceil(maxSeconds * CHATTERBOX_TOKEN_RATE) + 1));
}

/** The export's repetition penalty on `logits` in place: every id in `seen` scaled toward lower scores. */
export function applyRepetitionPenalty(logits: Float32Array, seen: Iterable<number>, penalty: number): void {
  for (const id of new Set(seen)) {
    if (id < 0 || id >= logits.length) continue;
    const s = logits[id]!;
    logits[id] = s < 0 ? s * penalty : s / penalty;
  }
}

function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}

function need(model: OnnxModel, inputs: readonly string[], outputs: readonly string[], what: string): void {
  for (const n of inputs) if (!model.inputNames.includes(n)) throw new ModelError(`${model.path} is not Chatterbox's ${what}: it has no input "${n}" (inputs: ${model.inputNames.join(', ')})`);
  for (const n of outputs) if (!model.outputNames.includes(n)) throw new ModelError(`${model.path} is not Chatterbox's ${what}: it has no output "${n}" (outputs: ${model.outputNames.join(', ')})`);
}

export class ChatterboxEngine extends OnnxModelsEngine<Loaded> implements TtsEngine {
  readonly id = 'chatterbox';
  readonly label = 'Chatterbox Multilingual';
  readonly capabilities: TtsCapabilities = { rateControl: false, pitchControl: false, sampleRate: CHATTERBOX_SAMPLE_RATE, voiceCloning: true };
  private readonly conditionings = new Map<string, Promise<Conditioning>>();
  private readonly warned = new Set<string>();

  constructor(private readonly opts: ChatterboxOptions = {}) {
    super(opts);
  }

  /** The export's files (from `dir`, else the model resolver: a ModelMissingError naming `dub models fetch chatterbox-multilingual`). */
  static files(o: Pick<ChatterboxOptions, 'dir' | 'modelsDir' | 'searchDirs' | 'languageModel'> = {}): ChatterboxFiles {
    const names = { ...CHATTERBOX_FILES, ...(o.languageModel ? { languageModel: o.languageModel } : {}) };
    const r = { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) };
    const at = (f: string) => (o.dir ? path.join(o.dir, f) : resolveModelFile(CHATTERBOX_MODEL_ID, f, r));
    return {
      speechEncoder: at(names.speechEncoder),
      embedTokens: at(names.embedTokens),
      languageModel: at(names.languageModel),
      decoder: at(names.decoder),
      tokenizer: at(names.tokenizer),
      defaultVoice: o.dir ? path.join(o.dir, names.defaultVoice) : (() => {
        try {
          return resolveModelFile(CHATTERBOX_MODEL_ID, names.defaultVoice, r);
        } catch {
          return '';
        }
      })(),
    };
  }

  modelFile(locale: string): string | undefined {
    if (!chatterboxLanguage(locale)) return undefined;
    try {
      return ChatterboxEngine.files(this.opts).languageModel;
    } catch {
      return undefined;
    }
  }

  async supportsLocale(locale: string): Promise<boolean> {
    return !!getLocale(locale) && this.modelFile(locale) !== undefined;
  }

  protected async load(ctx: StageContext): Promise<Loaded> {
    const f = ChatterboxEngine.files(this.opts);
    const get = (file: string) => this.sessions.get(file, { logger: ctx.logger });
    const [encoder, embed, lm, decoder] = await Promise.all([get(f.speechEncoder), get(f.embedTokens), get(f.languageModel), get(f.decoder)]);
    need(encoder, ['audio_values'], ['audio_features', 'audio_tokens', 'speaker_embeddings', 'speaker_features'], 'speech encoder');
    need(embed, ['input_ids', 'position_ids', 'exaggeration'], ['inputs_embeds'], 'token embedding');
    need(lm, ['inputs_embeds', 'attention_mask'], ['logits'], 'language model');
    need(decoder, ['speech_tokens', 'speaker_embeddings', 'speaker_features'], ['waveform'], 'decoder');
    const cache: Loaded['cache'] = [];
    for (const meta of lm.session.inputMetadata) {
      const m = /^past_key_values\.(\d+)\.(key|value)$/.exec(meta.name);
      if (!m) continue;
      const present = `present.${m[1]}.${m[2]}`;
      if (!lm.outputNames.includes(present)) throw new ModelError(`${lm.path}: input ${meta.name} has no output ${present}`);
      if (!meta.isTensor || (meta.type !== 'float32' && meta.type !== 'float16')) throw new ModelError(`${lm.path}: ${meta.name} is not a float32 or float16 tensor`);
      const heads = meta.shape[1];
      const headDim = meta.shape[3];
      if (meta.shape.length !== 4 || typeof heads !== 'number' || typeof headDim !== 'number') throw new ModelError(`${lm.path}: ${meta.name} has shape [${meta.shape.join(',')}], expected [batch, heads, past, head_dim] with fixed heads and head_dim`);
      cache.push({ past: meta.name, present, dtype: meta.type, heads, headDim });
    }
    if (!cache.length) throw new ModelError(`${lm.path} is not Chatterbox's language model: it has no past_key_values inputs`);
    return { encoder, embed, lm, decoder, tokenizer: BpeTokenizer.fromFile(f.tokenizer), cache };
  }

  /** The speech encoder's outputs for a reference clip (a file path, or what `referenceFile` resolves); '' is the export's default voice. */
  private conditioning(reference: string, l: Loaded, ctx: StageContext): Promise<Conditioning> {
    let p = this.conditionings.get(reference);
    if (!p) {
      p = (async () => {
        let file: string;
        if (reference === '') {
          file = ChatterboxEngine.files(this.opts).defaultVoice;
          if (!file) throw new ValidationError(`a voice without a reference clip needs the export's ${CHATTERBOX_FILES.defaultVoice} (npx dub models fetch ${CHATTERBOX_MODEL_ID})`, { field: 'voice' });
        } else file = this.opts.referenceFile ? await this.opts.referenceFile(reference) : reference;
        const y = await this.at24k(file, ctx);
        if (y.length < CHATTERBOX_SAMPLE_RATE / CHATTERBOX_TOKEN_RATE) throw new ValidationError(`reference clip ${reference || file} is shorter than one speech token (40 ms)`, { field: 'voice' });
        const out = await l.encoder.run({ audio_values: tensorF32(y, [1, y.length]) });
        const f = out.audio_features!;
        return {
          audioFeatures: { data: Float32Array.from(f.data as Float32Array), length: f.dims[1]! },
          audioTokens: BigInt64Array.from(out.audio_tokens!.data as BigInt64Array),
          speakerEmbeddings: out.speaker_embeddings!,
          speakerFeatures: out.speaker_features!,
        };
      })();
      this.conditionings.set(reference, p);
      p.catch(() => {
        if (this.conditionings.get(reference) === p) this.conditionings.delete(reference);
      });
    }
    return p;
  }

  /** Mono 24 kHz samples of an audio file (ffmpeg), at most CHATTERBOX_MAX_REFERENCE_SECONDS. */
  private async at24k(file: string, ctx: StageContext): Promise<Float32Array> {
    const dir = await fsp.mkdtemp(path.join(this.opts.tmpDir ?? os.tmpdir(), 'dub-chatterbox-'));
    try {
      const out = path.join(dir, 'reference.wav');
      await resample(file, out, { ...this.opts.media, sampleRate: CHATTERBOX_SAMPLE_RATE, channels: 1, format: 'float32' }, ctx);
      const y = (await readWav(out)).channels[0]!;
      return y.length > CHATTERBOX_MAX_REFERENCE_SECONDS * CHATTERBOX_SAMPLE_RATE ? y.slice(0, CHATTERBOX_MAX_REFERENCE_SECONDS * CHATTERBOX_SAMPLE_RATE) : y;
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  /** The model's input ids for `text` in `locale` (prepared text, BPE, template). */
  encodeText(text: string, locale: string, tokenizer: BpeTokenizer, ctx: StageContext): number[] {
    const lang = chatterboxLanguage(locale);
    if (!lang) throw new ValidationError(`Chatterbox Multilingual does not speak ${locale}`, { field: 'locale' });
    const prepared = prepareChatterboxText(text, lang);
    if (prepared.skipped && !this.warned.has(lang)) {
      this.warned.add(lang);
      ctx.logger.warn({ language: lang, step: prepared.skipped }, 'chatterbox: the reference text step for this language is not available here; the text is tokenized without it');
    }
    const enc = tokenizer.encode(prepared.text);
    if (enc.unknown.length) ctx.logger.debug({ unknown: [...new Set(enc.unknown)] }, 'chatterbox: symbols outside the tokenizer vocabulary');
    return enc.ids;
  }

  /** Greedy decoding with the KV cache, the repetition penalty and the stop token. */
  async generateTokens(ids: readonly number[], cond: Conditioning, cap: number, l: Loaded, ctx: StageContext): Promise<GeneratedTokens> {
    const o = ort();
    const exaggeration = tensorF32(Float32Array.from([this.opts.exaggeration ?? 0.5]), [1]);
    const penalty = this.opts.repetitionPenalty ?? 1.2;
    const embed = async (input: number[], positions: number[]): Promise<Tensor> => {
      const out = await l.embed.run({
        input_ids: tensorI64(BigInt64Array.from(input, (x) => BigInt(x)), [1, input.length]),
        position_ids: tensorI64(BigInt64Array.from(positions, (x) => BigInt(x)), [1, positions.length]),
        exaggeration,
      });
      return out.inputs_embeds!;
    };
    // prefill: the reference's conditioning, then the text (positions: -1 from the start, 0 for the speech/exaggeration ids)
    const text = await embed([...ids], ids.map((id, i) => (id >= START_SPEECH_TOKEN ? 0 : i - 1)));
    const hidden = text.dims[2]!;
    if (cond.audioFeatures.data.length !== cond.audioFeatures.length * hidden) throw new ModelError(`speech encoder features (${cond.audioFeatures.data.length / Math.max(1, cond.audioFeatures.length)} wide) do not match the token embeddings (${hidden})`);
    const first = new Float32Array(cond.audioFeatures.data.length + text.data.length);
    first.set(cond.audioFeatures.data, 0);
    first.set(text.data as Float32Array, cond.audioFeatures.data.length);
    let inputsEmbeds = tensorF32(first, [1, cond.audioFeatures.length + ids.length, hidden]);
    let total = cond.audioFeatures.length + ids.length;
    const past: Record<string, Tensor> = {};
    for (const c of l.cache) past[c.past] = c.dtype === 'float16' ? new o.Tensor('float16', new Uint16Array(0), [1, c.heads, 0, c.headDim]) : tensorF32(new Float32Array(0), [1, c.heads, 0, c.headDim]);
    const generated: number[] = [START_SPEECH_TOKEN];
    let stopped = false;
    for (let i = 0; i < cap; i++) {
      throwIfAborted(ctx.signal);
      const out = await l.lm.run({ inputs_embeds: inputsEmbeds, attention_mask: tensorI64(new BigInt64Array(total).fill(1n), [1, total]), ...past });
      const logits = out.logits!;
      const vocab = logits.dims[2]!;
      const seq = logits.dims[1]!;
      const last = Float32Array.from((logits.data as Float32Array).subarray((seq - 1) * vocab, seq * vocab));
      applyRepetitionPenalty(last, generated, penalty);
      const next = argmax(last);
      generated.push(next);
      if (next === STOP_SPEECH_TOKEN) {
        stopped = true;
        break;
      }
      for (const c of l.cache) past[c.past] = out[c.present]!;
      inputsEmbeds = await embed([next], [i + 1]);
      total += 1;
    }
    const tokens = generated.slice(1).filter((t) => t !== STOP_SPEECH_TOKEN);
    return { tokens, stopped, cap };
  }

  async synthesize(request: SynthesisRequest, ctx: StageContext): Promise<PlanarAudio> {
    throwIfAborted(ctx.signal);
    if (!chatterboxLanguage(request.locale)) throw new ValidationError(`Chatterbox Multilingual does not speak ${request.locale}`, { field: 'locale' });
    const text = request.text.trim();
    if (text === '') return { sampleRate: CHATTERBOX_SAMPLE_RATE, channels: [new Float32Array(0)] };
    const l = await this.models(ctx);
    const cond = await this.conditioning(request.voice.reference ?? '', l, ctx);
    const ids = this.encodeText(text, request.locale, l.tokenizer, ctx);
    const cap = tokenCap(request.maxSeconds, this.opts.maxNewTokens ?? 1000);
    const g = await this.generateTokens(ids, cond, cap, l, ctx);
    if (!g.stopped) ctx.logger.warn({ text, cap, maxSeconds: request.maxSeconds }, 'chatterbox: no stop token within the cap on new tokens; the line is cut there');
    // the vocoder takes speech tokens only (ids below START; drop_invalid_tokens in the reference)
    const speech = g.tokens.filter((t) => t < START_SPEECH_TOKEN);
    if (!speech.length) return { sampleRate: CHATTERBOX_SAMPLE_RATE, channels: [new Float32Array(0)] };
    const all = new BigInt64Array(cond.audioTokens.length + speech.length);
    all.set(cond.audioTokens, 0);
    speech.forEach((t, i) => (all[cond.audioTokens.length + i] = BigInt(t)));
    const out = await l.decoder.run({ speech_tokens: tensorI64(all, [1, all.length]), speaker_embeddings: cond.speakerEmbeddings, speaker_features: cond.speakerFeatures });
    // The last token's audio is dropped, as mtl_tts.py does since resemble-ai/chatterbox 3f35dfc
    // ("emitted just before EOS with degraded attention and decodes to ~40 ms of noise").
    const wave = out.waveform!.data as Float32Array;
    const keep = Math.max(1, speech.length - 1) * (CHATTERBOX_SAMPLE_RATE / CHATTERBOX_TOKEN_RATE);
    return { sampleRate: CHATTERBOX_SAMPLE_RATE, channels: [Float32Array.from(wave.subarray(0, Math.min(wave.length, keep)))] };
  }

  /** For tests and benches: the loaded graphs, and the generation of one line's tokens. */
  async debugGenerate(request: SynthesisRequest, ctx: StageContext): Promise<GeneratedTokens & { ids: number[] }> {
    const l = await this.models(ctx);
    const cond = await this.conditioning(request.voice.reference ?? '', l, ctx);
    const ids = this.encodeText(request.text, request.locale, l.tokenizer, ctx);
    return { ...(await this.generateTokens(ids, cond, tokenCap(request.maxSeconds, this.opts.maxNewTokens ?? 1000), l, ctx)), ids };
  }

  async dispose(): Promise<void> {
    this.conditionings.clear();
    await this.disposeModels((m) => [m.encoder, m.embed, m.lm, m.decoder]);
  }
}

export function createChatterboxEngine(opts: ChatterboxOptions = {}): ChatterboxEngine {
  return new ChatterboxEngine(opts);
}
