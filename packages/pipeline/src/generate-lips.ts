/**
 * The lips stage of generate-version (with_lips): the source video's mouth region is re-rendered
 * to follow the dubbed speech (the speech timeline alone, not the mix), as a cached stage whose
 * output is a re-encoded, video-only `lips.mp4`. The words' target timings drive viseme shaping;
 * the separated source speech (prepare-asset's separation output), when the asset has one, tells
 * where the source speaker talks (the mouth is closed there when the dub is silent).
 * `options.lips_model` of the job picks real_face or real_face_turbo.
 */
import path from 'node:path';
import { engineLabel, type JobRuntime, type StageContext } from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { detectFaces, LIPS_ENGINES, lipsEngineHost, lipSync, resolveLipsOptions, type FaceTrack, type LipsEngineId, type LipsChunkStore, type LipsOptions, type TimedWord } from '@dub/lips';
import { resolveEngine } from './engine-choice.js';
import type { MediaToolOptions } from '@dub/media';
import { inputsHash, keyedFiles } from './artifacts.js';
import type { StageRunner } from './stage-runner.js';
import type { ResolvedGenerateJob } from './generate-job.js';

/** Bump when the lips output changes for the same inputs. */
// 3: the lips video keeps the source's frame times (retimeLike); 4: its speech drive starts with the picture;
// 5: a variable frame rate drives each frame by the speech at its own time; 6: viseme-warp on yuv420p frames
const LIPS_STAGE_VERSION = 6;

/**
 * The lips video's chunks as blobs of the asset (`lips-chunk/<key>/chunk.mp4`): a chunk is keyed
 * by everything that decides its pixels, so a later generate reuses every chunk whose frames are
 * driven by unchanged speech (see @dub/lips renderChunked).
 */
function chunkStore(rt: JobRuntime, assetId: string, local: (key: string) => Promise<string>, used: Set<string>): LipsChunkStore {
  const files = keyedFiles(rt.store, assetId, 'lips-chunk', 'chunk.mp4', local);
  // every key the render asks for or stores is a chunk of this lips video (the re-dub state names them: redub-state.ts)
  return {
    get: (k) => (used.add(k), files.get(k)),
    put: (k, file) => (used.add(k), files.put(k, file)),
  };
}

export interface LipsStageInput {
  /** What the stage reads of the job: the asset (the chunks' blobs), the target locale and options.lips_model. */
  job: Pick<ResolvedGenerateJob, 'assetId' | 'locale' | 'lipsModel'>;
  /** Source video blob and its identity (key, size, ...) for the cache key. */
  sourceKey: string;
  sourceIdentity: unknown;
  /** The dubbed speech timeline (speech.wav blob). */
  speechKey: string;
  /** The source's separated speech (the transcript's tracks.speech), when known. */
  sourceSpeechKey?: string;
  /** Target words placed in the video's time. */
  words: TimedWord[];
  media: MediaToolOptions;
  local: (key: string) => Promise<string>;
  /** Extra lips options (tests, hosts): engine, model files, encoding. */
  options?: LipsOptions;
}

export interface LipsStageResult {
  /** Blob key of the lips video (video only). */
  videoKey: string;
  /** The engine that rendered it, and its model file where it has one. */
  engine: string;
  /** The record's label of that engine ("Wav2Lip GAN 96", "viseme warp"). */
  label: string;
  modelFile: string | null;
  /** ONNX execution provider of the Wav2Lip model, where it ran one. */
  provider?: 'cpu' | 'cuda';
  cached: boolean;
  /** The engine the registry chose (the rendered one unless the render fell back). */
  chosen: string;
  /** Why that engine (the registry's reason; under the model policy "commercial" it names what auto passed over). */
  reason: string;
  /** Installed engines auto passed over under the model policy "commercial". */
  passedOver?: string[];
  /** Keys of the lips chunk blobs the video is made of (undefined: a lips output stored before they were recorded). */
  chunkKeys?: string[];
}

export async function runLipsStage(rt: JobRuntime, runner: StageRunner, input: LipsStageInput): Promise<LipsStageResult> {
  const model = input.job.lipsModel;
  const sourceSpeechKey = input.sourceSpeechKey;
  const extra = input.options ?? {};
  const where = { ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}) };
  // The engine is chosen before the cache is consulted, and its model file (path, size, time) is
  // part of the key: installing or replacing the Wav2Lip model re-renders, it never serves the
  // classical engine's video again. An explicit engine whose model is missing fails here.
  // the worker's device: auto chooses MuseTalk only where it runs on CUDA
  const lo = resolveLipsOptions({ device: rt.config.device, ...extra, ...where, model });
  const chosen = await resolveEngine('lips', lo.engine, input.job.locale, lipsEngineHost(lo));
  const engine = chosen.id as LipsEngineId;
  const modelId = chosen.models[0];
  const modelFile = modelId?.file ?? null;
  const inputs = {
    v: LIPS_STAGE_VERSION,
    source: input.sourceIdentity,
    speech: input.speechKey,
    sourceSpeech: sourceSpeechKey ?? null,
    model,
    words: inputsHash(input.words),
    engine,
    engineModel: modelId ? { model: modelId.model, sha256: modelId.sha256 } : null,
  };
  // The face track depends on the source video and the profile only: tracked once, reused by every generate.
  // v2: key frames on a stride in seconds, refined where the face moves (face-track.ts)
  const resolved = resolveLipsOptions({ ...extra, ...where, model });
  const faces = await runner.run<FaceTrack>(
    'faces',
    { v: 2, source: input.sourceIdentity, model, detectSeconds: resolved.detectSeconds, detectEvery: resolved.detectEvery ?? null, analysisMaxSide: resolved.analysisMaxSide, trackingRange: resolved.trackingRange, minFaceScore: resolved.minFaceScore, smoothing: resolved.smoothing },
    async (_out, ctx: StageContext) =>
      detectFaces(await input.local(input.sourceKey), { ...extra, ...where, model, sessions: sessionCacheOf(rt.sessions), device: rt.config.device, media: input.media }, { ...ctx, ...(rt.withLimit ? { withLimit: <T>(name: string, fn: () => Promise<T>) => rt.withLimit!(name, fn) } : {}) }),
  );
  const r = await runner.run('lips', { ...inputs, faces: faces.key }, async (out, ctx: StageContext) => {
    const file = path.join(out.dir, 'lips.mp4');
    const used = new Set<string>();
    const result = await lipSync(
      {
        video: await input.local(input.sourceKey),
        speech: {
          file: await input.local(input.speechKey),
          words: input.words,
          locale: input.job.locale,
          ...(sourceSpeechKey ? { sourceSpeech: await input.local(sourceSpeechKey) } : {}),
        },
        output: file,
        faces: faces.value,
        chunks: { store: chunkStore(rt, input.job.assetId, input.local, used), identity: JSON.stringify({ source: input.sourceIdentity, model, engine, engineModel: inputs.engineModel }) },
      },
      {
        ...extra,
        engine,
        model,
        sessions: sessionCacheOf(rt.sessions),
        device: rt.config.device,
        ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}),
        media: input.media,
        tmpDir: out.dir,
      },
      { ...ctx, ...(rt.withLimit ? { withLimit: <T>(name: string, fn: () => Promise<T>) => rt.withLimit!(name, fn) } : {}) },
    );
    out.addFile('lips.mp4', file);
    const provider = modelFile ? (rt.sessions.providers.get(modelFile) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined)) : undefined;
    return { engine: result.engine, frames: result.frames, changedFrames: result.changedFrames, facesFound: result.facesFound, ...(provider ? { provider } : {}), ...(result.chunks ? { chunks: result.chunks } : {}), chunkKeys: [...used].sort() };
  });
  const { provider, chunkKeys } = r.value as { provider?: 'cpu' | 'cuda'; chunkKeys?: string[] };
  return { videoKey: r.files['lips.mp4']!, engine: r.value.engine, label: engineLabel(LIPS_ENGINES.get(r.value.engine), modelFile ? [modelFile] : []), modelFile, ...(provider ? { provider } : {}), cached: r.cached, chosen: chosen.id, reason: chosen.reason, ...(chosen.record.passed_over ? { passedOver: chosen.record.passed_over } : {}), ...(chunkKeys ? { chunkKeys } : {}) };
}
