/**
 * `musetalk`: MuseTalk v1.5 (TMElyralab, Tencent Music; code MIT, trained models "available for
 * any purpose, even commercially") on onnxruntime, for CUDA hosts. Four ONNX graphs made from the
 * authors' checkpoints by scripts/export-musetalk-onnx.py (signature:
 * fixtures/musetalk-signature.json), in the folder of the manifest's `musetalk-v15`:
 *
 * - audio (audio/musetalk-audio.ts): 30 s segments of the 16 kHz speech through Whisper's log-mel
 *   (@dub/asr) and `whisper_encoder.onnx` (whisper-tiny's hidden states, 50 a second); frame i
 *   takes the 10 x 5 x 384 window MuseTalk's get_whisper_chunk gives it, plus the positional
 *   encoding, as `audio_prompts` f32[1,50,384].
 * - face: the tracked BlazeFace box with `extraMargin` (10) frame pixels more below (v1.5's
 *   --extra_margin, for the chin), clamped to the frame, resized to 256x256 (bilinear; the
 *   reference uses Lanczos), RGB in [-1, 1]. `vae_encoder.onnx` encodes the crop with its lower
 *   half set to -1 and the crop itself in one batch of two: the [2,4,32,32] latents read as
 *   [1,8,32,32] are the UNet's `input_latents` (masked, then reference), as get_latents_for_unet
 *   concatenates them.
 * - `unet.onnx`: one step at timestep 0 (no diffusion sampling) -> `pred_latents` [1,4,32,32];
 *   `vae_decoder.onnx` -> the face f32[1,3,256,256] RGB in [0, 1].
 * - paste: scaled back onto the crop and blended into the frame inside the mouth box with the
 *   feathered mask Wav2Lip's paste uses (the reference blends a face-parsing mask of the lower
 *   face; the engines' contract lets an engine change the mouth box only).
 *
 * The real weights were not available where this was written: the engine is tested on tiny graphs
 * with the export's signature (fixtures/musetalk-tiny, scripts/make-tiny-musetalk.py); its lips
 * quality is unmeasured.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ModelMissingError, resolveContext, resolveModelFile } from '@dub/core';
import { SessionCache, tensorF32, tensorI64, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import { MUSETALK_AUDIO, MuseTalkAudio, type LogMel } from '../audio/musetalk-audio.js';
import { speechWav } from '../audio/speech-envelope.js';
import { cropResize, type Rect, type RgbImage } from '../image/rgb-image.js';
import type { FaceFrame } from '../face/mouth-region.js';
import type { VideoInfo } from '../video/video-info.js';
import type { DubbedSpeech, FaceTrack, LipsContext, LipsEngine, LipsRenderOptions, LipsRenderResult, PreparedLips } from '../types.js';
import { transformFrames } from './frame-loop.js';
import { networkFaceInput, pasteNetworkFace } from '../image/paste-face.js';

export const MUSETALK_MODEL_ID = 'musetalk-v15';
/** The exported graphs, the UNet (the record's model file) first. */
export const MUSETALK_GRAPHS = Object.freeze({ unet: 'unet.onnx', vaeEncoder: 'vae_encoder.onnx', vaeDecoder: 'vae_decoder.onnx', whisperEncoder: 'whisper_encoder.onnx' });
export const MUSETALK_SIZE = 256;
export const MUSETALK_LATENT = 32;
/** v1.5's --extra_margin: frame pixels added below the face box. */
export const MUSETALK_EXTRA_MARGIN = 10;
export const MUSETALK_INSTALL_HINT =
  'npx dub models fetch musetalk-v15 sd-vae-ft-mse whisper-tiny, then python3 scripts/export-musetalk-onnx.py (torch, diffusers, transformers; packages/lips/README.md)';

export interface MuseTalkOptions extends OnnxEngineOptions {
  /** A folder holding the four exported graphs; default the manifest model's folder (`musetalk-v15`). */
  modelDir?: string;
  /** Frame pixels added below the face box (default 10, MuseTalk v1.5's --extra_margin). */
  extraMargin?: number;
}

export type MuseTalkFiles = { -readonly [K in keyof typeof MUSETALK_GRAPHS]: string };

/** The four graphs for these options (ModelMissingError naming the fix when one is absent). */
export function resolveMuseTalkModels(opts: MuseTalkOptions = {}): MuseTalkFiles {
  const out = {} as MuseTalkFiles;
  for (const [key, file] of Object.entries(MUSETALK_GRAPHS) as [keyof MuseTalkFiles, string][]) {
    if (opts.modelDir) {
      const p = path.resolve(opts.modelDir, file);
      if (!fs.existsSync(p)) throw new ModelMissingError(MUSETALK_MODEL_ID, `MuseTalk graph ${file} not found in ${opts.modelDir} (${MUSETALK_INSTALL_HINT})`);
      out[key] = p;
    } else {
      try {
        out[key] = resolveModelFile(MUSETALK_MODEL_ID, file, { ...(opts.modelsDir ? { modelsDir: opts.modelsDir } : {}), ...(opts.searchDirs ? { searchDirs: opts.searchDirs } : {}) });
      } catch (e) {
        if (e instanceof ModelMissingError) throw new ModelMissingError(MUSETALK_MODEL_ID, `MuseTalk graph ${file} not found: ${MUSETALK_INSTALL_HINT}`, { cause: e });
        throw e;
      }
    }
  }
  return out;
}

/** The face crop MuseTalk sees: the face box with `extraMargin` more below, clamped to the frame. */
export function musetalkCrop(face: FaceFrame, frameWidth: number, frameHeight: number, extraMargin = MUSETALK_EXTRA_MARGIN): Rect {
  const x1 = Math.max(0, face.face.x);
  const y1 = Math.max(0, face.face.y);
  const x2 = Math.min(frameWidth, face.face.x + face.face.w);
  const y2 = Math.min(frameHeight, face.face.y + face.face.h + extraMargin);
  return { x: x1, y: y1, w: Math.max(1, x2 - x1), h: Math.max(1, y2 - y1) };
}

/**
 * `image` of vae_encoder for one 256x256 crop, as a batch of two: the crop with its lower half at
 * -1 (MuseTalk multiplies the [0, 1] image by its upper-half mask before normalising), then the
 * crop; RGB CHW in [-1, 1].
 */
export function musetalkImageBatch(crop: RgbImage): Float32Array {
  return networkFaceInput(crop, MUSETALK_SIZE, 'rgb', '-1..1');
}

/** Blend the decoded face (RGB CHW [0, 1], 256x256) over `crop` of `frame`, inside the mouth box. */
export function pasteMuseTalkFace(frame: RgbImage, face: FaceFrame, crop: Rect, output: Float32Array): boolean {
  return pasteNetworkFace(frame, face, crop, output, MUSETALK_SIZE, 'rgb');
}

function expectDims(name: string, dims: readonly number[] | undefined, want: readonly number[]): void {
  if (!dims || dims.length !== want.length || dims.some((d, i) => d !== want[i])) throw new RangeError(`musetalk ${name} should be [${want.join(',')}], got [${dims?.join(',')}]`);
}

interface Graphs {
  unet: OnnxModel;
  vaeEncoder: OnnxModel;
  vaeDecoder: OnnxModel;
  whisperEncoder: OnnxModel;
}

export class MuseTalkEngine implements LipsEngine {
  readonly id = 'musetalk';
  readonly label = 'MuseTalk v1.5';
  private constructor(
    private readonly graphs: Graphs,
    private readonly files: MuseTalkFiles,
    private readonly logMel: LogMel,
    private readonly sessions: SessionCache,
    private readonly ownSessions: boolean,
    private readonly opts: MuseTalkOptions,
  ) {}

  static async load(opts: MuseTalkOptions = {}): Promise<MuseTalkEngine> {
    if (opts.extraMargin !== undefined && !(Number.isFinite(opts.extraMargin) && opts.extraMargin >= 0)) throw new RangeError(`musetalk extraMargin must be a number >= 0, got ${opts.extraMargin}`);
    const files = resolveMuseTalkModels(opts);
    const sessions = opts.sessions ?? new SessionCache({ ...(opts.device ? { device: opts.device } : {}), ...(opts.threads ? { threads: opts.threads } : {}) });
    const [unet, vaeEncoder, vaeDecoder, whisperEncoder] = await Promise.all([sessions.get(files.unet), sessions.get(files.vaeEncoder), sessions.get(files.vaeDecoder), sessions.get(files.whisperEncoder)]);
    const { WhisperFeatureExtractor } = await import('@dub/asr');
    const mel = new WhisperFeatureExtractor(MUSETALK_AUDIO.melBins);
    return new MuseTalkEngine({ unet, vaeEncoder, vaeDecoder, whisperEncoder }, files, (a) => mel.extract(a), sessions, !opts.sessions, opts);
  }

  /** The graphs' files, the UNet first. */
  get modelFiles(): MuseTalkFiles {
    return { ...this.files };
  }

  private async run(model: OnnxModel, feeds: Parameters<OnnxModel['run']>[0], ctx: LipsContext) {
    const go = () => model.run(feeds);
    return ctx.withLimit ? ctx.withLimit('gpu', go) : go();
  }

  /** whisper_encoder on one segment's log-mel [80 * 3000]: hidden states [1500 * 5 * 384]. */
  async encodeAudio(mel: Float32Array, ctx: LipsContext): Promise<Float32Array> {
    const { melBins, melFrames, segmentFeatures, layers, dim } = MUSETALK_AUDIO;
    const out = await this.run(this.graphs.whisperEncoder, { input_features: tensorF32(mel, [1, melBins, melFrames]) }, ctx);
    const t = out['audio_features_all_layers'] ?? out[this.graphs.whisperEncoder.outputNames[0]!];
    expectDims('whisper_encoder output', t?.dims as number[] | undefined, [1, segmentFeatures, layers, dim]);
    return t!.data as Float32Array;
  }

  /** One frame: the 256x256 crop and its audio prompt [50 * 384] in, the decoded face [3 * 256 * 256] (RGB, [0, 1]) out. */
  async infer(crop: RgbImage, prompt: Float32Array, ctx: LipsContext): Promise<Float32Array> {
    const s = MUSETALK_SIZE;
    const l = MUSETALK_LATENT;
    const enc = await this.run(this.graphs.vaeEncoder, { image: tensorF32(musetalkImageBatch(crop), [2, 3, s, s]) }, ctx);
    const latents = enc['latents'] ?? enc[this.graphs.vaeEncoder.outputNames[0]!];
    expectDims('vae_encoder output', latents?.dims as number[] | undefined, [2, 4, l, l]);
    // [2,4,32,32] (masked, reference) in memory is [1,8,32,32] with the masked latents' channels first
    const pred = await this.run(
      this.graphs.unet,
      {
        input_latents: tensorF32(latents!.data as Float32Array, [1, 8, l, l]),
        timesteps: tensorI64(new BigInt64Array([0n]), [1]),
        audio_prompts: tensorF32(prompt, [1, MUSETALK_AUDIO.promptRows, MUSETALK_AUDIO.dim]),
      },
      ctx,
    );
    const p = pred['pred_latents'] ?? pred[this.graphs.unet.outputNames[0]!];
    expectDims('unet output', p?.dims as number[] | undefined, [1, 4, l, l]);
    const dec = await this.run(this.graphs.vaeDecoder, { latents: tensorF32(p!.data as Float32Array, [1, 4, l, l]) }, ctx);
    const img = dec['image'] ?? dec[this.graphs.vaeDecoder.outputNames[0]!];
    expectDims('vae_decoder output', img?.dims as number[] | undefined, [1, 3, s, s]);
    return img!.data as Float32Array;
  }

  private async openAudio(speech: DubbedSpeech, opts: LipsRenderOptions, ctx: LipsContext): Promise<MuseTalkAudio> {
    const wav = await speechWav(speech.file, opts.tmpDir, 'dub', opts.media, ctx);
    return MuseTalkAudio.open(wav, this.logMel, (mel) => this.encodeAudio(mel, ctx));
  }

  private frameOp(video: VideoInfo, audio: MuseTalkAudio, ctx: LipsContext) {
    return async (frame: RgbImage, face: FaceFrame, i: number): Promise<boolean> => {
      const rect = musetalkCrop(face, frame.width, frame.height, this.opts.extraMargin);
      const crop = cropResize(frame, rect, MUSETALK_SIZE, MUSETALK_SIZE);
      const out = await this.infer(crop, await audio.prompt(i, video.fps, video.frameTimes?.[i]), ctx);
      return pasteMuseTalkFace(frame, face, rect, out);
    };
  }

  async render(video: VideoInfo, speech: DubbedSpeech, faces: FaceTrack, output: string, opts: LipsRenderOptions, context: LipsContext): Promise<LipsRenderResult> {
    const ctx: LipsContext = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
    const audio = await this.openAudio(speech, opts, ctx);
    try {
      return await transformFrames(video, faces, output, opts, this.frameOp(video, audio, ctx), ctx);
    } finally {
      await audio.close();
    }
  }

  async prepare(video: VideoInfo, speech: DubbedSpeech, _faces: FaceTrack, opts: LipsRenderOptions, context: LipsContext): Promise<PreparedLips> {
    const ctx: LipsContext = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
    const audio = await this.openAudio(speech, opts, ctx);
    return {
      identity: JSON.stringify({ engine: this.id, models: this.files, extraMargin: this.opts.extraMargin ?? MUSETALK_EXTRA_MARGIN }),
      frameKey: async (i) => {
        const w = await audio.prompt(i, video.fps, video.frameTimes?.[i]);
        return createHash('sha256').update(new Uint8Array(w.buffer, w.byteOffset, w.byteLength)).digest('hex');
      },
      op: this.frameOp(video, audio, ctx),
      close: () => audio.close(),
    };
  }

  async dispose(): Promise<void> {
    if (this.ownSessions) await this.sessions.disposeAll();
  }
}

export async function createMuseTalkEngine(opts: MuseTalkOptions = {}): Promise<LipsEngine> {
  return MuseTalkEngine.load(opts);
}
