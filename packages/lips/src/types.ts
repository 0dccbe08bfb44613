/**
 * The lips stage's shared types: the engine interface every lips engine implements, the face
 * track it receives and the context it runs in.
 */
import type { Engine, StageContext } from '@dub/core';
import type { MediaToolOptions } from '@dub/media';
import type { FaceFrame } from './face/mouth-region.js';
import type { RgbImage } from './image/rgb-image.js';
import type { YuvImage } from './engines/mouth-warp.js';
import type { VideoInfo } from './video/video-info.js';

/** Runs model work under a named concurrency limit (the worker's `gpu` limit), when given. */
export type WithLimit = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

export interface LipsContext extends StageContext {
  withLimit?: WithLimit;
}

/** The main face of each frame (null: no face; the frame passes through unchanged). */
export interface FaceTrack {
  width: number;
  height: number;
  fps: number;
  frameCount: number;
  frames: (FaceFrame | null)[];
  /** Frames the detector ran on, frames it found a face on, and the time it took in total. */
  detectedFrames: number;
  facesFound: number;
  detectionMs: number;
  /** Of the detected frames, those between key frames (intervals where the face moved, appeared or scored low). */
  refinedFrames?: number;
}

/** A word of the dubbed speech with its time in the video (seconds). */
export interface TimedWord {
  text: string;
  start: number;
  end: number;
}

/** The dubbed speech that drives the mouth. */
export interface DubbedSpeech {
  /** Audio file (the dubbed speech alone where available, else the mix), any format ffmpeg reads. */
  file: string;
  /** Words with times, when the generation stage knows them (viseme shaping). */
  words?: TimedWord[];
  /** Target locale of the words (espeak-ng voice for phonemes), e.g. "es-ES". */
  locale?: string;
  /**
   * The source speaker's speech (separated), when known: where the source speaker talks and the
   * dub is silent, the mouth is closed; where both are silent it is left as it is.
   */
  sourceSpeech?: string;
}

export interface LipsEncodeOptions {
  /** x264 CRF (default 18) and preset (default veryfast). */
  crf: number;
  preset: string;
}

export interface LipsRenderOptions {
  /** Scale of the working resolution of the mouth region (1 = full, 0.5 = half). */
  workScale: number;
  encode: LipsEncodeOptions;
  /** Work directory for intermediate files. */
  tmpDir: string;
  /** ffmpeg/ffprobe binaries. */
  media: MediaToolOptions;
}

export interface LipsRenderResult {
  /** The silent, re-encoded video. */
  file: string;
  frames: number;
  /** Frames whose mouth region was re-rendered. */
  changedFrames: number;
  /** Milliseconds spent in the engine's own per-frame work (not decoding and encoding). */
  engineMs: number;
}

/** An engine ready to render any frame of one video for one dubbed speech. */
export interface PreparedLips {
  identity: string;
  /** What drives frame `i` besides its face (a mouth amount, a mel window's hash). */
  frameKey(i: number): string | Promise<string>;
  op(frame: RgbImage, face: FaceFrame, index: number): Promise<boolean> | boolean;
  /**
   * The same operation on a yuv420p frame (I420 planes, even sizes), when the engine has one: the
   * frames then go from the decoder to the encoder as they are, never converted to RGB.
   */
  opYuv?(frame: YuvImage, face: FaceFrame, index: number): boolean;
  close(): Promise<void>;
}

export interface LipsEngine extends Engine {
  /**
   * Re-render the mouth region of `video` to follow `speech`, writing a video-only file `output`
   * with the same size, frame rate and frame count. Frames without a face pass through unchanged.
   */
  render(video: VideoInfo, speech: DubbedSpeech, faces: FaceTrack, output: string, opts: LipsRenderOptions, ctx: LipsContext): Promise<LipsRenderResult>;
  /**
   * The engine's per-frame work for chunked rendering: what drives each frame (`frameKey`, part
   * of the chunk keys) and the frame operation itself. `identity` names the engine, its model and
   * settings.
   */
  prepare?(video: VideoInfo, speech: DubbedSpeech, faces: FaceTrack, opts: LipsRenderOptions, ctx: LipsContext): Promise<PreparedLips>;
}
