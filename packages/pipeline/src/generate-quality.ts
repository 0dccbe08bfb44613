/**
 * The quality report of a generation (@dub/core QualityReportSchema, `dub.quality-report/1`):
 * measurements of every dubbed line (loudness of its speech, back-transcription in the target
 * language with its word error rate, cosine of its speaker vector and the speaker's reference
 * clip's) and of the outputs (EBU R128 loudness of the dubbed track, durations against the
 * source), joined with how each line was placed, the stage times, the engines and the speakers.
 *
 * A line's measurements are a function of what they read, and are kept per line (LineCache, keyed
 * by `lineMeasurementKeys`): a generation measures only the lines whose key is new (after a
 * one-line edit, that line and the lines its placement moved), and takes the others from an
 * earlier generation. The back-transcription of a line reads the speech timeline over its decode
 * unit (pocketsphinx: the line's own region, one utterance each; Whisper: the 30 s chunk(s) the
 * engine groups it into), so its key holds the unit's lines and any other line sounding there.
 * The outputs (loudness of the dubbed track, durations) are measured every generation.
 */
import {
  getLocale,
  reportProgress,
  silentLogger,
  subContext,
  type QualityReport,
  type QualitySegment,
  type ResolveOptions,
  type ScriptSegment,
  type StageContext,
  type DeviceChoice,
} from '@dub/core';
import type { SpeechAudio } from '@dub/asr';
import type { SessionCache } from '@dub/onnx';
import { probe, readWav, type MediaInfo, type MediaToolOptions } from '@dub/media';
import { measureLoudnessFrames, updateLoudnessFrames, type LoudnessFrames } from '@dub/mix';
import { speechExtent, toMono } from '@dub/voice';
import type { ArtifactCache } from './artifacts.js';
import type { Placement } from './generate-placement.js';
import { lineTranscripts, wordsOverLines, type TimedWord } from './quality-words.js';

export { wordsByLine, wordsOverLines } from './quality-words.js';

export type Shortening = NonNullable<QualitySegment['shortening']>;

/** How a fitted line was spoken (the report's `synthesis`). */
export interface LineSynthesis {
  natural: 'measured' | 'predicted';
  speed: number;
  passes: number;
  tempo: number;
}

export interface QualityLine {
  segment: ScriptSegment;
  placement: Placement;
  spokenText: string;
  shortening: Shortening | null;
  /** The fitted line (local WAV) as placed (`key`: its blob key, what the line cache keys it by); absent when nothing of it fits before the end of the video. */
  fitted?: { file: string; speechSeconds: number; speedFactor: number; cutSeconds: number; key?: string; synthesis?: LineSynthesis };
  /** Whether this generation synthesized or fitted the line anew (false: both came from the cache of an earlier one). */
  regenerated: boolean;
}

/** Back-transcription engine for the target locale: an ASR engine id (`model`: the identity of its weights), or null with the reason. */
export type BackTranscriber = { engine: string; model?: unknown; reason?: undefined } | { engine: null; reason: string };

export interface SimilarityEngine {
  /** Engine id as the speakers stage names it (wespeaker, mfcc). */
  id: string;
  embedding: 'mfcc' | 'onnx';
  modelFile?: string;
  /** The identity of the model (its sha256), for the line cache's keys. */
  model?: unknown;
  /** Speaker id -> why the threshold does not apply to their lines (a library voice, anonymization). */
  notApplicable: Readonly<Record<string, string>>;
}

export interface QualityEnv {
  sessions: SessionCache;
  device: DeviceChoice;
  threads: number;
  models: ResolveOptions;
  tmpDir: string;
  media: MediaToolOptions;
}

export interface QualityMeasureInput {
  locale: string;
  /** The speech timeline (every placed line), local WAV. */
  speechFile: string;
  sourceVideo: string;
  resultVideo: string;
  resultAudio: string;
  lines: readonly QualityLine[];
  /** Speaker id -> local reference clip. */
  references: Readonly<Record<string, string>>;
  asr: BackTranscriber;
  similarity: SimilarityEngine;
  /** Measurements of earlier generations, per line; without it every line is measured. */
  lineCache?: LineCacheInput;
  /**
   * The dubbed track of an earlier generation's measurement that this one differs from only within
   * `changed` (seconds): its per-frame true peaks and per-hop energies are kept outside them (updateLoudnessFrames).
   */
  previousLoudness?: { framePeaks: readonly number[]; hopEnergies?: readonly number[]; hop?: number; changed: readonly { start: number; end: number }[] };
  /** That measurement already started by the caller (measureTrackLoudness of resultAudio), e.g. while the video was muxed. */
  trackLoudness?: Promise<LoudnessFrames>;
  /** The lines' measurements already started by the caller (measureQualityLines of these lines), e.g. while the mix was encoded and muxed. */
  measuredLines?: Promise<MeasuredLines>;
}

/** What the lines' measurements read: the speech timeline, the lines, the references and the engines. */
export type QualityLinesInput = Pick<QualityMeasureInput, 'locale' | 'speechFile' | 'lines' | 'references' | 'asr' | 'similarity' | 'lineCache'>;

/** Every line's measurements, and the ids of the lines measured now (the others came from the line cache). */
export interface MeasuredLines {
  lines: Record<string, LineMeasurement>;
  measuredLines: string[];
}

/** Stored measurements of lines, by key (lineMeasurementKeys). */
export interface LineCache {
  get(key: unknown): Promise<LineMeasurement | undefined>;
  put(key: unknown, measurement: LineMeasurement): Promise<void>;
}

/** Stage name of one line's measurements in the ArtifactCache. */
export const QUALITY_LINE_STAGE = 'quality-line';

/** A LineCache in the pipeline's ArtifactCache: one manifest per line key (stage `quality-line`). */
export function artifactLineCache(cache: ArtifactCache, ctx: StageContext): LineCache {
  // one stored value per line: no files, no log line each
  const quiet: StageContext = { logger: silentLogger, ...(ctx.signal ? { signal: ctx.signal } : {}) };
  return {
    get: async (key) => (await cache.lookup<LineMeasurement>(QUALITY_LINE_STAGE, key))?.value,
    put: async (key, m) => void (await cache.run(QUALITY_LINE_STAGE, key, quiet, async () => m)),
  };
}

export interface LineCacheInput {
  store: LineCache;
  /** Speaker id -> blob key of the reference clip (the identity of `references`). */
  referenceKeys: Readonly<Record<string, string>>;
  /** Sample rate of the speech timeline. */
  sampleRate: number;
}

export interface LineMeasurement {
  rms_dbfs: number | null;
  back_transcription: QualitySegment['back_transcription'];
  speaker_similarity: QualitySegment['speaker_similarity'];
}

export interface QualityMeasurements {
  lines: Record<string, LineMeasurement>;
  loudness: QualityReport['loudness'];
  durations: QualityReport['durations'];
  similarityThreshold: number | null;
  similarityKind: string;
  /** Ids of the lines measured by this generation (the others came from the line cache). */
  measuredLines: string[];
  /** The dubbed track's true peak per 100 ms frame (dBFS, null for silence), and whether it was updated from an earlier generation's. */
  framePeaks?: (number | null)[];
  /** Its K-weighted energy per 100 ms hop, and the hop in sample frames (what integrated loudness and range are computed from). */
  hopEnergies?: number[];
  hop?: number;
  loudnessUpdated?: boolean;
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const r1 = (x: number): number => Math.round(x * 10) / 10;
const finite = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) ? x : null);

/** RMS level in dBFS of the speech in `x` (leading and trailing silence excluded); null when silent. */
export function speechRmsDbfs(x: Float32Array, sampleRate: number): number | null {
  const ext = speechExtent(x, sampleRate);
  if (ext.end <= ext.start) return null;
  let e = 0;
  for (let i = ext.start; i < ext.end; i++) e += x[i]! * x[i]!;
  const ms = e / (ext.end - ext.start);
  return ms > 0 ? r1(10 * Math.log10(ms)) : null;
}

/** A fitted line's speech (mono, leading and trailing silence cut) and its RMS level. */
async function lineSpeech(file: string): Promise<{ x: Float32Array; sampleRate: number; rms: number | null }> {
  const a = await readWav(file);
  const x = toMono(a);
  const ext = speechExtent(x, a.sampleRate);
  return { x: ext.end > ext.start ? x.slice(ext.start, ext.end) : new Float32Array(0), sampleRate: a.sampleRate, rms: speechRmsDbfs(x, a.sampleRate) };
}

/** Lines that one ASR call decodes together, and the span of the speech timeline it reads for them. */
interface DecodeUnit {
  lines: QualityLine[];
  start: number;
  end: number;
}

/**
 * The decode units of the placed lines, as the engine decodes them: pocketsphinx decodes every
 * region as its own utterance (a line decoded alone gives the words it gives inside the batch);
 * Whisper (BACK_TRANSCRIPTION_WHISPER) packs the lines' speech, in order, a pause between two kept up
 * to `gap` seconds, into windows of up to `chunkSeconds` (a line longer than that is split in equal parts first), as
 * packRegions of @dub/asr does, so a unit is one window, or the windows a split line spans. A unit
 * starts a window, so decoding any set of whole units packs them into the same windows.
 */
export function decodeUnits(lines: readonly QualityLine[], engine: string, chunkSeconds: number, gap: number = BACK_TRANSCRIPTION_PACK_GAP): DecodeUnit[] {
  const heard = lines.filter((l) => l.fitted);
  if (engine !== 'whisper') return heard.map((l) => ({ lines: [l], start: l.placement.start, end: l.placement.end }));
  const units: DecodeUnit[] = [];
  // seconds of the current window taken so far, and where the speech before ended on the timeline
  let length = Number.NaN;
  let prevEnd = Number.NaN;
  for (const l of heard) {
    const { start, end } = l.placement;
    const len = end - start;
    const parts = Math.max(1, Math.ceil(len / chunkSeconds - 1e-9));
    for (let i = 0; i < parts; i++) {
      const part = len / parts;
      const pStart = start + (len * i) / parts;
      const pEnd = start + (len * (i + 1)) / parts;
      const unit = units[units.length - 1];
      // the pause before, kept up to `gap` seconds
      const pause = Math.min(gap, Math.max(0, pStart - prevEnd));
      prevEnd = pEnd;
      if (unit && length + pause + part <= chunkSeconds + 1e-9) {
        // same window
        if (unit.lines[unit.lines.length - 1] !== l) unit.lines.push(l);
        unit.start = Math.min(unit.start, start);
        unit.end = Math.max(unit.end, pEnd);
        length += pause + part;
      } else if (unit && i > 0) {
        // a new window inside a split line: the line ties it to the unit
        unit.end = Math.max(unit.end, pEnd);
        length = part;
      } else {
        units.push({ lines: [l], start, end: pEnd });
        length = part;
      }
    }
  }
  return units;
}

const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;
/** Audio of the timeline this close to a unit's span still reaches its decode (resampling, analysis windows). */
const CONTEXT_SECONDS = 0.05;
/** Version of the per-line measurements (bump when what they compute changes). 2: Whisper back-transcription bounded (BACK_TRANSCRIPTION_WHISPER), its words laid over the lines (wordsOverLines), a word between lines given to the nearest. 3: the lines' speech packed into 30 s windows (pauses cut to 1 s), fallback at 0.4 and 0.8 with one sample each. 4: a repetition loop fails a decoding too, the best of the failed decodings is kept (not the last), a line a loop reaches into is not counted (wer null). 5: words timed by Whisper's cross-attention (wordTimestamps). 6: tokens in a script the target is not written in suppressed (restrictScript). */
export const LINE_MEASUREMENT_VERSION = 6;

/** Seconds of silence between two lines packed into one Whisper window. */
export const BACK_TRANSCRIPTION_PACK_GAP = 1;

/**
 * How Whisper decodes the dubbed lines (issue 27 item 6):
 * - in the target language: the prompt's language token is the target locale's, nothing is detected;
 * - the lines' speech packed into windows of up to 30 s (`packGapSeconds`: each line's samples
 *   after the previous one's, a pause longer than 1 s cut to 1 s, where Whisper ends a segment), so the encoder runs once per 30 s of
 *   dubbed speech, not once per 30 s of the timeline or per line; the words come back on the
 *   timeline and go to the line they were heard in (wordsOverLines, wordsByLine), each word timed
 *   by the decoder's cross-attention (`wordTimestamps`, openai's word_timestamps: a segment often
 *   runs over two lines with no pause between them, and timing its words by character share gave
 *   the first word of the next line to the one before);
 * - bounded: at most 15 tokens per second of the window plus 8 (read text, even fast with
 *   timestamps, stays well under it: 3-6 tokens per second measured on Kokoro's Spanish);
 * - openai's compression-ratio (> 2.4) and average log-probability (< -1) checks and no-speech
 *   rule, plus a repetition-loop check (the ratio of a short window's text stays under 2.4 however
 *   it loops), with a cheap temperature fallback: a window that fails is decoded again at 0.4, then at
 *   0.8, one sample each (openai samples 5 at each of 0.2 .. 1.0: up to 26 decodes of a window,
 *   which made a generation's quality stage take most of its time where Whisper could not read
 *   the synthesized lines). So a window costs at most three bounded decodes. When all three fail,
 *   the most likely of the ones that do not loop is kept (openai keeps the last: at 0.8, on a voice
 *   Whisper hears badly, text in other scripts and languages); a line a loop still reaches into
 *   is reported with its text and no WER;
 * - in the target's script: tokens written in another script (Latin, digits and punctuation aside)
 *   are never sampled (`restrictScript`; the dubbed text is ours, and a voice Whisper hears badly
 *   otherwise gets letters of other scripts, e.g. Hebrew in a Portuguese line).
 */
export const BACK_TRANSCRIPTION_WHISPER = { detectLanguage: false, restrictScript: true, maxTokensPerSecond: 15, packGapSeconds: BACK_TRANSCRIPTION_PACK_GAP, temperatures: [0, 0.4, 0.8], bestOf: 1, wordTimestamps: true } as const;

/**
 * The cache key of every line's measurements: what they read. Its fitted audio (blob key), spoken
 * text, speaker and the note saying similarity does not apply to them, its placement; the ASR
 * engine and model (or why there is none) and the decode unit it is heard in (its lines and any
 * other line sounding within the unit's span, the timeline's sample rate); the speaker-embedding
 * engine and model and every reference clip (the closest speaker is among all of them).
 */
export function lineMeasurementKeys(input: Pick<QualityMeasureInput, 'lines' | 'asr' | 'similarity'>, cache: Pick<LineCacheInput, 'referenceKeys' | 'sampleRate'>, chunkSeconds: number): Map<string, unknown> {
  const ident = (l: QualityLine) => [l.fitted?.key ?? null, r6(l.placement.start), r6(l.placement.end)];
  const heardIn = new Map<string, unknown>();
  if (input.asr.engine !== null) {
    const heard = input.lines.filter((l) => l.fitted);
    for (const u of decodeUnits(input.lines, input.asr.engine, chunkSeconds)) {
      // the decode reads the unit's lines' spans only (pocketsphinx: the line's; Whisper: each line's, packed)
      const others = heard.filter((l) => !u.lines.includes(l) && u.lines.some((m) => l.placement.start < m.placement.end + CONTEXT_SECONDS && l.placement.end > m.placement.start - CONTEXT_SECONDS));
      const unit = { span: [r6(u.start), r6(u.end)], lines: u.lines.map(ident), others: others.map(ident), sampleRate: cache.sampleRate };
      for (const l of u.lines) heardIn.set(l.segment.id, unit);
    }
  }
  const asr = input.asr.engine === null ? { engine: null, reason: input.asr.reason } : { engine: input.asr.engine, model: input.asr.model ?? null };
  const similarity = { id: input.similarity.id, embedding: input.similarity.embedding, model: input.similarity.model ?? null, references: cache.referenceKeys };
  const keys = new Map<string, unknown>();
  for (const l of input.lines) {
    keys.set(l.segment.id, {
      v: LINE_MEASUREMENT_VERSION,
      audio: l.fitted?.key ?? null,
      placed: [r6(l.placement.start), r6(l.placement.end)],
      text: l.spokenText,
      speaker: l.segment.speaker,
      notApplicable: input.similarity.notApplicable[l.segment.speaker] ?? null,
      asr,
      heard: heardIn.get(l.segment.id) ?? null,
      similarity,
    });
  }
  return keys;
}

/** Chunk length of the Whisper engine as back-transcription runs it (its default). */
async function whisperChunkSeconds(): Promise<number> {
  const { resolveWhisperOptions } = await import('@dub/asr');
  return resolveWhisperOptions().chunkSeconds;
}

type BackTranscription = QualitySegment['back_transcription'];

/** Back-transcription of `input.lines`; `failed`: lines whose measurement failed (not to be kept). */
async function backTranscribe(input: QualityLinesInput, env: Omit<QualityEnv, 'media'>, ctx: StageContext): Promise<{ byLine: Map<string, BackTranscription>; failed: Set<string> }> {
  const out = new Map<string, BackTranscription>();
  const failed = new Set<string>();
  const heard = input.lines.filter((l) => l.fitted);
  const none = (reason: string) => ({ engine: input.asr.engine, text: null, wer: null, reason });
  for (const l of input.lines) if (!l.fitted) out.set(l.segment.id, none('nothing of the line was placed (cut at the end of the video)'));
  if (input.asr.engine === null) {
    for (const l of heard) out.set(l.segment.id, { engine: null, text: null, wer: null, reason: input.asr.reason });
    return { byLine: out, failed };
  }
  if (!heard.length) return { byLine: out, failed };
  const engine = input.asr.engine;
  const { transcribe, withSpeechAudio, wordErrorRate } = await import('@dub/asr');
  const fail = (lines: readonly QualityLine[], e: unknown) => {
    const reason = `back-transcription with ${engine} failed: ${(e as Error).message.split('\n')[0]}`;
    ctx.logger.warn({ err: (e as Error).message }, 'back-transcription failed');
    for (const l of lines) {
      out.set(l.segment.id, none(reason));
      failed.add(l.segment.id);
    }
  };
  // pocketsphinx: every line in one process (each its own utterance); Whisper: one call per unit,
  // so a unit's chunks are decoded the same (seeds included) whatever else is decoded with it
  const units = decodeUnits(input.lines, engine, engine === 'whisper' ? await whisperChunkSeconds() : 0);
  const calls = engine === 'whisper' ? units.map((u) => u.lines) : [heard];
  const decode = async (audio: SpeechAudio, lines: readonly QualityLine[], i: number) => {
    const spans = lines.map((l) => ({ id: l.segment.id, start: l.placement.start, end: l.placement.end }));
    let words: TimedWord[] = [];
    try {
      const t = await transcribe(
        audio,
        {
          locale: input.locale,
          engine: engine as 'whisper' | 'pocketsphinx',
          whisper: BACK_TRANSCRIPTION_WHISPER,
          // the placed lines are the regions: every line is decoded on its own
          speech: { engine: 'placement', duration: Math.max(0, ...spans.map((s) => s.end)), frameSeconds: 0.032, probabilities: new Float32Array(0), regions: spans.map((s) => ({ start: s.start, end: s.end, probability: 1 })) },
          sessions: env.sessions,
          device: env.device,
          threads: env.threads,
          models: env.models,
          tmpDir: env.tmpDir,
        },
        // the timeline's conversion to 16 kHz is the first 5 % of the step, the decoding the rest
        subContext(ctx, 'asr', 0.05 + (0.95 * i) / calls.length, 0.05 + (0.95 * (i + 1)) / calls.length),
      );
      words = engine === 'whisper' ? wordsOverLines(t.segments, spans) : t.segments.flatMap((s) => s.words);
    } catch (e) {
      // An engine that heard no word at all: every line's transcription is empty (WER 1).
      if ((e as { code?: string }).code !== 'empty_transcript') return fail(lines, e);
    }
    const byLine = lineTranscripts(spans, words);
    for (const l of lines) {
      const { text, loop } = byLine.get(l.segment.id)!;
      // a loop Whisper decoded at every temperature is a hallucination, not what the line says: not counted
      if (loop) out.set(l.segment.id, { engine, text, wer: null, reason: `${engine} decoded a repetition loop here (one phrase again and again, at every temperature tried): a hallucination, not a measurement of the line` });
      else out.set(l.segment.id, { engine, text, wer: r3(wordErrorRate(l.spokenText, text).wer) });
    }
  };
  try {
    // the timeline is read (as 16 kHz mono) once for every call
    await withSpeechAudio(input.speechFile, { tmpDir: env.tmpDir }, subContext(ctx, 'extract_audio', 0, 0.05), async (audio) => {
      for (const [i, lines] of calls.entries()) await decode(audio, lines, i);
    });
  } catch (e) {
    fail(heard.filter((l) => !out.has(l.segment.id)), e);
  }
  return { byLine: out, failed };
}

async function similarities(
  input: QualityLinesInput,
  voiced: ReadonlySet<string>,
  env: Omit<QualityEnv, 'media'>,
  ctx: StageContext,
): Promise<Map<string, QualitySegment['speaker_similarity']>> {
  const { createSpeakerEmbedder, cosineSimilarity, SIMILARITY_KINDS, SIMILARITY_THRESHOLDS } = await import('@dub/asr');
  const kind = SIMILARITY_KINDS[input.similarity.embedding];
  const threshold = SIMILARITY_THRESHOLDS[input.similarity.embedding];
  const noThreshold = threshold === null ? `${input.similarity.id}: MFCC statistics have no same-speaker threshold (not a verification score); not flagged` : undefined;
  const byLine = new Map<string, QualitySegment['speaker_similarity']>();
  const toEmbed: QualityLine[] = [];
  for (const l of input.lines) {
    const na = input.similarity.notApplicable[l.segment.speaker];
    const base = { engine: input.similarity.id, kind, threshold: na ? null : threshold };
    const s = voiced.has(l.segment.id);
    if (s && input.references[l.segment.speaker]) toEmbed.push(l);
    else byLine.set(l.segment.id, { ...base, cosine: null, closest_speaker: null, reason: !s ? 'no speech of the line was placed' : `speaker ${l.segment.speaker} has no reference clip` });
  }
  // the embedder, and every reference's vector, only when some line is compared
  if (!toEmbed.length) return byLine;
  const embedder = await createSpeakerEmbedder(
    { embedding: input.similarity.embedding, ...(input.similarity.modelFile ? { onnx: { file: input.similarity.modelFile } } : {}), sessions: env.sessions, device: env.device, threads: env.threads, models: env.models, tmpDir: env.tmpDir },
    ctx,
  );
  try {
    const refs = new Map<string, Float32Array>();
    for (const [id, file] of Object.entries(input.references)) refs.set(id, await embedder.embed(file, ctx));
    for (const l of toEmbed) {
      const na = input.similarity.notApplicable[l.segment.speaker];
      const base = { engine: input.similarity.id, kind: embedder.kind, threshold: na ? null : embedder.threshold };
      const note = na ?? noThreshold;
      const s = await lineSpeech(l.fitted!.file);
      const v = await embedder.embed({ samples: s.x, sampleRate: s.sampleRate }, ctx);
      const scores = [...refs.entries()].map(([id, r]) => [id, cosineSimilarity(v, r)] as const);
      const own = scores.find(([id]) => id === l.segment.speaker)![1];
      const closest = refs.size > 1 ? [...scores].sort((a, b) => b[1] - a[1])[0]![0] : null;
      byLine.set(l.segment.id, { ...base, cosine: r3(own), closest_speaker: closest, ...(note ? { reason: note } : {}) });
    }
  } finally {
    await embedder.close();
  }
  return byLine;
}

/** `ctx` with every progress report of the steps inside it named `stage`. */
function namedProgress(ctx: StageContext, stage: string): StageContext {
  const parent = ctx.onProgress;
  return { ...ctx, ...(parent ? { onProgress: (p) => parent({ ...p, stage }) } : {}) };
}

/** Measure `input.lines` (every one): loudness of its speech, back-transcription, speaker similarity. */
async function measureLines(input: QualityLinesInput, env: Omit<QualityEnv, 'media'>, ctx: StageContext): Promise<{ lines: Map<string, LineMeasurement>; failed: Set<string> }> {
  // Each line's speech as placed: loudness here, and the vector for similarity
  // (read again for its vector, not kept: a long video's lines are hundreds of MB of samples)
  const rms = new Map<string, number | null>();
  const voiced = new Set<string>();
  for (const l of input.lines) {
    if (!l.fitted) continue;
    const s = await lineSpeech(l.fitted.file);
    rms.set(l.segment.id, s.rms);
    if (s.x.length) voiced.add(l.segment.id);
  }
  reportProgress(ctx, 'quality', 0.1);
  const t0 = performance.now();
  const asr = await backTranscribe(input, env, subContext(ctx, 'quality', 0.1, 0.6));
  reportProgress(ctx, 'quality', 0.6);
  const t1 = performance.now();
  const sim = await similarities(input, voiced, env, subContext(ctx, 'quality', 0.6, 0.8));
  reportProgress(ctx, 'quality', 0.8);
  ctx.logger.debug({ lines: input.lines.length, asrSeconds: Number(((t1 - t0) / 1000).toFixed(3)), similaritySeconds: Number(((performance.now() - t1) / 1000).toFixed(3)) }, 'quality: lines\' steps');
  const lines = new Map<string, LineMeasurement>();
  for (const l of input.lines) {
    lines.set(l.segment.id, { rms_dbfs: rms.get(l.segment.id) ?? null, back_transcription: asr.byLine.get(l.segment.id)!, speaker_similarity: sim.get(l.segment.id)! });
  }
  return { lines, failed: asr.failed };
}

function durationsOf(info: MediaInfo | undefined): QualityReport['durations']['source'] {
  return { container: finite(info?.duration), video: finite(info?.video?.duration), audio: finite(info?.audio[0]?.duration) };
}

/**
 * Measure every line and the outputs. With `input.lineCache`, a line whose key (lineMeasurementKeys)
 * was measured before is taken from it, and only the others are measured (and then kept, unless
 * their back-transcription failed).
 */
export async function measureQuality(input: QualityMeasureInput, env: QualityEnv, ctx: StageContext): Promise<QualityMeasurements> {
  // the outputs (ffmpeg, child processes) are measured while the lines are
  const [measured, outputs] = await settled([input.measuredLines ?? measureQualityLines(input, env, ctx), measureOutputs(input, env, ctx)]);
  const { loud, source, video, audio } = outputs;
  const { SIMILARITY_KINDS, SIMILARITY_THRESHOLDS } = await import('@dub/asr');
  const diff = (x: number | null, from: number | null): number | null => (x !== null && from !== null ? Math.round((x - from) * 1000) : null);
  const src = durationsOf(source);
  const v = durationsOf(video);
  const a = durationsOf(audio);
  return {
    lines: measured.lines,
    loudness: { integrated_lufs: finite(r1(loud.integrated)), true_peak_dbtp: finite(r1(loud.truePeak)), range_lu: finite(r1(loud.range)), measured_on: 'result_audio' },
    durations: {
      source: src,
      result_video: v,
      result_audio: a,
      // containers and the dubbed audio against the source container; the video stream against the source's video stream
      diff_ms: { result_video: diff(v.container, src.container), result_video_stream: diff(v.video, src.video), result_video_audio: diff(v.audio, src.container), result_audio: diff(a.container, src.container) },
    },
    similarityThreshold: SIMILARITY_THRESHOLDS[input.similarity.embedding],
    similarityKind: SIMILARITY_KINDS[input.similarity.embedding],
    measuredLines: measured.measuredLines,
    framePeaks: loud.framePeaks.map((p) => (Number.isFinite(p) ? p : null)),
    hopEnergies: loud.hopEnergies,
    hop: loud.hop,
    loudnessUpdated: input.previousLoudness !== undefined,
  };
}

/** Both results, once both have settled (no measurement left running when one fails). */
async function settled<A, B>(p: [Promise<A>, Promise<B>]): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled(p);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

/**
 * Every line's measurements: from the line cache where its key was measured before, else measured
 * now (and kept). Its progress is the quality stage's, whatever step runs inside (the timeline's
 * conversion, Whisper's windows, the speaker vectors).
 */
export async function measureQualityLines(input: QualityLinesInput, env: Omit<QualityEnv, 'media'>, context: StageContext): Promise<MeasuredLines> {
  const t0 = performance.now();
  const ctx = namedProgress(context, 'quality');
  const cache = input.lineCache;
  const keys = cache ? lineMeasurementKeys(input, cache, input.asr.engine === 'whisper' ? await whisperChunkSeconds() : 0) : undefined;
  const found = new Map<string, LineMeasurement>();
  if (cache && keys) {
    for (const l of input.lines) {
      const m = await cache.store.get(keys.get(l.segment.id));
      if (m) found.set(l.segment.id, m);
    }
  }
  const todo = input.lines.filter((l) => !found.has(l.segment.id));
  const measured = todo.length ? await measureLines({ ...input, lines: todo }, env, ctx) : { lines: new Map<string, LineMeasurement>(), failed: new Set<string>() };
  if (cache && keys) for (const [id, m] of measured.lines) if (!measured.failed.has(id)) await cache.store.put(keys.get(id), m);
  ctx.logger.info({ lines: input.lines.length, measured: todo.length, cached: found.size, seconds: Number(((performance.now() - t0) / 1000).toFixed(3)) }, 'quality: lines measured');
  const lines: Record<string, LineMeasurement> = {};
  for (const l of input.lines) lines[l.segment.id] = found.get(l.segment.id) ?? measured.lines.get(l.segment.id)!;
  return { lines, measuredLines: todo.map((l) => l.segment.id) };
}

/** EBU R128 loudness of the dubbed track and the probes of the outputs and the source. */
async function measureOutputs(input: QualityMeasureInput, env: QualityEnv, ctx: StageContext) {
  const loudness = input.trackLoudness ?? measureTrackLoudness(input.resultAudio, input.previousLoudness, env.media, ctx);
  const [loud, source, video, audio] = await Promise.all([loudness, probe(input.sourceVideo, env.media, ctx), probe(input.resultVideo, env.media, ctx), probe(input.resultAudio, env.media, ctx)]);
  return { loud, source, video, audio };
}

/** EBU R128 of the dubbed track with its frames' true peaks: in full, or updated from an earlier generation's where it changed. */
export function measureTrackLoudness(file: string, previous: QualityMeasureInput['previousLoudness'], media: MediaToolOptions, ctx: StageContext): Promise<LoudnessFrames> {
  return previous ? updateLoudnessFrames(file, previous, previous.changed, media, ctx) : measureLoudnessFrames(file, media, ctx);
}

/** Why no ASR engine can back-transcribe `locale` here, naming what would. */
export async function noBackTranscriberReason(locale: string): Promise<string> {
  const { asrInstallHints } = await import('@dub/asr');
  const name = getLocale(locale)?.name ?? locale;
  const hints = asrInstallHints(locale, ['pocketsphinx', 'whisper']);
  if (!/^en(-|$)/.test(locale)) hints.unshift('pocketsphinx speaks English only');
  return `no speech recognition engine for ${name} (${locale}) is installed here (${hints.join('; ')})`;
}
