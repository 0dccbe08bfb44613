/**
 * `wav2lip`: the Wav2Lip network (Prajwal et al., ACM MM 2020) on onnxruntime, for real hosts.
 * Per frame with a face: the face box, padded as Wav2Lip's inference.py pads its detector's box
 * (`--pads` 0 10 0 0: 10 frame pixels more at the bottom, for the chin; clamped to the frame), is
 * resized to a 96x96 crop, BGR (the network was trained on OpenCV frames), the lower half of a copy masked to
 * 0, the masked copy and the unmasked reference concatenated into `target` f32[1,6,96,96] in
 * [0, 1]; the 16-frame mel window around the frame is `source` f32[1,1,80,16]. The output
 * f32[1,3,96,96] (BGR, [0, 1]) is scaled back onto the face and blended into the frame inside the
 * mouth box with a feathered mask. Input names default to `source`/`target` (the layout of the
 * common ONNX export listed in models/manifest.json); other exports name theirs in the options.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { resolveContext, resolveModelFile, type DeviceChoice } from '@dub/core';
import { SessionCache, tensorF32, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import { MelWindows } from '../audio/mel.js';
import { speechWav } from '../audio/speech-envelope.js';
import { cropResize, type Rect, type RgbImage } from '../image/rgb-image.js';
import type { FaceFrame } from '../face/mouth-region.js';
import type { VideoInfo } from '../video/video-info.js';
import type { DubbedSpeech, FaceTrack, LipsContext, LipsEngine, LipsRenderOptions, LipsRenderResult, PreparedLips } from '../types.js';
import { transformFrames } from './frame-loop.js';
import { networkFaceInput, pasteNetworkFace } from '../image/paste-face.js';

export const WAV2LIP_MODEL_ID = 'wav2lip-gan-96';
export const WAV2LIP_FILE = 'wav2lip_gan_96.onnx';
export const WAV2LIP_SIZE = 96;

export interface Wav2LipOptions extends OnnxEngineOptions {
  /** Model file; default resolved from the manifest (`wav2lip-gan-96`). */
  modelPath?: string;
  /** Input names (defaults `source` for the mel window, `target` for the faces). */
  melInput?: string;
  faceInput?: string;
  /** Padding of the face box in frame pixels: top, bottom, left, right (default WAV2LIP_PADS, Wav2Lip's `--pads` default). */
  pads?: readonly [number, number, number, number];
}

/** The model file for these options (ModelMissingError naming the fix when absent). */
export function resolveWav2LipModel(opts: Wav2LipOptions = {}): string {
  if (opts.modelPath) return path.resolve(opts.modelPath);
  return resolveModelFile(WAV2LIP_MODEL_ID, WAV2LIP_FILE, { ...(opts.modelsDir ? { modelsDir: opts.modelsDir } : {}), ...(opts.searchDirs ? { searchDirs: opts.searchDirs } : {}) });
}

/** Wav2Lip inference.py's default `--pads` (top, bottom, left, right) in frame pixels: "adjust to include chin at least". */
export const WAV2LIP_PADS: readonly [number, number, number, number] = Object.freeze([0, 10, 0, 0]) as readonly [number, number, number, number];

/**
 * The face crop Wav2Lip sees for a face in a `frameWidth` x `frameHeight` frame: the face box
 * grown by `pads` (top, bottom, left, right, frame pixels) and clamped to the frame, as
 * inference.py's face_detect does.
 */
export function wav2lipCrop(face: FaceFrame, frameWidth: number, frameHeight: number, pads: readonly [number, number, number, number] = WAV2LIP_PADS): Rect {
  const [top, bottom, left, right] = pads;
  const x1 = Math.max(0, face.face.x - left);
  const y1 = Math.max(0, face.face.y - top);
  const x2 = Math.min(frameWidth, face.face.x + face.face.w + right);
  const y2 = Math.min(frameHeight, face.face.y + face.face.h + bottom);
  return { x: x1, y: y1, w: Math.max(1, x2 - x1), h: Math.max(1, y2 - y1) };
}

function checkPads(pads: readonly number[] | undefined): void {
  if (pads === undefined) return;
  if (pads.length !== 4 || pads.some((p) => !Number.isFinite(p))) throw new RangeError(`wav2lip pads must be 4 finite numbers (top, bottom, left, right), got ${JSON.stringify(pads)}`);
}

/** `target` tensor data of one crop: [masked BGR, reference BGR] / 255, CHW. */
export function faceTensor(crop: RgbImage): Float32Array {
  return networkFaceInput(crop, WAV2LIP_SIZE, 'bgr', '0..1');
}

/** Blend the network's output (BGR CHW [0, 1]) over `crop` of `frame`, inside the mouth box. */
export function pasteFace(frame: RgbImage, face: FaceFrame, crop: Rect, output: Float32Array): boolean {
  return pasteNetworkFace(frame, face, crop, output, WAV2LIP_SIZE, 'bgr');
}

export class Wav2LipEngine implements LipsEngine {
  readonly id = 'wav2lip';
  /** What its record calls it: the registry's label for its model file. */
  get label(): string {
    const name = path.basename(this.model.path);
    return name === 'wav2lip_gan_96.onnx' ? 'Wav2Lip GAN 96' : `Wav2Lip (${name})`;
  }
  private constructor(
    private readonly model: OnnxModel,
    private readonly sessions: SessionCache,
    private readonly ownSessions: boolean,
    private readonly opts: Wav2LipOptions,
  ) {}

  static async load(opts: Wav2LipOptions = {}): Promise<Wav2LipEngine> {
    checkPads(opts.pads);
    const file = resolveWav2LipModel(opts);
    const sessions = opts.sessions ?? new SessionCache({ ...(opts.device ? { device: opts.device } : {}), ...(opts.threads ? { threads: opts.threads } : {}) });
    const model = await sessions.get(file);
    return new Wav2LipEngine(model, sessions, !opts.sessions, opts);
  }

  get modelPath(): string {
    return this.model.path;
  }

  private inputNames(): { mel: string; face: string } {
    const names = this.model.inputNames;
    const mel = this.opts.melInput ?? (names.includes('source') ? 'source' : names[0]);
    const face = this.opts.faceInput ?? (names.includes('target') ? 'target' : names.find((n) => n !== mel) ?? names[1]);
    return { mel, face };
  }

  /** Run the network on one frame's face crop and mel window; returns the 3x96x96 BGR output. */
  async infer(crop: RgbImage, mel: Float32Array, ctx: LipsContext): Promise<Float32Array> {
    const s = WAV2LIP_SIZE;
    const { mel: melName, face: faceName } = this.inputNames();
    const feeds = { [melName]: tensorF32(mel, [1, 1, 80, 16]), [faceName]: tensorF32(faceTensor(crop), [1, 6, s, s]) };
    const run = () => this.model.run(feeds);
    const out = ctx.withLimit ? await ctx.withLimit('gpu', run) : await run();
    const t = out[this.model.outputNames[0]];
    if (!t || t.dims.length !== 4 || t.dims[1] !== 3 || t.dims[2] !== s || t.dims[3] !== s) {
      throw new RangeError(`wav2lip output should be [1,3,${s},${s}], got [${t?.dims.join(',')}]`);
    }
    return t.data as Float32Array;
  }

  async render(video: VideoInfo, speech: DubbedSpeech, faces: FaceTrack, output: string, opts: LipsRenderOptions, context: LipsContext): Promise<LipsRenderResult> {
    const ctx: LipsContext = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
    const wav = await speechWav(speech.file, opts.tmpDir, 'dub', opts.media, ctx);
    const mels = await MelWindows.open(wav);
    try {
      return await transformFrames(video, faces, output, opts, async (frame, face, i) => {
        const rect = wav2lipCrop(face, frame.width, frame.height, this.opts.pads);
        const crop = cropResize(frame, rect, WAV2LIP_SIZE, WAV2LIP_SIZE);
        const out = await this.infer(crop, await mels.windowFor(i, video.fps, video.frameTimes?.[i]), ctx);
        return pasteFace(frame, face, rect, out);
      }, ctx);
    } finally {
      await mels.close();
    }
  }

  async prepare(video: VideoInfo, speech: DubbedSpeech, _faces: FaceTrack, opts: LipsRenderOptions, context: LipsContext): Promise<PreparedLips> {
    const ctx: LipsContext = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
    const wav = await speechWav(speech.file, opts.tmpDir, 'dub', opts.media, ctx);
    const mels = await MelWindows.open(wav);
    return {
      identity: JSON.stringify({ engine: this.id, model: this.model.path, pads: this.opts.pads ?? WAV2LIP_PADS }),
      frameKey: async (i) => {
        const m = await mels.windowFor(i, video.fps, video.frameTimes?.[i]);
        return createHash('sha256').update(new Uint8Array(m.buffer, m.byteOffset, m.byteLength)).digest('hex');
      },
      op: async (frame, face, i) => {
        const rect = wav2lipCrop(face, frame.width, frame.height, this.opts.pads);
        const crop = cropResize(frame, rect, WAV2LIP_SIZE, WAV2LIP_SIZE);
        const out = await this.infer(crop, await mels.windowFor(i, video.fps, video.frameTimes?.[i]), ctx);
        return pasteFace(frame, face, rect, out);
      },
      close: () => mels.close(),
    };
  }

  async dispose(): Promise<void> {
    if (this.ownSessions) await this.sessions.disposeAll();
  }
}

export async function createWav2LipEngine(opts: Wav2LipOptions = {}): Promise<LipsEngine> {
  return Wav2LipEngine.load(opts);
}
