/**
 * The quality stage of a generation (generate.ts): what it measures with (planQuality: the
 * back-transcription and speaker engines, the references, the lines' cache), the lines'
 * measurements started with the plan, beside the mix, encode and mux (startQualityLines), and the cached stage that
 * joins them with the outputs' measurements (qualityStage). The measurements are generate-quality.ts.
 */
import os from 'node:os';
import {
  reportProgress,
  type JobRuntime,
  type Speaker,
  type StageContext,
  type Transcript,
  type VersionScript,
} from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import type { MediaToolOptions } from '@dub/media';
import { ArtifactCache, type StageResult } from './artifacts.js';
import type { StageRunner } from './stage-runner.js';
import { artifactLineCache, measureQuality, measureQualityLines, noBackTranscriberReason, type BackTranscriber, type MeasuredLines, type LineSynthesis, type QualityEnv, type QualityLine, type QualityLinesInput, type QualityMeasurements, type QualityMeasureInput } from './generate-quality.js';
import { timelineSampleRate } from './generate-timeline.js';
import type { MixState } from './redub-state.js';
import { round6, type PlacedSegment, type SegmentArtifact } from './generate-synthesis.js';
import { asrEngineIdentity, speakerEngineOf } from './engine-choice.js';
import type { ResolvedGenerateOptions } from './generate-options.js';
import type { ResolvedGenerateJob } from './generate-job.js';

/** How a replace mix was made against the previous generation's: updated near the changed speech (frames computed again), or why not. */
export type MixUpdate = { used: true; from_generation: number; frames: number; spans: [number, number][]; sampleRate: number } | { used: false; reason: string };

/** The quality stage's own version (its measurements). */
const QUALITY_VERSION = 2;

export interface QualityStageInput {
  /** What the plan reads of the job: the asset (the lines' cache), the target locale and the voice options. */
  job: Pick<ResolvedGenerateJob, 'assetId' | 'locale' | 'voiceLibraryId' | 'anonymization'>;
  script: VersionScript;
  transcript: Transcript;
  /** The speakers with their voice choices (speakersOf). */
  speakers: readonly Speaker[];
  segments: readonly PlacedSegment[];
  speechKey: string;
  sourceKey: string;
  videoKey: string;
  audioKey: string;
  local: (key: string) => Promise<string>;
  /** The measurements' engines (back-transcription, speaker similarity). */
  engines: ResolvedGenerateOptions['quality'];
  media: MediaToolOptions;
  work: string;
  previousLoudness?: QualityMeasureInput['previousLoudness'];
  trackLoudness?: QualityMeasureInput['trackLoudness'];
}

/**
 * What the quality stage can keep of the previous generation's loudness measurement: its true
 * peaks per frame and K-weighted energies per hop, when this generation's mix was updated from that generation's (so the dubbed
 * track differs only in the AAC chunks that hold the updated spans: each span widened by two
 * chunks either side, which covers the chunks' encoding margins and the decoder's overlap).
 */
export function previousLoudness(state: MixState | undefined, update: MixUpdate | undefined, generation: number | undefined, chunkFrames: number): { previousLoudness: NonNullable<QualityStageInput['previousLoudness']> } | undefined {
  if (!state?.framePeaks || !state.audio || state.chunkFrames !== chunkFrames || !update?.used || update.from_generation !== generation) return undefined;
  const reach = (2 * chunkFrames) / update.sampleRate;
  return {
    previousLoudness: {
      framePeaks: state.framePeaks.map((p) => p ?? Number.NEGATIVE_INFINITY),
      ...(state.hopEnergies && state.hop ? { hopEnergies: state.hopEnergies, hop: state.hop } : {}),
      changed: update.spans.map(([a, b]) => ({ start: Math.max(0, a / update.sampleRate - reach), end: b / update.sampleRate + reach })),
    },
  };
}

/** What the quality stage measures with: the engines, the references and the lines' cache, decided once the lines are placed. */
export interface QualityPlan {
  asr: BackTranscriber;
  asrModel: unknown;
  speaker: Awaited<ReturnType<typeof speakerEngineOf>>;
  notApplicable: Record<string, string>;
  /** Speaker id -> blob key of the reference clip. */
  references: Record<string, string>;
  /** The lines' measurements' input (the timeline, the lines and the references as local files). */
  linesInput: (ctx: StageContext) => Promise<QualityLinesInput>;
  env: Omit<QualityEnv, 'media'>;
}

export async function planQuality(rt: JobRuntime, q: Pick<QualityStageInput, 'job' | 'transcript' | 'speakers' | 'segments' | 'speechKey' | 'local' | 'engines' | 'work'>): Promise<QualityPlan> {
  const modelsDir = rt.config.modelsDir;
  // Back-transcription: auto (the best engine installed here for the target locale) unless told.
  const asrChoice = q.engines.asr;
  let asr: BackTranscriber;
  let asrModel: unknown = null;
  try {
    const id = await asrEngineIdentity(q.job.locale, modelsDir, asrChoice);
    asrModel = id.models.length ? id.models.map((m) => [m.model, m.sha256]) : null;
    asr = id.id === 'none' ? { engine: null, reason: await noBackTranscriberReason(q.job.locale) } : { engine: id.id, model: asrModel };
  } catch (e) {
    asr = { engine: null, reason: `${asrChoice}: ${(e as Error).message.split('\n')[0]}` };
  }
  const speaker = await speakerEngineOf(q.engines.speaker, modelsDir);
  // Similarity to the speaker does not apply where the voice is meant to differ: a library voice or anonymization (the speaker's choice in the script, else the version's).
  const notApplicable: Record<string, string> = {};
  for (const sp of q.speakers) {
    const c = sp.voice;
    const library = c ? (c.source === 'library' ? c.library_voice_id : undefined) : q.job.voiceLibraryId;
    const anonymization = c?.source === 'anonymized' ? (c.anonymization ?? 1) : c?.source === 'speaker' ? 0 : q.job.anonymization;
    if (library !== undefined) notApplicable[sp.id] = `${sp.id} speaks with the library voice ${library}, not their own: similarity is not flagged`;
    else if (anonymization > 0) notApplicable[sp.id] = `${sp.id}'s voice is anonymized (${anonymization}): moved away from theirs on purpose, similarity is not flagged`;
  }
  const references = Object.fromEntries(q.transcript.speakers.filter((s) => s.reference_key).map((s) => [s.id, s.reference_key!]));
  // the timeline's sample rate, as the timeline stage chose it (a line's audio there depends on it)
  const voicedRates = q.segments.flatMap((s) => (s.result ? [s.result.value.sampleRate] : []));
  const lineCache = new ArtifactCache(rt.store, q.job.assetId, { tmpDir: q.work });
  const linesInput = async (ctx: StageContext): Promise<QualityLinesInput> => {
    const localRefs: Record<string, string> = {};
    for (const [id, key] of Object.entries(references)) localRefs[id] = await q.local(key);
    return {
      locale: q.job.locale,
      speechFile: await q.local(q.speechKey),
      lines: await Promise.all(qualityLines(q.segments, new Map()).map(async (l) => (l.fitted ? { ...l, fitted: { ...l.fitted, key: l.fitted.file, file: await q.local(l.fitted.file) } } : l))),
      references: localRefs,
      asr,
      similarity: { id: speaker.id, embedding: speaker.embedding, ...(speaker.models[0] ? { modelFile: speaker.models[0].file } : {}), model: speaker.models[0]?.sha256 ?? null, notApplicable },
      lineCache: { store: artifactLineCache(lineCache, ctx), referenceKeys: references, sampleRate: voicedRates.length ? timelineSampleRate(voicedRates, 0) : 0 },
    };
  };
  const env = { sessions: sessionCacheOf(rt.sessions), device: rt.config.device, threads: qualityThreads(rt.config), models: modelsDir ? { modelsDir } : {}, tmpDir: q.work };
  return { asr, asrModel, speaker, notApplicable, references, linesInput, env };
}

/**
 * The intra-op threads of the quality measurements' models (Whisper's back-transcription) where a
 * job releases its models when done (`DUB_KEEP_MODELS=0`, `dub run`'s default): the operator's
 * `DUB_ONNX_THREADS` when set, else half the cores. They run beside the mix, the encode and the
 * mux, each of which keeps a core busy: with as many threads as cores, onnxruntime's pool waits
 * at every operator for a thread the other stage holds (on 2 cores, an 8-minute dub's lines took
 * 44 s beside the encode against 26 s alone). Where models stay loaded across jobs (`dub serve`,
 * `dub worker`), the lines take the configured threads and so the source transcription's Whisper
 * session, rather than keep a second one loaded.
 */
export function linesThreads(configured: number, cores = os.availableParallelism()): number {
  return configured > 0 ? configured : Math.max(1, Math.floor(cores / 2));
}

/** The quality measurements' intra-op threads for a job run under `config` (linesThreads). */
export function qualityThreads(config: Pick<JobRuntime['config'], 'keepModels' | 'onnxThreads'>, cores = os.availableParallelism()): number {
  return config.keepModels === false ? linesThreads(config.onnxThreads, cores) : config.onnxThreads;
}

/**
 * The lines' measurements (back-transcription, speaker similarity, RMS), started with the plan,
 * once the speech timeline is made: they read nothing of the mix, the dubbed track or the video,
 * so they run while the background and the mix are made and the track is encoded and muxed. No
 * progress of their own (the stages they run beside report theirs); the quality stage takes the
 * result, and reports it while it is still running.
 */
export function startQualityLines(rt: JobRuntime, plan: QualityPlan, logger: StageContext['logger'], signal: AbortSignal): Promise<MeasuredLines> {
  const ctx: StageContext = { logger, signal: rt.ctx.signal ? AbortSignal.any([rt.ctx.signal, signal]) : signal };
  const run = async () => measureQualityLines(await plan.linesInput(ctx), plan.env, ctx);
  return rt.withLimit ? rt.withLimit('gpu', run) : run();
}

/**
 * The measurements of the report, as a cached stage keyed by what it reads: the placed lines, the
 * outputs, the reference clips and the engines (ASR for the target locale, speaker embedding).
 * Inside it, each line's measurements are cached on their own (`quality-line`, keyed by what the
 * line's measurements read), so after an edit only the lines whose key changed are measured again.
 * `measuredLines`: the lines' measurements started earlier (startQualityLines), taken as they are.
 */
export interface QualityStageResult {
  measured: QualityMeasurements;
  similarityEngine: string;
  framePeaks?: (number | null)[];
  hopEnergies?: number[];
  hop?: number;
}

export async function qualityStage(rt: JobRuntime, runner: StageRunner, q: Omit<QualityStageInput, 'job' | 'engines' | 'script' | 'transcript' | 'speakers' | 'work'>, plan: QualityPlan, measuredLines?: Promise<MeasuredLines>): Promise<QualityStageResult> {
  const { asr, asrModel, speaker, notApplicable, references } = plan;
  const inputs = {
    v: QUALITY_VERSION,
    speech: q.speechKey,
    video: q.videoKey,
    audio: q.audioKey,
    lines: q.segments.map((s) => [s.slot.segment.id, s.result?.key ?? null, s.spokenText, s.slot.segment.speaker, round6(s.placement.start), round6(s.placement.end)]),
    references,
    asr: [asr.engine, asrModel],
    speaker: [speaker.id, speaker.models[0]?.sha256 ?? null],
    notApplicable,
  };
  const r = await runner.run<QualityMeasurements>('quality', inputs, async (_out, ctx) => {
    // the progress names this stage from its start (its lines may have been measured beside the stages before)
    reportProgress(ctx, 'quality', 0);
    const run = async () =>
      measureQuality(
        {
          ...(await plan.linesInput(ctx)),
          sourceVideo: await q.local(q.sourceKey),
          resultVideo: await q.local(q.videoKey),
          resultAudio: await q.local(q.audioKey),
          ...(q.previousLoudness ? { previousLoudness: q.previousLoudness } : {}),
          ...(q.trackLoudness ? { trackLoudness: q.trackLoudness } : {}),
          ...(measuredLines ? { measuredLines } : {}),
        },
        { ...plan.env, media: q.media },
        ctx,
      );
    // the lines started earlier hold the limit themselves
    return rt.withLimit && !measuredLines ? rt.withLimit('gpu', run) : run();
  });
  return { measured: r.value, similarityEngine: speaker.id, ...(r.value.framePeaks ? { framePeaks: r.value.framePeaks } : {}), ...(r.value.hopEnergies && r.value.hop ? { hopEnergies: r.value.hopEnergies, hop: r.value.hop } : {}) };
}

/** How a fitted line was spoken; absent for artifacts from before it was recorded. */
function lineSynthesis(v: SegmentArtifact): { synthesis?: LineSynthesis } {
  if (v.passes === undefined) return {};
  return { synthesis: { natural: v.natural ?? 'measured', speed: Math.round(v.speed * 1000) / 1000, passes: v.passes, tempo: Math.round(v.tempo * 1000) / 1000 } };
}

/** The lines as the report sees them (`fitted.file`: the blob key of the fitted line). */
export function qualityLines(segments: readonly PlacedSegment[], utterances: ReadonlyMap<string, StageResult<unknown>>): QualityLine[] {
  return segments.map((s) => ({
    segment: s.slot.segment,
    regenerated: !(utterances.get(s.slot.segment.id)?.cached === true && (s.result === undefined || s.result.cached)),
    placement: s.placement,
    spokenText: s.spokenText,
    shortening: s.shortening,
    ...(s.result ? { fitted: { file: s.result.files['speech.wav']!, speechSeconds: s.result.value.speechSeconds, speedFactor: s.result.value.speedFactor, cutSeconds: s.result.value.cutSeconds, ...lineSynthesis(s.result.value) } } : {}),
  }));
}
