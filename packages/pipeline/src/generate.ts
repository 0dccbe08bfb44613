/**
 * generate-version: a prepared (and possibly edited) version becomes the dubbed video and the
 * dubbed audio track.
 *
 *   script + transcript -> voices (library voice, or each speaker's matched voice, anonymized)
 *   -> per segment: synthesis fitted to its slot (one artifact per segment, keyed by text, voice
 *      and slot, so editing one line re-synthesizes only that line)
 *   -> speech timeline (exact sample offsets) -> mix: replace (separated background) or
 *      voice-over (ducked original, delayed speech), loudness-normalised
 *   -> dubbed track (m4a, AAC) + mux with the source video (video stream copied)
 *   -> result blobs under the generation number -> target word timings in the script
 *   -> event version_generated.
 *
 * with_lips adds the lips stage (generate-lips.ts) after the mix: the source video's mouth region
 * is re-rendered to follow the dubbed speech (re-encoded video), and that video is muxed with the
 * dubbed track instead of the source's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  blobKeys,
  DubError,
  getLocale,
  modelEngineRecord,
  modelIdentity,
  reportProgress,
  throwIfAborted,
  ValidationError,
  type GenerateVersionJob,
  type EngineRecords,
  type JobRuntime,
  type StageContext,
  type Transcript,
  type VersionScript,
} from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { encodeAudio, mux, probe, writeWav, type MediaToolOptions } from '@dub/media';
import { mixReplace, mixVoiceOver, VOICE_OVER_DEFAULTS, type LoudnessTarget } from '@dub/mix';
import { createTtsEngine, detectStretchers, ToneColorConverter, withToneConversion, type TtsEngine, type TtsEngineConfig, type TtsEngineId } from '@dub/voice';
import { ArtifactCache, inputsHash, type StageResult } from './artifacts.js';
import { StageRunner } from './stage-runner.js';
import { loadScript, loadTranscript } from './generate-inputs.js';
import { planVoices, type VoicePlan } from './generate-voices.js';
import { segmentSlots, synthesizeSegment, type SegmentSlot } from './generate-segments.js';
import { renderSpeechTimeline, timelineSampleRate } from './generate-timeline.js';
import { runLipsStage } from './generate-lips.js';
import { resolveTtsEngine, resolveVoiceConversion, type TtsEngineChoice } from './engine-choice.js';
import type { LipsOptions } from '@dub/lips';

export interface GenerateVersionOptions {
  /** TTS engine (default espeak-ng) and its options. */
  tts?: { engine?: TtsEngineId; config?: TtsEngineConfig };
  /** Loudness target of the dubbed track (default -16 LUFS, -1.5 dBTP). */
  loudness?: Partial<LoudnessTarget>;
  /** Voice-over ducking and delay (defaults: 12 dB, 0.3 s). */
  voiceOver?: { duckDb?: number; delaySeconds?: number };
  /** Lips options for with_lips (engine, model files, encoding); the job's lips_model picks the profile. */
  lips?: LipsOptions;
  /** Voice conversion after synthesis (default auto: OpenVoice V2 when installed, else none). */
  voiceConversion?: 'openvoice' | 'none';
}

export interface GenerateVersionResult {
  resultVideoKey: string;
  resultAudioKey: string;
  duration: number;
  /** Segments whose line is longer than its slot even at the fastest tempo. */
  overlongSegments: string[];
}

/** Progress share of each stage (rough CPU cost). */
const WEIGHTS = { source: 0.3, voices: 1, synthesis: 6, timeline: 0.5, background: 4, mix: 2, audio: 0.5, video: 1, publish: 0.2 };

/** with_lips: face tracking (once per source) and the lips stage (frame by frame, in reusable chunks) come before the mux. */
const WEIGHTS_WITH_LIPS: Record<string, number> = Object.fromEntries(Object.entries(WEIGHTS).flatMap(([k, w]) => (k === 'video' ? [['faces', 3], ['lips', 9], [k, w]] : [[k, w]])));

/** Bump when the output of a stage changes for the same inputs (new fitting, new mix). */
const STAGE_VERSION = 1;

interface SegmentArtifact {
  sampleRate: number;
  frames: number;
  durationSeconds: number;
  speed: number;
  tempo: number;
  overrunSeconds: number;
  exceeded: boolean;
  words: { text: string; start: number; end: number }[];
}

export async function generateVersion(job: GenerateVersionJob, rt: JobRuntime, opts: GenerateVersionOptions = {}): Promise<GenerateVersionResult> {
  if (!getLocale(job.locale)?.target) throw new ValidationError(`"${job.locale}" is not a supported target locale`, { field: 'locale' });
  const anonymization = job.options.voice_anonymization ?? 0;
  const voiceOver = job.options.voice_over === true;
  const media: MediaToolOptions = { config: rt.config };
  const work = await mkdtemp(path.join(rt.config.tmpDir, 'dub-generate-'));
  const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: work });
  const withLips = job.mode === 'with_lips';
  const runner = new StageRunner(rt, cache, { type: 'generate-version', version_id: job.version_id }, { weights: withLips ? WEIGHTS_WITH_LIPS : WEIGHTS });
  const local = (key: string): Promise<string> => localPath(rt, key, work);
  // auto: Piper when the locale's voice is installed, else espeak-ng; explicit engines come in opts.
  const ttsChoice: TtsEngineChoice = opts.tts?.engine
    ? { id: opts.tts.engine, selected: 'explicit', reason: `DUB_TTS_ENGINE=${opts.tts.engine}` }
    : await resolveTtsEngine('auto', job.locale, rt.config.modelsDir);
  const engineId = ttsChoice.id;
  // Voice conversion to each speaker's tone colour (OpenVoice V2) when installed or chosen.
  const conversion = await resolveVoiceConversion(opts.voiceConversion ?? 'auto', rt.config.modelsDir);
  let converter: ToneColorConverter | undefined;
  let engine: TtsEngine | undefined;
  const getEngine = async (): Promise<TtsEngine> => {
    if (engine) return engine;
    const base = await createEngine(engineId, opts.tts?.config, rt);
    if (conversion.id !== 'openvoice') return (engine = base);
    converter = await ToneColorConverter.load({ dir: conversion.dir!, sessions: sessionCacheOf(rt.sessions), device: rt.config.device });
    return (engine = withToneConversion(base, converter, { tmpDir: rt.config.tmpDir }));
  };
  try {
    // The voice model (Piper) is part of the voices and synthesis keys: a new voice file re-synthesizes.
    const ttsModelFile = engineId === 'espeak-ng' ? undefined : (ttsChoice.model?.file ?? (await getEngine()).modelFile?.(job.locale));
    const ttsModel = ttsModelFile ? await modelIdentity(ttsModelFile) : undefined;
    const script = await loadScript(rt.store, job.script_key);
    const transcript = await loadTranscript(rt.store, job.asset_id);
    const sourceKey = blobKeys.sourceVideo(job.asset_id);
    const sourceStat = await rt.store.stat(sourceKey);
    if (!sourceStat) throw new DubError('not_found', `source video ${sourceKey} does not exist; prepare the asset first`, { retryable: false });
    const sourceIdentity = { key: sourceKey, size: sourceStat.size, transcript: inputsHash(transcript) };

    // Source facts: the container's duration, what players show (the longest stream: an audio
    // stream may outlast the video, and a variable-rate video's last frame may end before it).
    // The dubbed track lasts exactly as long; the video keeps every frame.
    const source = await runner.run('source', { source: sourceIdentity, length: 'container' }, async (_out, ctx) => {
      const info = await probe(await local(sourceKey), media, ctx);
      if (!info.video) throw new DubError('invalid_input', `source video ${sourceKey} has no video stream`);
      return { duration: info.duration > 0 ? info.duration : (info.video.duration ?? 0) };
    });
    const duration = source.value.duration;

    // Voices.
    // The transcript's speakers (reference clips) with the choices saved in the script (name, voice).
    const chosen = new Map(script.speakers.map((sp) => [sp.id, sp]));
    const speakers = (transcript.speakers.length ? transcript.speakers : script.speakers).map((sp) => {
      const c = chosen.get(sp.id);
      return { ...sp, ...(c?.name !== undefined ? { name: c.name } : {}), ...(c?.voice ? { voice: c.voice } : {}) };
    });
    const voices = await runner.run<VoicePlan>(
      'voices',
      { v: STAGE_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, timbre: 1, conversion: conversion.model?.sha256 ?? null, locale: job.locale, library: job.options.voice_library_id ?? null, anonymization, speakers: speakers.map((s) => [s.id, s.reference_key ?? null, s.voice ?? null]) },
      async (out, ctx) => {
        const e = await getEngine();
        return planVoices(e, { locale: job.locale, speakers, libraryVoiceId: job.options.voice_library_id, anonymization, referenceFile: local, workDir: out.dir, media, ...(converter ? { converter } : {}) }, ctx);
      },
    );

    // Synthesis, one artifact per segment.
    const synthCtx = runner.context('synthesis');
    const t0 = performance.now();
    const voiceOverDelay = opts.voiceOver?.delaySeconds ?? VOICE_OVER_DEFAULTS.delaySeconds;
    // in voice-over the speech starts later by the delay: keep that much room at the end
    const slots = segmentSlots(script.segments, duration, voiceOver ? voiceOverDelay : 0);
    const stretcher = (await detectStretchers(media, synthCtx))[0] ?? 'atempo';
    const segments: { slot: SegmentSlot; result: StageResult<SegmentArtifact> }[] = [];
    let allCached = true;
    for (const [i, slot] of slots.entries()) {
      throwIfAborted(synthCtx.signal);
      reportProgress(synthCtx, 'synthesis', i / Math.max(1, slots.length));
      const voice = voices.value.voices[slot.segment.speaker] ?? Object.values(voices.value.voices)[0];
      if (!voice) throw new DubError('invalid_input', `segment ${slot.segment.id}: speaker ${slot.segment.speaker} has no voice`);
      const inputs = { v: STAGE_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, conversion: conversion.model?.sha256 ?? null, locale: job.locale, text: slot.segment.target_text, voice, seconds: slot.seconds, overrun: slot.overrun, stretcher };
      const result = await cache.run<SegmentArtifact>('synthesis', inputs, synthCtx, async (out) => {
        const fitted = await synthesizeSegment(await getEngine(), slot, { locale: job.locale, voice, stretcher, media, tmpDir: out.dir }, synthCtx);
        const file = path.join(out.dir, 'speech.wav');
        await writeWav(file, fitted.audio, { format: 'float32' });
        out.addFile('speech.wav', file);
        if (fitted.exceeded) synthCtx.logger.warn({ segment: slot.segment.id, seconds: slot.seconds, fitted: fitted.durationSeconds }, 'line longer than its slot');
        const { audio, ...rest } = fitted;
        return { ...rest, sampleRate: audio.sampleRate, frames: audio.channels[0]!.length };
      });
      allCached &&= result.cached;
      segments.push({ slot, result });
    }
    await runner.done('synthesis', allCached && slots.length > 0, (performance.now() - t0) / 1000);
    reportProgress(synthCtx, 'synthesis', 1);

    // Speech timeline.
    const sampleRate = timelineSampleRate(segments.map((s) => s.result.value.sampleRate), segments.length ? 0 : (await getEngine()).capabilities.sampleRate);
    const timeline = await runner.run('timeline', { v: STAGE_VERSION, duration, sampleRate, segments: segments.map((s) => [s.result.key, s.slot.start]) }, async (out, ctx) => {
      const entries = [];
      for (const s of segments) {
        entries.push({ file: await local(s.result.files['speech.wav']!), start: s.slot.start, frames: s.result.value.frames, sampleRate: s.result.value.sampleRate });
      }
      const file = path.join(out.dir, 'speech.wav');
      await renderSpeechTimeline(file, entries, sampleRate, duration, ctx, media);
      out.addFile('speech.wav', file);
      return null;
    });
    const speechKey = timeline.files['speech.wav']!;

    // Mix.
    let backgroundKey: string | undefined;
    let mixInputs: unknown;
    if (voiceOver) {
      mixInputs = { mode: 'voice_over', original: sourceIdentity, duckDb: opts.voiceOver?.duckDb ?? VOICE_OVER_DEFAULTS.duckDb, delay: voiceOverDelay };
    } else {
      backgroundKey = await backgroundOf(job, transcript, rt, runner, sourceIdentity, local);
      mixInputs = { mode: 'replace', background: backgroundKey };
    }
    const mixed = await runner.run('mix', { v: STAGE_VERSION, speech: speechKey, duration, loudness: opts.loudness ?? null, ...(mixInputs as object) }, async (out, ctx) => {
      const file = path.join(out.dir, 'mix.wav');
      const common = { speech: await local(speechKey), output: file, durationSeconds: duration, media, tmpDir: out.dir, ...(opts.loudness ? { loudness: opts.loudness } : {}) };
      const r = voiceOver
        ? await mixVoiceOver({ ...common, original: await local(sourceKey), ...(opts.voiceOver?.duckDb !== undefined ? { duckDb: opts.voiceOver.duckDb } : {}), ...(opts.voiceOver?.delaySeconds !== undefined ? { delaySeconds: opts.voiceOver.delaySeconds } : {}) }, ctx)
        : await mixReplace({ ...common, background: await local(backgroundKey!) }, ctx);
      out.addFile('mix.wav', file);
      return { inputIntegrated: r.inputIntegrated, frames: r.frames };
    });
    const mixKey = mixed.files['mix.wav']!;

    // Dubbed track and video.
    const lang = getLocale(job.locale)!.iso639_3;
    const audio = await runner.run('audio', { v: STAGE_VERSION, mix: mixKey }, async (out, ctx) => {
      const file = path.join(out.dir, 'result.m4a');
      await encodeAudio(await local(mixKey), file, media, ctx);
      out.addFile('result.m4a', file);
      return null;
    });
    // with_lips: the mouth follows the dubbed speech (the speech timeline, not the mix)
    let videoKey = sourceKey;
    // Provenance: the script's engines (prepare's stages and translation) and this generation's.
    const engines: EngineRecords = {
      ...transcript.engines,
      ...(script.engines ?? { translation: { id: script.translation_engine, selected: 'auto' } }),
      tts: ttsModel
        ? await modelEngineRecord(engineId, ttsModel.file, { selected: ttsChoice.selected, reason: ttsChoice.reason, provider: rt.sessions.providers.get(ttsModel.file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined) })
        : { id: engineId, selected: ttsChoice.selected, reason: ttsChoice.reason },
      voice_conversion: conversion.model
        ? { ...(await modelEngineRecord('openvoice', conversion.model.file, { selected: conversion.selected, reason: conversion.reason, provider: rt.sessions.providers.get(conversion.model.file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined) })), files: conversion.files!.map((f) => ({ name: f.model, sha256: f.sha256, size: f.size })) }
        : { id: 'none', selected: conversion.selected, reason: conversion.reason },
    };
    if (withLips) {
      const words = segments.flatMap((s) => s.result.value.words.map((w) => ({ text: w.text, start: s.slot.start + w.start, end: s.slot.start + w.end })));
      const lips = await runLipsStage(rt, runner, { job, sourceKey, sourceIdentity, speechKey, ...(transcript.tracks ? { sourceSpeechKey: transcript.tracks.speech } : {}), words, media, local, ...(opts.lips ? { options: opts.lips } : {}) });
      videoKey = lips.videoKey;
      const lipsSelected = opts.lips?.engine && opts.lips.engine !== 'auto' ? 'explicit' : 'auto';
      const lipsReason = lipsSelected === 'explicit' ? `DUB_LIPS_ENGINE=${lips.engine}` : lips.engine === 'wav2lip' ? 'auto: the Wav2Lip model is installed' : 'auto: no Wav2Lip model here (classical mouth warp)';
      engines.lips = lips.modelFile
        ? await modelEngineRecord(lips.engine, lips.modelFile, { selected: lipsSelected, reason: lipsReason, provider: lips.provider })
        : { id: lips.engine, selected: lipsSelected, reason: lipsReason };
    }
    // the dubbed track is encoded once: the video takes the .m4a's AAC stream as it is
    const audioKey = audio.files['result.m4a']!;
    const video = await runner.run('video', { v: STAGE_VERSION, audio: audioKey, source: sourceIdentity, lang, duration, ...(withLips ? { lips: videoKey } : {}) }, async (out, ctx) => {
      const file = path.join(out.dir, 'result.mp4');
      await mux({ ...media, video: await local(videoKey), audioTracks: [{ file: await local(audioKey), language: lang, title: `Dubbed (${job.locale})` }], output: file, durationSeconds: duration, copyAudio: true }, ctx);
      out.addFile('result.mp4', file);
      return null;
    });

    // Results under the generation number, word timings, event.
    const t1 = performance.now();
    const resultVideoKey = blobKeys.resultVideo(job.version_id, job.generation);
    const resultAudioKey = blobKeys.resultAudio(job.version_id, job.generation);
    await rt.store.put(resultVideoKey, await rt.store.getStream(video.files['result.mp4']!));
    await rt.store.put(resultAudioKey, await rt.store.getStream(audio.files['result.m4a']!));
    await storeWordTimings(rt, job.script_key, script, segments);
    await runner.done('publish', false, (performance.now() - t1) / 1000);
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
    });
    const overlongSegments = segments.filter((s) => s.result.value.exceeded).map((s) => s.slot.segment.id);
    return { resultVideoKey, resultAudioKey, duration, overlongSegments };
  } finally {
    await engine?.dispose();
    await rm(work, { recursive: true, force: true });
  }
}

async function createEngine(id: TtsEngineId, config: TtsEngineConfig | undefined, rt: JobRuntime): Promise<TtsEngine> {
  if (id === 'piper') {
    return createTtsEngine('piper', { ...config?.piper, sessions: sessionCacheOf(rt.sessions), ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}), device: rt.config.device });
  }
  return createTtsEngine(id, { tmpDir: rt.config.tmpDir, ...config?.[id] } as never);
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
async function storeWordTimings(rt: JobRuntime, scriptKey: string, script: VersionScript, segments: readonly { slot: SegmentSlot; result: StageResult<SegmentArtifact> }[]): Promise<void> {
  const byId = new Map(segments.map((s) => [s.slot.segment.id, s]));
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  const updated: VersionScript = {
    ...script,
    segments: script.segments.map((seg) => {
      const s = byId.get(seg.id);
      if (!s) return seg;
      return { ...seg, target_words: s.result.value.words.map((w) => ({ text: w.text, start: r3(s.slot.start + w.start), end: r3(s.slot.start + w.end) })) };
    }),
  };
  await rt.store.put(scriptKey, Buffer.from(JSON.stringify(updated)));
}
