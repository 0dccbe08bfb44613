/**
 * lipSync: a video and the dubbed speech in, a video whose mouth region follows the dubbed speech
 * out. Faces are tracked first (BlazeFace on every Nth frame, smoothed), then the chosen engine
 * re-renders the mouth frame by frame into a re-encoded, video-only file of the same size, frame
 * rate and frame count, then given the source's frame times (`retimeLike`: a picture that starts
 * late or runs at a variable rate keeps every frame where it was); given audio tracks are muxed in
 * last (video stream copied).
 */
import { mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveContext, subContext } from '@dub/core';
import { mux, retimeLike, type MuxAudioTrack } from '@dub/media';
import { BlazeFaceDetector } from './face/blazeface.js';
import { trackFaces } from './face/face-track.js';
import { LIPS_ENGINES, lipsEngineHost } from './registry.js';
import { detectStride, resolveLipsOptions, type LipsEngineId, type LipsOptions, type ResolvedLipsOptions } from './options.js';
import { videoInfo } from './video/video-info.js';
import { speechFromPictureStart } from './audio/picture-start.js';
import type { DubbedSpeech, FaceTrack, LipsContext, LipsRenderResult } from './types.js';
import { renderChunked, type ChunkedRenderResult, type LipsChunkStore } from './engines/chunked.js';

export interface LipSyncRequest {
  video: string;
  speech: DubbedSpeech;
  output: string;
  /** Audio tracks muxed into the output; none: a video-only file. */
  audio?: MuxAudioTrack[];
  /** The video's face track when already known (detectFaces of the same video and options): tracking is skipped. */
  faces?: FaceTrack;
  /**
   * Render in independently encoded chunks kept in `store` (see engines/chunked.ts): chunks whose
   * inputs did not change since an earlier run are reused. `identity` names the source video.
   */
  chunks?: { store: LipsChunkStore; identity: string; chunkFrames?: number };
}

export interface LipSyncResult {
  file: string;
  engine: LipsEngineId;
  model: ResolvedLipsOptions['model'];
  frames: number;
  changedFrames: number;
  facesFound: number;
  detectedFrames: number;
  /** Chunked rendering: chunks in all, chunks rendered in this run, and the frame spans rendered. */
  chunks?: { total: number; rendered: number; spans: { start: number; end: number }[] };
  /** Face detection time per analysed frame, ms. */
  detectionMsPerFrame: number;
  /** Seconds: face tracking, rendering (decode + engine + encode), in total. */
  trackSeconds: number;
  renderSeconds: number;
  seconds: number;
}

/** Track the main face of every frame of `video`. */
export async function detectFaces(video: string, options: LipsOptions = {}, context: Partial<LipsContext> = {}): Promise<FaceTrack> {
  const o = resolveLipsOptions(options);
  const ctx = { ...resolveContext(context), ...(context.withLimit ? { withLimit: context.withLimit } : {}) };
  const info = await videoInfo(video, o.media, ctx);
  return withDetectors(o, async (detector, trackingDetector) => trackFaces(info, { ...o.media, detector, trackingDetector, detectEvery: detectStride(o, info.fps), analysisMaxSide: o.analysisMaxSide, smoothing: o.smoothing }, ctx));
}

async function withDetectors<T>(o: ResolvedLipsOptions, fn: (full: BlazeFaceDetector, tracking: BlazeFaceDetector) => Promise<T>): Promise<T> {
  const common = { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), searchDirs: o.searchDirs, ...(o.sessions ? { sessions: o.sessions } : {}), device: o.device, threads: o.threads, minScore: o.minFaceScore };
  const full = await BlazeFaceDetector.load({ ...common, range: 'full', ...(o.detectorModels.full ? { modelPath: o.detectorModels.full } : {}) });
  let tracking = full;
  try {
    if (o.trackingRange !== 'full') tracking = await BlazeFaceDetector.load({ ...common, range: o.trackingRange, ...(o.detectorModels[o.trackingRange] ? { modelPath: o.detectorModels[o.trackingRange] } : {}) });
    return await fn(full, tracking);
  } finally {
    await full.dispose();
    if (tracking !== full) await tracking.dispose();
  }
}

export async function lipSync(req: LipSyncRequest, options: LipsOptions = {}, context: Partial<LipsContext> = {}): Promise<LipSyncResult> {
  const t0 = performance.now();
  const o = resolveLipsOptions(options);
  const base = resolveContext(context);
  const withLimit = context.withLimit;
  const ctx = { ...base, ...(withLimit ? { withLimit } : {}) };
  const info = await videoInfo(req.video, o.media, ctx);
  const work = await mkdtemp(path.join(o.tmpDir ?? os.tmpdir(), 'dub-lips-'));
  try {
    const trackCtx = { ...subContext(base, 'face_detection', 0, 0.25), ...(withLimit ? { withLimit } : {}) };
    const faces =
      req.faces ??
      (await withDetectors(o, (detector, trackingDetector) =>
        trackFaces(info, { ...o.media, detector, trackingDetector, detectEvery: detectStride(o, info.fps), analysisMaxSide: o.analysisMaxSide, smoothing: o.smoothing }, trackCtx),
      ));
    const t1 = performance.now();
    // the speech heard with each frame: from the picture's first frame on the timeline
    const { speech, offset } = await speechFromPictureStart(req.video, req.speech, work, o.media, base);
    if (offset > 0) base.logger.debug({ offset }, 'lips: the picture starts later than the speech timeline; speech and words taken from its start');
    const chosen = await LIPS_ENGINES.resolve(o.engine, speech.locale, lipsEngineHost(o));
    base.logger.info({ lips_model: o.model, engine: chosen.id, reason: chosen.reason, ...(chosen.models[0] ? { model: chosen.models[0].file } : {}) }, `lips: ${chosen.id}`);
    const engine = await LIPS_ENGINES.create(chosen.id, { wav2lip: o.wav2lip, musetalk: o.musetalk, 'viseme-warp': o.visemeWarp }, lipsEngineHost(o));
    const silent = path.join(work, 'lips.mp4');
    let rendered: LipsRenderResult;
    let chunked: ChunkedRenderResult | undefined;
    try {
      const renderCtx = { ...subContext(base, 'lips', 0.25, req.audio?.length ? 0.97 : 1), ...(withLimit ? { withLimit } : {}) };
      const renderOpts = { workScale: o.workScale, encode: o.encode, tmpDir: work, media: o.media };
      if (req.chunks && engine.prepare) {
        const prepared = await engine.prepare(info, speech, faces, renderOpts, renderCtx);
        try {
          chunked = await renderChunked(info, faces, prepared, silent, { ...renderOpts, store: req.chunks.store, identity: req.chunks.identity, ...(req.chunks.chunkFrames ? { chunkFrames: req.chunks.chunkFrames } : {}) }, renderCtx);
          rendered = chunked;
        } finally {
          await prepared.close();
        }
      } else {
        rendered = await engine.render(info, speech, faces, silent, renderOpts, renderCtx);
      }
    } finally {
      await engine.dispose();
    }
    // the encoder wrote constant-rate frames from 0: each frame gets its source frame's time
    const timed = path.join(work, 'lips-timed.mp4');
    const retimed = await retimeLike(silent, req.video, timed, o.media, base);
    base.logger.debug({ mode: retimed.mode, pieces: retimed.pieces, maxErrorSec: retimed.maxErrorSec }, 'lips: source frame times');
    const t2 = performance.now();
    if (req.audio?.length) await mux({ ...o.media, video: timed, audioTracks: req.audio, output: req.output, copyVideo: true }, subContext(base, 'mux', 0.97, 1));
    else await rename(timed, req.output).catch(async () => {
      const { copyFile } = await import('node:fs/promises');
      await copyFile(timed, req.output);
    });
    base.logger.info({ engine: chosen.id, lips_model: o.model, frames: rendered.frames, changed: rendered.changedFrames, faces: faces.facesFound, detected: faces.detectedFrames }, 'lips done');
    return {
      file: req.output,
      engine: chosen.id as LipsEngineId,
      model: o.model,
      frames: rendered.frames,
      changedFrames: rendered.changedFrames,
      facesFound: faces.facesFound,
      detectedFrames: faces.detectedFrames,
      ...(chunked ? { chunks: { total: chunked.chunks, rendered: chunked.renderedChunks, spans: chunked.renderedSpans } } : {}),
      detectionMsPerFrame: faces.detectedFrames ? faces.detectionMs / faces.detectedFrames : 0,
      trackSeconds: (t1 - t0) / 1000,
      renderSeconds: (t2 - t1) / 1000,
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
