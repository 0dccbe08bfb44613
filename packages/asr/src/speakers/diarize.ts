/**
 * diarize: who speaks when. Speech regions (VAD, or given) are cut into overlapping windows, each
 * window becomes a speaker vector (embedding engine), vectors are clustered (average-linkage AHC
 * on cosine distance: cut at `threshold` to estimate the count, or at exactly `speakersCount`),
 * windows' labels become speaker turns, ASR segments are labelled and split where the speaker
 * changes, and each speaker gets a reference clip (its cleanest 6-20 s) for the voice stage.
 */
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { getLocale, reportProgress, resolveContext, subContext, throwIfAborted, ValidationError, type PartialContext, type StageContext } from '@dub/core';
import { concatSamples, writeWav } from '@dub/media';
import type { AsrSegment } from '../asr/types.js';
import { runOnSpeech, type EngineEnv, type EngineEnvOptions } from '../engine-env.js';
import { SPEECH_SAMPLE_RATE, type AudioInput, type SpeechAudio, type SpeechAudioOptions } from '../speech-audio.js';
import { resolveVadOptions, runVad, type VadOptions } from '../vad/detect-speech.js';
import type { SpeechDetection } from '../vad/types.js';
import { BIC_REFERENCE_SECONDS, partitionBic, speechFrames } from './bic.js';
import { averageLinkage, cosineDistances, cutDendrogram, prepareVectors } from './cluster.js';
import { resolveMfccStatsOptions, type MfccStatsOptions } from './mfcc-stats.js';
import { resolveOnnxEmbeddingOptions, type OnnxEmbeddingOptions } from './onnx-embedding.js';
import { chooseClipPieces, renderClip, type ClipPiece } from './reference-clip.js';
import { createSpeakerEmbedding, type EmbeddingEngineId, type ResolvedEmbeddingEngineOptions } from './registry.js';
import { cutLines, fitLineSpans, type LineOptions } from './lines.js';
import { labelSegments, labelTurns, type SpeakerTurn } from './resegment.js';
import { speakerWindows, type SpeakerWindow } from './windows.js';

export interface ReferenceClipOptions {
  /** Seconds (defaults 6 and 20). */
  minSeconds?: number;
  maxSeconds?: number;
  /** Write each clip as `<dir>/<speaker id>.wav` (16 kHz mono pcm16). */
  dir?: string;
  /** Return the clip samples (default true when no dir is given). */
  returnSamples?: boolean;
}

export interface DiarizeOptions extends EngineEnvOptions, SpeechAudioOptions {
  /** Exactly this many speakers (the asset's speakers_count); absent: estimated. */
  speakersCount?: number;
  /** Upper bound when estimating (default 10). */
  maxSpeakers?: number;
  /** Cosine distance at which clusters stop merging when estimating (default depends on the engine). */
  threshold?: number;
  /**
   * How the count is estimated when speakersCount is absent: `bic` (default for the mfcc engine:
   * Gaussian BIC over MFCC frames of each candidate partition) or `threshold` (default for onnx:
   * cut the dendrogram at `threshold` cosine distance).
   */
  estimate?: 'bic' | 'threshold';
  /** BIC penalty weight (default 2, measured on the test recordings: frames are correlated, so the textbook 1 overestimates). */
  bicLambda?: number;
  /**
   * Seconds of speech the BIC weighs at most (default BIC_REFERENCE_SECONDS, 25): longer files are
   * scored as if they held this much speech, so the count does not grow with the length.
   * `Infinity` gives the unnormalized BIC (the count then grows with the file).
   */
  bicReferenceSeconds?: number;
  /**
   * Lines: segments longer than `maxSeconds` (7) are cut at their deepest pause, leaving at least
   * `minSeconds` (1) each side, and each line's span is fitted to the VAD speech inside it
   * (fitLineSpans, see lines.ts); `false` keeps the ASR segments as they are.
   */
  lines?: Partial<LineOptions> | false;
  /** Clusters holding less than this share of the speech are folded into the nearest one when estimating (default 0.1). */
  minSpeakerShare?: number;
  /** Embedding engine (default `mfcc`; `onnx` with a WeSpeaker/CAM++ model on real hosts). */
  embedding?: EmbeddingEngineId;
  mfcc?: MfccStatsOptions;
  onnx?: OnnxEmbeddingOptions;
  /** Window length, hop and shortest region used (seconds; defaults 1.5, 0.75, 0.5). */
  windowSeconds?: number;
  hopSeconds?: number;
  minWindowSeconds?: number;
  /** Speech regions already found (skips VAD). */
  speech?: SpeechDetection;
  vad?: Omit<VadOptions, keyof EngineEnvOptions | keyof SpeechAudioOptions>;
  /** Transcript segments to label (and split at speaker changes). */
  segments?: readonly AsrSegment[];
  /** Locale of the segments (joins split text without spaces for e.g. ja-JP). */
  locale?: string;
  /** Reference clips; `false` for none. */
  referenceClips?: ReferenceClipOptions | false;
}

export interface ResolvedDiarizeOptions {
  speakersCount: number | undefined;
  maxSpeakers: number;
  threshold: number;
  minSpeakerShare: number;
  estimate: 'bic' | 'threshold';
  bicLambda: number;
  bicReferenceSeconds: number;
  lines: Partial<LineOptions> | false;
  embedding: EmbeddingEngineId;
  engines: ResolvedEmbeddingEngineOptions;
  windowSeconds: number;
  hopSeconds: number;
  minWindowSeconds: number;
  speech: SpeechDetection | undefined;
  vad: VadOptions;
  segments: readonly AsrSegment[];
  joiner: string;
  clips: { minSeconds: number; maxSeconds: number; dir: string | undefined; returnSamples: boolean } | false;
  env: EngineEnvOptions;
  audio: SpeechAudioOptions;
}

/** Default estimation thresholds per engine (cosine distance), measured on the test recordings. */
export const DEFAULT_THRESHOLDS: Readonly<Record<EmbeddingEngineId, number>> = { mfcc: 1.0, onnx: 0.6 };

export function resolveDiarizeOptions(o: DiarizeOptions = {}): ResolvedDiarizeOptions {
  if (o.speakersCount !== undefined && !(Number.isInteger(o.speakersCount) && o.speakersCount >= 1)) {
    throw new ValidationError(`speakers_count must be a positive integer, got ${o.speakersCount}`, { field: 'speakers_count' });
  }
  const embedding = o.embedding ?? 'mfcc';
  const env: EngineEnvOptions = { ...(o.models ? { models: o.models } : {}), ...(o.sessions ? { sessions: o.sessions } : {}), ...(o.device ? { device: o.device } : {}), ...(o.threads !== undefined ? { threads: o.threads } : {}) };
  const audio: SpeechAudioOptions = { ...(o.tmpDir ? { tmpDir: o.tmpDir } : {}), ...(o.ffmpegPath ? { ffmpegPath: o.ffmpegPath } : {}), ...(o.ffprobePath ? { ffprobePath: o.ffprobePath } : {}) };
  const c = o.referenceClips;
  const clips =
    c === false
      ? (false as const)
      : { minSeconds: c?.minSeconds ?? 6, maxSeconds: c?.maxSeconds ?? 20, dir: c?.dir, returnSamples: c?.returnSamples ?? !c?.dir };
  if (clips && !(clips.minSeconds > 0 && clips.maxSeconds >= clips.minSeconds)) throw new RangeError('reference clips need 0 < minSeconds <= maxSeconds');
  const windowSeconds = o.windowSeconds ?? 1.5;
  const hopSeconds = o.hopSeconds ?? 0.75;
  if (!(windowSeconds > 0 && hopSeconds > 0)) throw new RangeError('windowSeconds and hopSeconds must be > 0');
  const info = o.locale ? getLocale(o.locale) : undefined;
  return {
    speakersCount: o.speakersCount,
    maxSpeakers: o.maxSpeakers ?? 10,
    threshold: o.threshold ?? DEFAULT_THRESHOLDS[embedding],
    minSpeakerShare: o.minSpeakerShare ?? 0.1,
    estimate: o.estimate ?? (embedding === 'mfcc' ? 'bic' : 'threshold'),
    bicLambda: o.bicLambda ?? 2,
    bicReferenceSeconds: o.bicReferenceSeconds ?? BIC_REFERENCE_SECONDS,
    lines: o.lines === false ? false : { ...o.lines },
    embedding,
    engines: { mfcc: resolveMfccStatsOptions(o.mfcc), onnx: resolveOnnxEmbeddingOptions(o.onnx) },
    windowSeconds,
    hopSeconds,
    minWindowSeconds: o.minWindowSeconds ?? 0.5,
    speech: o.speech,
    vad: { ...o.vad, ...env, ...audio },
    segments: o.segments ?? [],
    joiner: info && !info.spaceSeparated ? '' : ' ',
    clips,
    env,
    audio,
  };
}

export interface ReferenceClip {
  /** Pieces of the source audio the clip is made of (seconds). */
  pieces: ClipPiece[];
  /** Seconds of speech in the clip. */
  duration: number;
  sampleRate: number;
  samples?: Float32Array;
  /** The WAV written, when a dir was given. */
  file?: string;
}

export interface DiarizedSpeaker {
  id: string;
  /** Seconds of speech attributed to this speaker. */
  speechSeconds: number;
  reference?: ReferenceClip;
}

/**
 * A cluster of speech windows that did not become a speaker of its own: `folded` (it held less
 * than minSpeakerShare of the windows, so its windows went to the nearest remaining speakers) or
 * `merged` (BIC preferred the partition with it joined to another speaker).
 */
export interface SpeakerAdjustment {
  kind: 'folded' | 'merged';
  /** The speaker that took (most of) its windows. */
  into: string;
  /** Speech windows of the cluster, and their share of all windows. */
  windows: number;
  share: number;
  reason: string;
}

export interface Diarization {
  /** Embedding engine id. */
  engine: string;
  /** Whether the count was given (`fixed`) or estimated. */
  count: 'fixed' | 'estimated';
  /** How the count was reached: speakers_count, one speaker given, BIC, or the cosine threshold. */
  method: 'speakers_count' | 'bic' | 'threshold' | 'none';
  /** Clusters folded or merged into another speaker, with the reason (never silently). */
  adjustments: SpeakerAdjustment[];
  speakers: DiarizedSpeaker[];
  turns: Array<{ start: number; end: number; speaker: string }>;
  /** The given segments, labelled and split at speaker changes. */
  segments: AsrSegment[];
  speech: SpeechDetection;
}

async function readWindow(audio: SpeechAudio, w: SpeakerWindow): Promise<Float32Array> {
  if (w.pieces.length === 1) return audio.readSeconds(w.pieces[0]!.start, w.pieces[0]!.end);
  return concatSamples(await Promise.all(w.pieces.map((p) => audio.readSeconds(p.start, p.end))));
}

export function speakerId(i: number): string {
  return `speaker_${i + 1}`;
}

/** A cluster that stopped being one (windows by index; the speaker is resolved on the final labels). */
interface PendingAdjustment {
  kind: 'folded' | 'merged';
  windows: number[];
  reason: string;
}

/**
 * Fold clusters with less than `minShare` of the windows into the nearest remaining cluster (by
 * mean-vector cosine); each folded cluster is returned with its windows.
 */
function foldSmallClusters(labels: Int32Array, units: readonly Float64Array[], minShare: number): { labels: Int32Array; folded: PendingAdjustment[] } {
  const n = labels.length;
  const k = Math.max(...labels) + 1;
  if (k <= 1) return { labels, folded: [] };
  const counts = new Array<number>(k).fill(0);
  for (const l of labels) counts[l]++;
  const big = counts.map((c, i) => (c >= minShare * n ? i : -1)).filter((i) => i >= 0);
  if (!big.length || big.length === k) return { labels, folded: [] };
  const d = units[0]!.length;
  const centroid = (c: number) => {
    const m = new Float64Array(d);
    labels.forEach((l, i) => {
      if (l === c) for (let j = 0; j < d; j++) m[j] = m[j]! + units[i]![j]!;
    });
    return m;
  };
  const cents = new Map(big.map((c) => [c, centroid(c)]));
  const out = Int32Array.from(labels);
  const folded = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    if (cents.has(out[i]!)) continue;
    const from = out[i]!;
    if (!folded.has(from)) folded.set(from, []);
    folded.get(from)!.push(i);
    let best = big[0]!;
    let bestDot = -Infinity;
    for (const [c, m] of cents) {
      let dot = 0;
      for (let j = 0; j < d; j++) dot += m[j]! * units[i]![j]!;
      if (dot > bestDot) {
        bestDot = dot;
        best = c;
      }
    }
    out[i] = best;
  }
  const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
  return {
    labels: renumber(out),
    folded: [...folded.values()].map((w) => ({
      kind: 'folded' as const,
      windows: w,
      reason: `a cluster with ${pct(w.length / n)} of the speech windows, under the ${pct(minShare)} minimum share of a speaker (minSpeakerShare), was folded into the nearest speaker`,
    })),
  };
}

/** Resolve pending adjustments on the final labels: each goes to the speaker holding most of its windows. */
function resolveAdjustments(pending: readonly PendingAdjustment[], labels: Int32Array, ids: readonly string[]): SpeakerAdjustment[] {
  const n = labels.length;
  return pending
    .filter((p) => p.windows.length > 0)
    .map((p) => {
      const votes = new Map<number, number>();
      for (const w of p.windows) votes.set(labels[w]!, (votes.get(labels[w]!) ?? 0) + 1);
      const into = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
      return { kind: p.kind, into: ids[into] ?? speakerId(into), windows: p.windows.length, share: Math.round((p.windows.length / Math.max(1, n)) * 1000) / 1000, reason: p.reason };
    });
}

/** Labels renumbered 0.. in order of first appearance. */
function renumber(labels: Int32Array): Int32Array {
  const ids = new Map<number, number>();
  return labels.map((l) => {
    if (!ids.has(l)) ids.set(l, ids.size);
    return ids.get(l)!;
  });
}

export async function runDiarize(audio: SpeechAudio, o: ResolvedDiarizeOptions, env: EngineEnv, ctx: StageContext): Promise<Diarization> {
  const speech = o.speech ?? (await runVad(audio, resolveVadOptions(o.vad), env, subContext(ctx, 'vad', 0, 0.2)));
  const windows = speakerWindows(speech.regions, o.windowSeconds, o.hopSeconds, Math.min(o.minWindowSeconds, o.windowSeconds));
  let labels: Int32Array;
  let pending: PendingAdjustment[] = [];
  const engineId = o.embedding;
  if (!windows.length) labels = new Int32Array(0);
  else if (o.speakersCount === 1) labels = new Int32Array(windows.length);
  else {
    const engine = await createSpeakerEmbedding(engineId, o.engines, env);
    const vectors: Float32Array[] = [];
    for (let i = 0; i < windows.length; i++) {
      throwIfAborted(ctx.signal);
      vectors.push(await engine.embed(await readWindow(audio, windows[i]!)));
      if (i % 16 === 0) reportProgress(ctx, 'speakers', 0.2 + (0.6 * i) / windows.length);
    }
    const units = prepareVectors(vectors, engine.needsStandardization);
    const merges = averageLinkage(cosineDistances(units), units.length);
    if (o.speakersCount !== undefined) labels = cutDendrogram(units.length, merges, { k: Math.min(o.speakersCount, units.length) });
    else if (o.estimate === 'bic') {
      const frames = await speechFrames(audio, speech.regions);
      let best: { bic: number; labels: Int32Array; adjustments: PendingAdjustment[] } = { bic: -Infinity, labels: new Int32Array(units.length), adjustments: [] };
      const scores: number[] = [];
      for (let k = 1; k <= Math.min(o.maxSpeakers, units.length); k++) {
        const folded = foldSmallClusters(cutDendrogram(units.length, merges, { k }), units, o.minSpeakerShare);
        const cand = folded.labels;
        const kk = Math.max(...cand) + 1;
        if (kk < k) continue; // folding gave back a partition already scored
        const bic = partitionBic(frames, labelTurns(speech.regions, windows, cand), kk, o.bicLambda, o.bicReferenceSeconds);
        scores.push(Math.round(bic));
        if (bic > best.bic) best = { bic, labels: cand, adjustments: folded.folded };
        else if (k >= 3 && bic < best.bic) break;
      }
      // The dendrogram's next-lower cut is one way to merge; BIC may prefer merging another pair.
      for (;;) {
        const k = Math.max(...best.labels) + 1;
        if (k < 2) break;
        let merged: { bic: number; labels: Int32Array; b: number } | undefined;
        for (let a = 0; a < k; a++) {
          for (let b = a + 1; b < k; b++) {
            const cand = renumber(best.labels.map((l) => (l === b ? a : l)));
            const bic = partitionBic(frames, labelTurns(speech.regions, windows, cand), k - 1, o.bicLambda, o.bicReferenceSeconds);
            if (!merged || bic > merged.bic) merged = { bic, labels: cand, b };
          }
        }
        if (!merged || merged.bic <= best.bic) break;
        const joined: number[] = [];
        best.labels.forEach((l, i) => void (l === merged!.b && joined.push(i)));
        const gain = Math.round(merged.bic - best.bic);
        best = {
          bic: merged.bic,
          labels: merged.labels,
          adjustments: [...best.adjustments, { kind: 'merged', windows: joined, reason: `the speaker count estimate (BIC) improved by ${gain} when this cluster was merged into another speaker` }],
        };
      }
      ctx.logger.debug({ bic: scores, chosen: Math.round(best.bic) }, 'speaker count by BIC');
      labels = best.labels;
      pending = best.adjustments;
    } else {
      labels = cutDendrogram(units.length, merges, { threshold: o.threshold });
      if (Math.max(...labels) + 1 > o.maxSpeakers) labels = cutDendrogram(units.length, merges, { k: o.maxSpeakers });
      const folded = foldSmallClusters(labels, units, o.minSpeakerShare);
      labels = folded.labels;
      pending = folded.folded;
    }
    ctx.logger.debug({ windows: windows.length, merges: merges.slice(-4).map((m) => Math.round(m.distance * 1000) / 1000) }, 'speaker clustering');
  }
  const turns: SpeakerTurn[] = labelTurns(speech.regions, windows, labels);
  const count = windows.length ? Math.max(...labels) + 1 : o.speakersCount !== undefined && speech.regions.length ? 1 : 0;
  const ids = Array.from({ length: count }, (_, i) => speakerId(i));
  if (!windows.length && count === 1) turns.push(...speech.regions.map((r) => ({ start: r.start, end: r.end, speaker: 0 })));
  const speakers: DiarizedSpeaker[] = [];
  for (let s = 0; s < count; s++) {
    const speechSeconds = Math.round(turns.filter((t) => t.speaker === s).reduce((a, t) => a + t.end - t.start, 0) * 1000) / 1000;
    const sp: DiarizedSpeaker = { id: ids[s]!, speechSeconds };
    if (o.clips) {
      const pieces = chooseClipPieces(turns, s, speech.probabilities, speech.frameSeconds, o.clips.minSeconds, o.clips.maxSeconds);
      const samples = await renderClip(audio, pieces);
      const clip: ReferenceClip = { pieces, duration: Math.round(pieces.reduce((a, p) => a + p.end - p.start, 0) * 1000) / 1000, sampleRate: SPEECH_SAMPLE_RATE };
      if (o.clips.dir) {
        await mkdir(o.clips.dir, { recursive: true });
        clip.file = path.join(o.clips.dir, `${sp.id}.wav`);
        await writeWav(clip.file, { sampleRate: SPEECH_SAMPLE_RATE, channels: [samples] }, { format: 'pcm16' });
      }
      if (o.clips.returnSamples) clip.samples = samples;
      sp.reference = clip;
    }
    speakers.push(sp);
  }
  reportProgress(ctx, 'speakers', 1);
  return {
    engine: o.speakersCount === 1 ? 'none' : engineId,
    count: o.speakersCount !== undefined ? 'fixed' : 'estimated',
    method: o.speakersCount !== undefined ? 'speakers_count' : !windows.length ? 'none' : o.estimate,
    adjustments: resolveAdjustments(pending, labels, ids),
    speakers,
    turns: turns.map((t) => ({ start: t.start, end: t.end, speaker: ids[t.speaker]! })),
    segments: await toLines(count ? labelSegments(o.segments, turns, ids, o.joiner) : o.segments.map((s) => ({ ...s })), speech, audio, o, env, ctx),
    speech,
  };
}

/**
 * Segments cut into lines and fitted to their speech (lines.ts). The pause depth needs per-frame
 * VAD probabilities: a given detection without them (the pipeline passes regions only) gets them
 * from one VAD pass here.
 */
async function toLines(segments: AsrSegment[], speech: SpeechDetection, audio: SpeechAudio, o: ResolvedDiarizeOptions, env: EngineEnv, ctx: StageContext): Promise<AsrSegment[]> {
  if (o.lines === false) return segments;
  const max = o.lines.maxSeconds ?? 7;
  // Spans fitted to the speech first (a segment's trailing silence is no reason to cut it), and
  // again after the cut, whose pieces touch at the pause.
  const fit = (lines: AsrSegment[]): AsrSegment[] => (o.lines !== false && o.lines.fitSpans === false ? lines : fitLineSpans(lines, speech.regions));
  const fitted = fit(segments);
  if (!fitted.some((s) => s.end - s.start > max)) return fitted;
  const probs = speech.probabilities.length ? speech : await runVad(audio, resolveVadOptions(o.vad), env, subContext(ctx, 'vad', 0.9, 1));
  return fit(cutLines(fitted, { probabilities: probs.probabilities, frameSeconds: probs.frameSeconds, regions: speech.regions }, o.lines, o.joiner));
}

/** Find the speakers of `input` (a media path, samples, or an open SpeechAudio). */
export async function diarize(input: AudioInput, options: DiarizeOptions = {}, context: PartialContext = {}): Promise<Diarization> {
  const ctx = resolveContext(context);
  const o = resolveDiarizeOptions(options);
  return runOnSpeech(input, o, ctx, (audio, env) => runDiarize(audio, o, env, ctx));
}
