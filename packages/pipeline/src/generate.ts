/**
 * generate-version: a prepared (and possibly edited) version becomes the dubbed video and the
 * dubbed audio track. The job is the list GENERATE_STAGES below, run by runStages
 * (pipeline-stage.ts) over one state (generate-stages/state.ts); each stage lives in
 * generate-stages/<name>.ts; the options are resolved once (generate-options.ts).
 *
 *   script + transcript -> voices (library voice, or each speaker's matched voice, anonymized;
 *      a segment whose speaker has no voice fails the job naming the segment)
 *   -> per segment: the line at speed 1 (`utterance`, keyed by text and voice: its natural length)
 *   -> placement of every line (generate-placement.ts: by turns, a speaker's lines less than
 *      0.3 s apart sharing the turn's time and the silence after it; a shorter translation where
 *      the engine takes a length budget or gives an n-best, past the cap, then delaying the next
 *      line; never two lines at once unless the source overlapped)
 *   -> per segment: synthesis fitted to its placed time (one artifact per segment, keyed by text,
 *      voice and time, so editing one line re-synthesizes only that line and what it moves)
 *   -> speech timeline (exact sample offsets) -> mix: replace (separated background) or
 *      voice-over (ducked original, delayed speech), loudness-normalised
 *   -> dubbed track (m4a, AAC) + mux with the source video (video stream copied)
 *   -> quality report (generate-quality-stage.ts: the stage; generate-quality.ts: the measurements;
 *      generate-quality-report.ts: the report): per line placement, loudness, back-transcription
 *      WER, speaker similarity; loudness and durations of the outputs, stage times, speakers
 *   -> result blobs and report.json under the generation number -> target word timings in the
 *      script -> event version_generated (with the report's key and counts).
 *
 * The steps up to the fitted lines are generate-synthesis.ts (`synthesizeLines`), which the
 * one-line re-dub (redub.ts) runs too, so both write and read the same cache entries.
 *
 * with_lips adds the lips stage (generate-lips.ts) after the mix: the source video's mouth region
 * is re-rendered to follow the dubbed speech (re-encoded video), and that video is muxed with the
 * dubbed track instead of the source's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { ValidationError, type GenerateVersionJob, type JobRuntime, type QualityReport } from '@dub/core';
import { ArtifactCache } from './artifacts.js';
import { StageRunner } from './stage-runner.js';
import { markGenerationRunning, type RedubCollection } from './redub-state.js';
import { resolveGenerateOptions, type GenerateVersionOptions } from './generate-options.js';
import { resolveGenerateJob } from './generate-job.js';
import { runStages, stageWeights } from './pipeline-stage.js';
import type { GenerateHeld, GenerateStage, GenerateState } from './generate-stages/state.js';
import { synthesisStage } from './generate-stages/synthesis.js';
import { timelineStage } from './generate-stages/timeline.js';
import { releaseTtsStage } from './generate-stages/release-tts.js';
import { qualityPlanStage, qualityStage } from './generate-stages/quality.js';
import { backgroundStage } from './generate-stages/background.js';
import { mixStage } from './generate-stages/mix.js';
import { audioStage } from './generate-stages/audio.js';
import { lipsStage } from './generate-stages/lips.js';
import { videoStage } from './generate-stages/video.js';
import { publishStage } from './generate-stages/publish.js';
import { reportStage } from './generate-stages/report.js';
import { redubStateStage } from './generate-stages/redub-state.js';
import { eventStage } from './generate-stages/event.js';

export type { GenerateVersionOptions };
export { GAIN_TOLERANCE_DB } from './generate-stages/mix.js';

export interface GenerateVersionResult {
  resultVideoKey: string;
  resultAudioKey: string;
  duration: number;
  /** Segments whose line runs past its slot (overflow in the report). */
  overlongSegments: string[];
  reportKey: string;
  report: QualityReport;
  /** What this generation's collection of re-dub state removed and kept (redub-state.ts); absent when it failed. */
  collected?: RedubCollection;
}

/**
 * A generation, in order (each stage in generate-stages/<name>.ts: its name, progress weight,
 * the state it reads and its run). Progress shares (rough CPU cost): source 0.3, voices 1,
 * synthesis 6, timeline 0.5, background 4, mix 2, audio 0.5, [faces 3, lips 9,] video 1,
 * quality 2, publish 0.2; the plan, report, re-dub state and event have none.
 */
export const GENERATE_STAGES: readonly GenerateStage[] = [
  synthesisStage, // source, voices, synthesis: every line at speed 1, placed, fitted (generate-synthesis.ts)
  timelineStage, // the speech timeline
  releaseTtsStage, // DUB_KEEP_MODELS=0 (`dub run`): the TTS engine and its sessions released
  qualityPlanStage, // the quality measurements' engines and references
  backgroundStage, // replace: the separated background
  mixStage, // replace or voice-over, loudness-normalised; a re-dub updates the previous mix
  audioStage, // the dubbed track (AAC chunks); the lines' quality measurements start beside it
  lipsStage, // with_lips: faces, then the mouth re-rendered
  videoStage, // the mux; the dubbed track's loudness measured beside it
  qualityStage, // the measurements joined
  publishStage, // results under the generation number, word timings in the script
  reportStage, // report.json
  redubStateStage, // what the next generation updates from; collection
  eventStage, // version_generated
];

export async function generateVersion(job: GenerateVersionJob, rt: JobRuntime, given: GenerateVersionOptions = {}): Promise<GenerateVersionResult> {
  // the job's ids, keys, locale and options, resolved once: the stages read `resolved`, not the job
  const resolved = resolveGenerateJob(job);
  if (!resolved.target?.target) throw new ValidationError(`"${resolved.locale}" is not a supported target locale`, { field: 'locale' });
  const opts = resolveGenerateOptions(given);
  const work = await mkdtemp(path.join(rt.config.tmpDir, 'dub-generate-'));
  const cache = new ArtifactCache(rt.store, resolved.assetId, { tmpDir: work });
  const { withLips, voiceOver } = resolved;
  // the stages' `when`s read the job's mode only
  const weights = stageWeights(GENERATE_STAGES, { withLips } as GenerateState);
  const runner = new StageRunner(rt, cache, { type: 'generate-version', version_id: resolved.versionId }, { weights });
  // what the teardown releases when a stage fails: the TTS engine, the lines' measurements running beside the encode
  const held: GenerateHeld = {};
  const earlyLines = new AbortController();
  // while this generation runs, another one of the asset collects no chunk blobs (redub-state.ts)
  let running: (() => Promise<void>) | undefined;
  try {
    running = await markGenerationRunning(rt.store, resolved.assetId, resolved.versionId, resolved.generation);
    const local = (key: string): Promise<string> => localPath(rt, key, work);
    const done = await runStages(GENERATE_STAGES, { job: resolved, rt, runner, cache, media: { config: rt.config }, work, local, opts, voiceOver, withLips, earlyLines, held });
    const report = done.report!;
    const overlongSegments = report.segments.filter((s) => s.flags.includes('overflow')).map((s) => s.id);
    return { resultVideoKey: done.resultVideoKey!, resultAudioKey: done.resultAudioKey!, duration: done.synth!.duration, overlongSegments, reportKey: done.reportKey!, report, ...(done.collected ? { collected: done.collected } : {}) };
  } finally {
    earlyLines.abort();
    await held.linesMeasured?.catch(() => undefined);
    await running?.().catch((e) => rt.ctx.logger.warn({ err: e }, 'could not remove the running mark of the generation'));
    await held.synth?.dispose();
    await rm(work, { recursive: true, force: true });
  }
}

/** A local file for a blob: the store's own file when it is a filesystem, else a copy in `work`. */
async function localPath(rt: JobRuntime, key: string, work: string): Promise<string> {
  const direct = rt.store.localPath(key);
  if (direct) return direct;
  const file = path.join(work, 'blobs', key.replace(/\//g, '__'));
  await rt.store.getToFile(key, file);
  return file;
}
