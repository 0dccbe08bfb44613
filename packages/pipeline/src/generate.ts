/**
 * generate-version: a prepared (and possibly edited) version becomes the dubbed video and the
 * dubbed audio track.
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
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  blobKeys,
  getLocale,
  modelEngineRecord,
  recordTermsOf,
  QualityReportSchema,
  validate,
  ValidationError,
  type GenerateVersionJob,
  type EngineRecords,
  type JobRuntime,
  type QualityReport,
  type StageContext,
  type Transcript,
  type VersionScript,
} from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { AAC_CHUNK_FRAMES, encodeAudioChunked, mux, resample, streamStarts, type MediaToolOptions } from '@dub/media';
import { mixReplace, mixVoiceOver, updateMixReplace, STREAMING_LOUDNESS, VOICE_OVER_DEFAULTS, type MixResult } from '@dub/mix';
import { ArtifactCache, keyedFiles, type StageResult } from './artifacts.js';
import { StageRunner } from './stage-runner.js';
import { measureTrackLoudness, type MeasuredLines } from './generate-quality.js';
import { buildQualityReport } from './generate-quality-report.js';
import { planQuality, previousLoudness, qualityLines, qualityStage, startQualityLines, type MixUpdate } from './generate-quality-stage.js';
import { renderSpeechTimeline, timelineSampleRate } from './generate-timeline.js';
import { runLipsStage } from './generate-lips.js';
import { collectRedubState, markGenerationRunning, readRedubState, writeRedubState, type LoudnessNormalization, type MixState, type RedubCollection } from './redub-state.js';
import { withRates, withTurns } from './generate-rates.js';
import { STAGE_VERSION, stretchRecord, synthesizeLines, type PlacedSegment, type SegmentArtifact, type SynthesisResult } from './generate-synthesis.js';
import { translationLabel } from './prepare-version.js';
import { LIPS_ENGINES } from '@dub/lips';
import type { GenerateVersionOptions } from './generate-options.js';

export type { GenerateVersionOptions };

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

/** Progress share of each stage (rough CPU cost). */
const WEIGHTS = { source: 0.3, voices: 1, synthesis: 6, timeline: 0.5, background: 4, mix: 2, audio: 0.5, video: 1, quality: 2, publish: 0.2 };

/** with_lips: face tracking (once per source) and the lips stage (frame by frame, in reusable chunks) come before the mux. */
const WEIGHTS_WITH_LIPS: Record<string, number> = Object.fromEntries(Object.entries(WEIGHTS).flatMap(([k, w]) => (k === 'video' ? [['faces', 3], ['lips', 9], [k, w]] : [[k, w]])));

/**
 * How far the gain that brings a re-dubbed mix exactly to the target may be from the previous
 * generation's gain for that gain to be kept (dB; the integrated loudness then stays within this
 * of the target, inside EBU R128's +-0.5 LU tolerance for file delivery).
 */
export const GAIN_TOLERANCE_DB = 0.5;

interface MixStageValue {
  inputIntegrated: number;
  frames: number;
  gainDb: number;
  exactGainDb: number;
  gainKept: boolean;
  /** Replace mixes: whether the previous generation's mix was updated near the changed speech (frames computed again), or why not. */
  update?: MixUpdate;
}

/** The audio stage's value: how the dubbed track's AAC chunks were made. */
interface AudioStageValue {
  chunks: { total: number; encoded: number; reused: number };
  encode: string;
  fallback?: string;
  identities?: { settings: string; frames: number; hashes: string[] };
  /** Chunks whose identity came from the previous generation's (their samples were not read). */
  hashesReused?: number;
}

/**
 * The normalization of the version's latest earlier completed generation (its gain is kept by a
 * re-dub while within tolerance), with its mix state while the blobs that state names are there,
 * when it aimed at the same target with the same mix (replace or voice-over); else undefined.
 * Read from the generation's re-dub state (redub-state.ts), which revise keeps; a generation made
 * before re-dub states existed is read from its report and mix state under the result prefix.
 */
async function previousNormalization(rt: JobRuntime, job: GenerateVersionJob, targetLufs: number): Promise<(LoudnessNormalization & { generation: number; mixState?: MixState }) | undefined> {
  const usable = async (st: MixState | undefined, gainDb: number): Promise<MixState | undefined> =>
    // usable only while its blobs are there and it applied the gain the normalization says
    st && st.gainDb === gainDb && (await rt.store.has(st.mix)) && (await rt.store.has(st.speech)) && (!st.hops || (await rt.store.has(st.hops))) ? st : undefined;
  for (let g = job.generation - 1; g >= Math.max(1, job.generation - 20); g--) {
    const state = await readRedubState(rt.store, job.asset_id, job.version_id, g);
    if (state) {
      const n = state.normalization;
      if (!(n.target_lufs === targetLufs && state.voice_over === (job.options.voice_over === true))) return undefined;
      const mixState = await usable(state.mix, n.gain_db);
      return { ...n, generation: g, ...(mixState ? { mixState } : {}) };
    }
    const key = blobKeys.qualityReport(job.version_id, g);
    if (!(await rt.store.has(key))) continue;
    try {
      const report = JSON.parse((await rt.store.getBuffer(key)).toString('utf8')) as QualityReport;
      const n = report.loudness?.normalization;
      if (!(n && n.target_lufs === targetLufs && report.voice_over === (job.options.voice_over === true))) return undefined;
      const stateKey = blobKeys.mixState(job.version_id, g);
      const mixState = (await rt.store.has(stateKey)) ? await usable(JSON.parse((await rt.store.getBuffer(stateKey)).toString('utf8')) as MixState, n.gain_db) : undefined;
      return { ...n, generation: g, ...(mixState ? { mixState } : {}) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export async function generateVersion(job: GenerateVersionJob, rt: JobRuntime, opts: GenerateVersionOptions = {}): Promise<GenerateVersionResult> {
  if (!getLocale(job.locale)?.target) throw new ValidationError(`"${job.locale}" is not a supported target locale`, { field: 'locale' });
  const voiceOver = job.options.voice_over === true;
  const media: MediaToolOptions = { config: rt.config };
  const work = await mkdtemp(path.join(rt.config.tmpDir, 'dub-generate-'));
  const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: work });
  const withLips = job.mode === 'with_lips';
  const runner = new StageRunner(rt, cache, { type: 'generate-version', version_id: job.version_id }, { weights: withLips ? WEIGHTS_WITH_LIPS : WEIGHTS });
  const local = (key: string): Promise<string> => localPath(rt, key, work);
  let synth: SynthesisResult | undefined;
  // while this generation runs, another one of the asset collects no chunk blobs (redub-state.ts)
  let running: (() => Promise<void>) | undefined;
  // the quality stage's lines, measured beside the audio and video stages (stopped if the generation fails before it)
  const earlyLines = new AbortController();
  let linesMeasured: Promise<MeasuredLines> | undefined;
  try {
    running = await markGenerationRunning(rt.store, job.asset_id, job.version_id, job.generation);
    synth = await synthesizeLines(job, rt, opts, { runner, cache, local, media });
    const { ttsChoice, engineId, ttsModel, ttsLabel, conversion, conversionLabel, script, transcript, sourceKey, sourceIdentity, duration, voiceOverDelay, speakers, voices, utterances, segments, shortener, speedCap, speedLimit, getEngine } = synth;
    const voiced = segments.filter((s): s is PlacedSegment & { result: StageResult<SegmentArtifact> } => s.result !== undefined);

    // Speech timeline.
    const sampleRate = timelineSampleRate(voiced.map((s) => s.result.value.sampleRate), voiced.length ? 0 : (await getEngine()).capabilities.sampleRate);
    const timeline = await runner.run('timeline', { v: STAGE_VERSION, duration, sampleRate, segments: voiced.map((s) => [s.result.key, s.placement.start]) }, async (out, ctx) => {
      const entries = [];
      for (const s of voiced) {
        entries.push({ file: await local(s.result.files['speech.wav']!), start: s.placement.start, frames: s.result.value.frames, sampleRate: s.result.value.sampleRate });
      }
      const file = path.join(out.dir, 'speech.wav');
      await renderSpeechTimeline(file, entries, sampleRate, duration, ctx, media);
      out.addFile('speech.wav', file);
      return null;
    });
    const speechKey = timeline.files['speech.wav']!;
    const qualityPlan = await planQuality(rt, { job, transcript, speakers, segments, speechKey, local, opts, work });

    // Mix.
    let backgroundKey: string | undefined;
    let mixInputs: unknown;
    if (voiceOver) {
      mixInputs = { mode: 'voice_over', original: sourceIdentity, duckDb: opts.voiceOver?.duckDb ?? VOICE_OVER_DEFAULTS.duckDb, delay: voiceOverDelay };
    } else {
      backgroundKey = await backgroundOf(job, transcript, rt, runner, sourceIdentity, local);
      mixInputs = { mode: 'replace', background: backgroundKey };
    }
    // A re-dub keeps the gain of the version's previous generation while it is within tolerance: only the edited lines' samples of the mix change.
    const target = { ...STREAMING_LOUDNESS, ...opts.loudness }.integrated;
    const previous = await previousNormalization(rt, job, target);
    // The background at the mix's rate and format, converted once per background and kept.
    const mixBackground = async (ctx: StageContext): Promise<string> => {
      const r = await cache.run('mix-background', { v: 1, background: backgroundKey, sampleRate: 48000, channels: 2 }, ctx, async (out) => {
        const file = path.join(out.dir, 'background.wav');
        await resample(await local(backgroundKey!), file, { ...media, sampleRate: 48000, channels: 2, format: 'float32' }, ctx);
        out.addFile('background.wav', file);
        return null;
      });
      return local(r.files['background.wav']!);
    };
    const mixed = await runner.run<MixStageValue>('mix', { v: STAGE_VERSION, speech: speechKey, duration, loudness: opts.loudness ?? null, previousGainDb: previous?.gain_db ?? null, ...(mixInputs as object) }, async (out, ctx) => {
      const file = path.join(out.dir, 'mix.wav');
      const common = { speech: await local(speechKey), output: file, durationSeconds: duration, media, tmpDir: out.dir, ...(opts.loudness ? { loudness: opts.loudness } : {}), ...(previous ? { previousGainDb: previous.gain_db, gainToleranceDb: GAIN_TOLERANCE_DB } : {}) };
      let r: MixResult | undefined;
      let update: MixStageValue['update'];
      if (!voiceOver) {
        // A re-dub: the previous generation's mix with only the frames near the changed speech computed again (same bytes as a full mix).
        const state = previous?.mixState;
        if (!state) update = { used: false, reason: previous ? 'the previous generation left no mix state' : 'no previous generation' };
        else if (state.background !== backgroundKey || state.duration !== duration || !state.hops) update = { used: false, reason: 'the previous mix had another background or length' };
        else {
          const hops = new Float64Array(new Uint8Array(await rt.store.getBuffer(state.hops)).buffer);
          const u = await updateMixReplace({ ...common, background: await mixBackground(ctx), previous: { output: await local(state.mix), speech: await local(state.speech), gainDb: state.gainDb, hops } }, ctx);
          if ('fallback' in u) update = { used: false, reason: u.fallback };
          else {
            r = u;
            update = { used: true, from_generation: previous!.generation, frames: u.updated.reduce((a, s) => a + s.end - s.start, 0), spans: u.updated.map((s) => [s.start, s.end]), sampleRate: u.sampleRate };
          }
        }
      }
      r ??= voiceOver
        ? await mixVoiceOver({ ...common, original: await local(sourceKey), ...(opts.voiceOver?.duckDb !== undefined ? { duckDb: opts.voiceOver.duckDb } : {}), ...(opts.voiceOver?.delaySeconds !== undefined ? { delaySeconds: opts.voiceOver.delaySeconds } : {}) }, ctx)
        : await mixReplace({ ...common, background: await mixBackground(ctx) }, ctx);
      out.addFile('mix.wav', file);
      if (r.hops) {
        const hopsFile = path.join(out.dir, 'hops.f64');
        await writeFile(hopsFile, new Uint8Array(r.hops.buffer, r.hops.byteOffset, r.hops.byteLength));
        out.addFile('hops.f64', hopsFile);
      }
      return { inputIntegrated: r.inputIntegrated, frames: r.frames, gainDb: r.gainDb, exactGainDb: r.exactGainDb, gainKept: r.gainKept, ...(update ? { update } : {}) };
    });
    const normalization: LoudnessNormalization = {
      target_lufs: target,
      premix_lufs: Number.isFinite(mixed.value.inputIntegrated) ? Math.round(mixed.value.inputIntegrated * 100) / 100 : null,
      gain_db: Math.round(mixed.value.gainDb * 100) / 100,
      exact_gain_db: Math.round(mixed.value.exactGainDb * 100) / 100,
      tolerance_db: GAIN_TOLERANCE_DB,
      kept_from_generation: mixed.value.gainKept && previous ? previous.generation : null,
    };
    const mixKey = mixed.files['mix.wav']!;
    // The lines' measurements (Whisper's back-transcription above all) read the speech timeline and
    // the lines only: they run while the dubbed track is encoded (ffmpeg's AAC encoder, one core)
    // and muxed (startQualityLines). Not beside the mix: both are CPU-bound, and beside it the mix
    // took 11x longer on 2 cores, so the pair gained nothing.
    linesMeasured = startQualityLines(rt, qualityPlan, runner.context('quality').logger, earlyLines.signal);
    linesMeasured.catch(() => undefined);

    // Dubbed track and video.
    const lang = getLocale(job.locale)!.iso639_3;
    // AAC in chunks cached by their samples: a re-dub encodes only the chunks whose mix changed.
    const chunking = opts.audio ?? {};
    // A mix updated in place differs from the previous generation's only within the update's spans: the chunks away from them keep their identities unread.
    const update = mixed.value.update;
    const prevChunks = previous?.mixState?.chunks && update?.used && update.from_generation === previous.generation ? { ...previous.mixState.chunks, changed: update.spans.map(([start, end]) => ({ start, end })) } : undefined;
    const audio = await runner.run<AudioStageValue>('audio', { v: STAGE_VERSION, mix: mixKey, ...chunking }, async (out, ctx) => {
      const file = path.join(out.dir, 'result.m4a');
      const r = await encodeAudioChunked(await local(mixKey), file, { ...media, ...chunking, store: keyedFiles(rt.store, job.asset_id, 'audio-chunk', 'chunk.adts', local), tmpDir: out.dir, ...(prevChunks ? { previous: prevChunks } : {}) }, ctx);
      out.addFile('result.m4a', file);
      return { chunks: r.chunks, encode: r.encode, ...(r.fallback ? { fallback: r.fallback } : {}), identities: { settings: r.settings, frames: r.frames, hashes: r.hashes }, hashesReused: r.hashesReused };
    });
    // with_lips: the mouth follows the dubbed speech (the speech timeline, not the mix)
    let videoKey = sourceKey;
    // the lips chunk blobs the video is made of ([] without lips; null: not known)
    let lipsChunks: string[] | null = [];
    // Provenance: the script's engines (prepare's stages and translation) and this generation's.
    const engines: EngineRecords = {
      ...transcript.engines,
      ...(script.engines ?? { translation: { id: script.translation_engine, label: translationLabel(script.translation_engine), selected: 'auto' } }),
      tts: ttsModel
        ? { ...(await modelEngineRecord(engineId, ttsModel.file, { label: ttsLabel, selected: ttsChoice.selected, reason: ttsChoice.reason, terms: synth.ttsTerms, provider: rt.sessions.providers.get(ttsModel.file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined) })), ...(ttsChoice.passedOver ? { passed_over: ttsChoice.passedOver } : {}) }
        : { id: engineId, label: ttsLabel, ...synth.ttsTerms, ...(ttsChoice.passedOver ? { passed_over: ttsChoice.passedOver } : {}), selected: ttsChoice.selected, reason: ttsChoice.reason },
      voice_conversion: conversion.models[0]
        ? { ...(await modelEngineRecord('openvoice', conversion.models[0].file, { label: conversionLabel, selected: conversion.selected, reason: conversion.reason, terms: synth.conversionTerms, provider: rt.sessions.providers.get(conversion.models[0].file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined) })), files: conversion.models.map((f) => ({ name: f.model, sha256: f.sha256, size: f.size })) }
        : { id: 'none', label: conversionLabel, selected: conversion.selected, reason: conversion.reason },
      // lines fitted to their time: the pitch-preserving stretch filter this ffmpeg offers (no choice to configure)
      time_stretch: stretchRecord(synth.stretcher),
    };
    if (withLips) {
      const words = voiced.flatMap((s) => s.result.value.words.map((w) => ({ text: w.text, start: s.placement.start + w.start, end: s.placement.start + w.end })));
      const lips = await runLipsStage(rt, runner, { job, sourceKey, sourceIdentity, speechKey, ...(transcript.tracks ? { sourceSpeechKey: transcript.tracks.speech } : {}), words, media, local, ...(opts.lips ? { options: opts.lips } : {}) });
      videoKey = lips.videoKey;
      lipsChunks = lips.chunkKeys ?? null;
      const lipsSelected = opts.lips?.engine && opts.lips.engine !== 'auto' ? 'explicit' : 'auto';
      // the registry's reason for the engine it chose (under the model policy it names what auto passed over)
      const lipsReason = lips.engine === lips.chosen ? lips.reason : lipsSelected === 'explicit' ? `DUB_LIPS_ENGINE=${lips.engine}` : lips.engine === 'wav2lip' ? 'auto: the Wav2Lip model is installed' : 'auto: no Wav2Lip model here (classical mouth warp)';
      engines.lips = lips.modelFile
        ? await modelEngineRecord(lips.engine, lips.modelFile, { label: lips.label, selected: lipsSelected, reason: lipsReason, provider: lips.provider, terms: recordTermsOf(LIPS_ENGINES.termsOf(lips.engine, job.locale, { models: {} })) })
        : { id: lips.engine, label: lips.label, ...(lips.passedOver ? { passed_over: lips.passedOver } : {}), selected: lipsSelected, reason: lipsReason };
    }
    // the dubbed track is encoded once: the video takes the .m4a's AAC stream as it is
    const audioKey = audio.files['result.m4a']!;
    // The dubbed track's loudness (the quality stage's longest measurement) runs while the video is muxed.
    const prevLoudness = previousLoudness(previous?.mixState, mixed.value.update, previous?.generation, opts.audio?.chunkFrames ?? AAC_CHUNK_FRAMES);
    const early = new AbortController();
    const qualityCtx = runner.context('quality');
    const trackLoudness = measureTrackLoudness(await local(audioKey), prevLoudness?.previousLoudness, media, { ...qualityCtx, signal: qualityCtx.signal ? AbortSignal.any([qualityCtx.signal, early.signal]) : early.signal });
    trackLoudness.catch(() => undefined);
    // mux 2: the video's timestamps kept, the dubbed track starting where the source's audio starts
    const video = await runner.run('video', { v: STAGE_VERSION, mux: 2, audio: audioKey, source: sourceIdentity, lang, duration, ...(withLips ? { lips: videoKey } : {}) }, async (out, ctx) => {
      const file = path.join(out.dir, 'result.mp4');
      // the source video's audio starts this late on the timeline (its picture may start before it)
      const sourceAudio = (await streamStarts(await local(sourceKey), { ...media, only: 'audio' }, ctx)).audio ?? 0;
      const audioStart = sourceAudio > 0.0005 ? sourceAudio : 0;
      await mux({ ...media, video: await local(videoKey), audioTracks: [{ file: await local(audioKey), language: lang, title: `Dubbed (${job.locale})` }], output: file, durationSeconds: duration, copyAudio: true, audioStart }, ctx);
      out.addFile('result.mp4', file);
      return null;
    });

    // Quality: every line measured, and the outputs.
    const quality = await qualityStage(rt, runner, {
      job,
      script,
      transcript,
      speakers,
      segments,
      speechKey,
      sourceKey,
      videoKey: video.files['result.mp4']!,
      audioKey: audio.files['result.m4a']!,
      local,
      opts,
      media,
      work,
      ...(prevLoudness ?? {}),
      trackLoudness,
    }, qualityPlan, linesMeasured);
    // a quality stage from the cache did not need them
    early.abort();
    await trackLoudness.catch(() => undefined);
    earlyLines.abort();
    await linesMeasured.catch(() => undefined);
    // what the next generation updates its mix and loudness from (its re-dub state, written once the report is)
    const mixState: MixState = {
      mix: mixed.files['mix.wav']!,
      speech: speechKey,
      gainDb: mixed.value.gainDb,
      hops: mixed.files['hops.f64'] ?? null,
      background: backgroundKey ?? null,
      duration,
      ...(audio.value.identities ? { chunks: audio.value.identities } : {}),
      ...(quality.framePeaks ? { audio: audioKey, chunkFrames: opts.audio?.chunkFrames ?? AAC_CHUNK_FRAMES, framePeaks: quality.framePeaks, ...(quality.hopEnergies && quality.hop ? { hopEnergies: quality.hopEnergies, hop: quality.hop } : {}) } : {}),
    };
    const reportKey = blobKeys.qualityReport(job.version_id, job.generation);

    // Results and the report under the generation number, word timings, event.
    const t1 = performance.now();
    const resultVideoKey = blobKeys.resultVideo(job.version_id, job.generation);
    const resultAudioKey = blobKeys.resultAudio(job.version_id, job.generation);
    await rt.store.put(resultVideoKey, await rt.store.getStream(video.files['result.mp4']!));
    await rt.store.put(resultAudioKey, await rt.store.getStream(audio.files['result.m4a']!));
    await storeWordTimings(rt, job.script_key, script, segments);
    await runner.done('publish', false, (performance.now() - t1) / 1000);
    const report = validate<QualityReport>(
      QualityReportSchema,
      withTurns(withRates(buildQualityReport({
        job,
        sourceLocale: script.source_locale,
        voiceOverDelay: voiceOver ? voiceOverDelay : 0,
        speedCap,
        speedLimit,
        shortening: { engine: shortener.engine, possible: shortener.possible, reason: shortener.reason, ...(shortener.method ? { method: shortener.method } : {}) },
        lines: qualityLines(segments, utterances),
        measured: quality.measured,
        similarityEngine: quality.similarityEngine,
        stages: runner.timings,
        engines,
        transcript,
        voiceSources: voices.value.sources,
        normalization,
        now: new Date(),
      }), synth.pace, segments), segments, synth.turns),
      'quality report',
    );
    await rt.store.put(reportKey, Buffer.from(JSON.stringify(report, null, 2)));
    // The re-dub state outside the result prefix (revise keeps it), then what no live state needs any more.
    await writeRedubState(rt.store, job.asset_id, {
      v: 1,
      version_id: job.version_id,
      generation: job.generation,
      mode: withLips ? 'with_lips' : 'no_lips',
      created_at: new Date().toISOString(),
      voice_over: voiceOver,
      normalization,
      mix: mixState,
      aac_chunks: audio.value.identities?.hashes ?? null,
      lips_chunks: lipsChunks,
    });
    let collected: RedubCollection | undefined;
    try {
      collected = await collectRedubState(rt.store, job.asset_id, { self: { versionId: job.version_id, generation: job.generation }, logger: rt.ctx.logger });
    } catch (e) {
      rt.ctx.logger.warn({ err: e, asset_id: job.asset_id }, 're-dub state collection failed; the blobs stay until the next generation collects');
    }
    await rt.emit({
      type: 'version_generated',
      version_id: job.version_id,
      generation: job.generation,
      result_video_key: resultVideoKey,
      result_audio_key: resultAudioKey,
      speech_key: speechKey,
      ...(backgroundKey ? { background_key: backgroundKey } : {}),
      duration,
      engines,
      quality: { report_key: reportKey, ...report.summary },
    });
    const overlongSegments = report.segments.filter((s) => s.flags.includes('overflow')).map((s) => s.id);
    return { resultVideoKey, resultAudioKey, duration, overlongSegments, reportKey, report, ...(collected ? { collected } : {}) };
  } finally {
    earlyLines.abort();
    await linesMeasured?.catch(() => undefined);
    await running?.().catch((e) => rt.ctx.logger.warn({ err: e }, 'could not remove the running mark of the generation'));
    await synth?.dispose();
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

/**
 * The separated background: the track the transcript names (prepare-asset's separation output
 * or the given clean track); when the transcript names none, it is separated here from the
 * source video's audio, as a cached stage of its own.
 */
async function backgroundOf(job: GenerateVersionJob, transcript: Transcript, rt: JobRuntime, runner: StageRunner, sourceIdentity: unknown, local: (key: string) => Promise<string>): Promise<string> {
  const found = transcript.tracks?.background;
  if (found && (await rt.store.has(found))) {
    await runner.done('background', true, 0);
    return found;
  }
  const r = await runner.run('background', { v: STAGE_VERSION, source: sourceIdentity }, async (out, ctx: StageContext) => {
    const { extractAudio } = await import('@dub/media');
    const { separate } = await import('@dub/separation');
    const mix = path.join(out.dir, 'mix.wav');
    await extractAudio(await local(blobKeys.sourceVideo(job.asset_id)), mix, { config: rt.config, sampleRate: 44100, channels: 2 }, ctx);
    const speech = path.join(out.dir, 'speech.wav');
    const background = path.join(out.dir, 'background.wav');
    const run = () => separate(mix, { config: rt.config, sessions: sessionCacheOf(rt.sessions), tmpDir: out.dir, speechPath: speech, backgroundPath: background }, ctx);
    if (rt.withLimit) await rt.withLimit('gpu', run);
    else await run();
    out.addFile('background.wav', background);
    return null;
  });
  return r.files['background.wav']!;
}

/** Put the placed target word timings into the stored script (the studio and target SRT read them). */
async function storeWordTimings(rt: JobRuntime, scriptKey: string, script: VersionScript, segments: readonly PlacedSegment[]): Promise<void> {
  const byId = new Map(segments.map((s) => [s.slot.segment.id, s]));
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  const updated: VersionScript = {
    ...script,
    segments: script.segments.map((seg) => {
      const s = byId.get(seg.id);
      if (!s) return seg;
      const at = s.placement.start;
      return { ...seg, target_words: (s.result?.value.words ?? []).map((w) => ({ text: w.text, start: r3(at + w.start), end: r3(at + w.end) })) };
    }),
  };
  await rt.store.put(scriptKey, Buffer.from(JSON.stringify(updated)));
}
