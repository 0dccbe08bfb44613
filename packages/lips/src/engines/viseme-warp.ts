/**
 * `viseme-warp`: a classical (non-neural) lips engine. The dubbed speech's loudness per frame
 * (and, when the words are known, their espeak-ng phonemes) gives a mouth openness; each frame's
 * lower lip and jaw are displaced to that openness and the gap darkened (see mouth-warp.ts). Where
 * the dub is silent and the source speaker talks, the mouth is closed; where both are silent the
 * frame is left as it is. No weights, runs anywhere.
 */
import { resolveContext } from '@dub/core';
import { applyVisemes, mouthTargets, opennessFromLevels, type OpennessOptions } from '../audio/openness.js';
import { phonemizeWords, visemeWeights } from '../audio/phonemes.js';
import { frameLevels, speechWav } from '../audio/speech-envelope.js';
import type { VideoInfo } from '../video/video-info.js';
import type { DubbedSpeech, FaceTrack, LipsContext, LipsEngine, LipsRenderOptions, LipsRenderResult, PreparedLips } from '../types.js';
import { transformFrames } from './frame-loop.js';
import { warpMouth, warpMouthYuv, type YuvImage } from './mouth-warp.js';
import type { FaceFrame } from '../face/mouth-region.js';

export interface VisemeWarpOptions {
  openness?: OpennessOptions;
  /** Use espeak-ng phonemes of the words when given (default true). */
  visemes?: boolean;
  espeakPath?: string;
}

/** Seconds on each side of a frame over which the speech level that sets its gate is taken. */
export const LOCAL_LEVEL_SECONDS = 5;

/** Per-frame open (> 0) / close (< 0) amounts for a dubbed speech track. */
export async function mouthAmounts(video: VideoInfo, speech: DubbedSpeech, frameCount: number, opts: VisemeWarpOptions & { tmpDir: string; media: LipsRenderOptions['media'] }, ctx: LipsContext): Promise<Float32Array> {
  const dubWav = await speechWav(speech.file, opts.tmpDir, 'dub', opts.media, ctx);
  // The speech level is taken over 5 s around each frame: an edited line changes the frames near it only.
  const openness = { refWindow: Math.round(video.fps * LOCAL_LEVEL_SECONDS), ...opts.openness };
  let dub = opennessFromLevels(await frameLevels(dubWav, video.fps, frameCount, undefined, video.frameTimes), openness);
  if (speech.words?.length && speech.locale && opts.visemes !== false) {
    const phonemes = await phonemizeWords(speech.words.map((w) => w.text), speech.locale, opts.espeakPath ? { espeakPath: opts.espeakPath } : {}, ctx);
    dub = applyVisemes(dub, visemeWeights(speech.words, phonemes, video.fps, frameCount, video.frameTimes));
  }
  let source: Float32Array | undefined;
  if (speech.sourceSpeech) {
    const srcWav = await speechWav(speech.sourceSpeech, opts.tmpDir, 'source', opts.media, ctx);
    source = opennessFromLevels(await frameLevels(srcWav, video.fps, frameCount, undefined, video.frameTimes), openness);
  }
  return mouthTargets(dub, source);
}

export class VisemeWarpEngine implements LipsEngine {
  readonly id = 'viseme-warp';
  readonly label = 'viseme warp';
  constructor(private readonly opts: VisemeWarpOptions = {}) {}

  async render(video: VideoInfo, speech: DubbedSpeech, faces: FaceTrack, output: string, opts: LipsRenderOptions, context: LipsContext): Promise<LipsRenderResult> {
    const ctx = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
    const amounts = await mouthAmounts(video, speech, faces.frameCount, { ...this.opts, tmpDir: opts.tmpDir, media: opts.media }, ctx);
    const at = (i: number): number => amounts[Math.min(i, amounts.length - 1)] ?? 0;
    // at full resolution the frames stay yuv420p from decoder to encoder (warpMouthYuv)
    return transformFrames(video, faces, output, opts, (frame, face, i) => warpMouth(frame, face, at(i), opts.workScale), ctx, opts.workScale >= 1 ? (frame, face, i) => warpMouthYuv(frame, face, at(i)) : undefined);
  }

  async prepare(video: VideoInfo, speech: DubbedSpeech, faces: FaceTrack, opts: LipsRenderOptions, context: LipsContext): Promise<PreparedLips> {
    const ctx = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
    const amounts = await mouthAmounts(video, speech, faces.frameCount, { ...this.opts, tmpDir: opts.tmpDir, media: opts.media }, ctx);
    const at = (i: number): number => amounts[Math.min(i, amounts.length - 1)] ?? 0;
    return {
      identity: JSON.stringify({ engine: this.id, openness: this.opts.openness ?? null, visemes: this.opts.visemes ?? true }),
      frameKey: (i) => String(at(i)),
      op: (frame, face, i) => warpMouth(frame, face, at(i), opts.workScale),
      ...(opts.workScale >= 1 ? { opYuv: (frame: YuvImage, face: FaceFrame, i: number) => warpMouthYuv(frame, face, at(i)) } : {}),
      close: async () => undefined,
    };
  }

  async dispose(): Promise<void> {
    /* nothing held */
  }
}

export function createVisemeWarpEngine(opts: VisemeWarpOptions = {}): Promise<LipsEngine> {
  return Promise.resolve(new VisemeWarpEngine(opts));
}
