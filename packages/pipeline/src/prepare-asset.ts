/**
 * prepare-asset: the source video becomes a transcript the versions translate.
 *
 * The preparation is the list of stages below (PREPARE_STAGES), each in its own module under
 * prepare-stages/ (its name in progress and `stage_done` events, its progress weight, the state
 * it reads, its `run`), run in order by `runStages` over one state; prepareAsset sets up the job
 * (options resolved once, work directory, cache, stage runner), then sends the event
 * asset_prepared and enqueues one prepare-version job per version.
 *
 * Every step runs through the ArtifactCache keyed by its inputs (which include the keys of the
 * artifacts it reads), so a redelivered job skips what is finished (`stage_done` with
 * `cached: true`) and a changed input (another trim window, a new source_srt) re-runs only
 * what depends on it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { JobRuntime, PrepareAssetJob, PrepareVersionJob, Transcript } from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { ArtifactCache } from './artifacts.js';
import { LocalFiles } from './local-files.js';
import { runStages, stageWeights, type PipelineStage } from './pipeline-stage.js';
import { StageRunner } from './stage-runner.js';
import { defaultStages } from './stages.js';
import { audio } from './prepare-stages/audio.js';
import { fetchMedia } from './prepare-stages/fetch-media.js';
import { fetchBackground, fetchSpeech } from './prepare-stages/given-tracks.js';
import { resolvePrepareOptions, type PrepareAssetOptions } from './prepare-stages/options.js';
import { probe } from './prepare-stages/probe.js';
import { separation } from './prepare-stages/separation.js';
import { separationPlan } from './prepare-stages/separation-plan.js';
import { speakers } from './prepare-stages/speakers.js';
import { BesideWork, type PrepareContext, type PrepareState, type SourceVideo } from './prepare-stages/state.js';
import { thumbnail } from './prepare-stages/thumbnail.js';
import { transcript } from './prepare-stages/transcript.js';
import { transcription } from './prepare-stages/transcription.js';
import { trim } from './prepare-stages/trim.js';
import { vad } from './prepare-stages/vad.js';

export type { PrepareAssetOptions } from './prepare-stages/options.js';
export { providerOf } from './prepare-stages/state.js';
export { planFor } from './prepare-stages/separation-plan.js';
export { whisperLanguageNotes } from './prepare-stages/records.js';

export interface PrepareAssetResult {
  duration: number;
  sourceVideoKey: string;
  thumbnailKey: string | undefined;
  transcriptKey: string;
  transcript: Transcript;
  versionJobs: PrepareVersionJob[];
}

/** The preparation, in order. */
export const PREPARE_STAGES: readonly PipelineStage<PrepareState>[] = [
  fetchMedia, //      the source media: a blob, or a URL fetched (size- and time-limited)
  probe, //           probe + classify, the trim window, the duration limit
  trim, //            the source video blob      } started here, made beside the audio stages
  thumbnail, //       the thumbnail blob         } below; awaited by `transcript`
  audio, //           the mix of the window, 44.1 kHz stereo
  fetchSpeech, //     the clean tracks given with the asset, if any
  fetchBackground,
  separationPlan, //  VAD and separation engines; background measured outside the mix's speech
  separation, //      speech and background tracks: the model where the plan says, or the given tracks
  vad, //             speech regions of the speech track
  transcription, //   ASR (or the source_srt)
  speakers, //        speaker turns and reference clips
  transcript, //      engine records, transcript blob
];

/**
 * The StageRunner's progress shares: each stage's weight (no prepare stage has a `when`: every
 * share counts whatever the job), laid out as they always were, the URL fetches first (a given
 * track's fetch runs after the audio: its progress is below what the job reached and is not
 * passed on).
 */
export const PREPARE_WEIGHTS: Readonly<Record<string, number>> = (() => {
  const w = stageWeights(PREPARE_STAGES, {} as PrepareState);
  return { 'fetch-media': w['fetch-media']!, 'fetch-background': w['fetch-background']!, 'fetch-speech': w['fetch-speech']!, ...w };
})();

/** The deterministic job id of a version's prepare job (a redelivery enqueues the same id). */
export function prepareVersionJobId(versionId: string): string {
  return `${versionId}-prepare`;
}

export async function prepareAsset(job: PrepareAssetJob, rt: JobRuntime, opts: PrepareAssetOptions = {}): Promise<PrepareAssetResult> {
  const options = resolvePrepareOptions(job, opts);
  const work = await mkdtemp(path.join(rt.config.tmpDir, 'dub-prepare-'));
  const beside = new BesideWork();
  try {
    const prep: PrepareContext = {
      job,
      rt,
      stages: { ...defaultStages, ...opts.stages },
      env: { config: rt.config, sessions: sessionCacheOf(rt.sessions), tmpDir: work },
      runner: new StageRunner(rt, new ArtifactCache(rt.store, job.asset_id, { tmpDir: work }), { type: 'prepare-asset' }, { weights: PREPARE_WEIGHTS }),
      files: new LocalFiles(rt.store, work),
      options,
      beside,
    };
    const done = await runStages(PREPARE_STAGES, { prep });
    const { sourceVideoKey, thumbnailKey }: SourceVideo = done.source!;
    const transcriptKey = done.transcriptKey!;
    const prepared = done.transcript!;

    await rt.emit({
      type: 'asset_prepared',
      duration: prepared.duration,
      source_video_key: sourceVideoKey,
      ...(thumbnailKey ? { thumbnail_key: thumbnailKey } : {}),
      transcript_key: transcriptKey,
    });
    const versionJobs: PrepareVersionJob[] = job.versions.map((version) => ({
      v: 1,
      type: 'prepare-version',
      job_id: prepareVersionJobId(version.version_id),
      asset_id: job.asset_id,
      ...(job.org_id !== undefined ? { org_id: job.org_id } : {}),
      source_locale: job.locale,
      version,
    }));
    for (const v of versionJobs) await rt.enqueue(v);
    return { duration: prepared.duration, sourceVideoKey, thumbnailKey, transcriptKey, transcript: prepared, versionJobs };
  } catch (e) {
    // The trim ran first before the two overlapped: its failure is the one reported.
    const failed = await beside.failure();
    throw failed ? failed.error : e;
  } finally {
    // Nothing of the job still writes into its work directory.
    await beside.failure();
    await rm(work, { recursive: true, force: true });
  }
}
