/**
 * prepare-asset: the source video becomes a transcript the versions translate.
 *
 *   media (blob or URL) -> probe + classify + limits -> checkTrim -> trim (source video blob)
 *   -> thumbnail -> audio -> separation plan (VAD of the mix, background measured outside the
 *   speech) -> separation where the plan says (or given tracks) -> VAD -> ASR (or source_srt)
 *   -> speakers (speakers_count or estimated; reference clips) -> transcript blob
 *   -> event asset_prepared -> one prepare-version job per version.
 *
 * Every step runs through the ArtifactCache keyed by its inputs (which include the keys of the
 * artifacts it reads), so a redelivered job skips what is finished (`stage_done` with
 * `cached: true`) and a changed input (another trim window, a new source_srt) re-runs only
 * what depends on it.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  AssetError,
  blobKeys,
  modelEngineRecord,
  recordTerms,
  validate,
  TranscriptSchema,
  type EngineRecord,
  type EngineRecords,
  type JobRuntime,
  type PrepareAssetJob,
  type PrepareVersionJob,
  type Transcript,
} from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { checkTrim, type MediaInfo } from '@dub/media';
import { sourceSrtNotes } from '@dub/srt';
import { ArtifactCache } from './artifacts.js';
import { copyBlob, LocalFiles } from './local-files.js';
import { resolveMedia, type ResolvedMedia } from './media-input.js';
import { StageRunner } from './stage-runner.js';
import type { SeparationPlan } from '@dub/separation';
import { defaultStages, type PrepareStages, type Recognition, type SpeakerTurns, type SpeechRegions, type StageEnv } from './stages.js';
import { buildTranscript, separationRecord } from './transcript.js';
import { separationGraph } from './separation-graph.js';
import { asrEngineIdentity, engineChoiceFromEnv, engineHost, resolveEngine, speakerEngineOf, type EngineChoice, type StageEngine } from './engine-choice.js';

export interface PrepareAssetOptions {
  stages?: Partial<PrepareStages>;
  /** Time limit of connecting to a media URL and of idle body reads (default 60 s). */
  fetchTimeoutMs?: number;
  /** Speaker engine (default: DUB_SPEAKER_ENGINE, else auto: WeSpeaker when installed, else MFCC). */
  speakerEngine?: EngineChoice['speaker'];
  /** Speech recognition engine (default: DUB_ASR_ENGINE, else auto: Whisper when installed and it speaks the locale, else pocketsphinx for English). */
  asrEngine?: EngineChoice['asr'];
  /** Voice activity engine (default: DUB_VAD_ENGINE, else auto: Silero when installed, else energy). */
  vadEngine?: EngineChoice['vad'];
  /** Separation engine (default: DUB_SEPARATION_ENGINE, else auto: HTDemucs when installed, else none). Clean tracks given with the asset replace it. */
  separationEngine?: EngineChoice['separation'];
}

export interface PrepareAssetResult {
  duration: number;
  sourceVideoKey: string;
  thumbnailKey: string | undefined;
  transcriptKey: string;
  transcript: Transcript;
  versionJobs: PrepareVersionJob[];
}

/** Progress share of each stage (rough CPU cost). */
const WEIGHTS = {
  'fetch-media': 1,
  'fetch-background': 0.5,
  'fetch-speech': 0.5,
  probe: 0.2,
  trim: 2,
  thumbnail: 0.3,
  audio: 0.5,
  'separation-plan': 1,
  separation: 12,
  vad: 1,
  transcription: 6,
  speakers: 3,
  transcript: 0.1,
};

const MIX_FORMAT = { sampleRate: 44100, channels: 2 };

/**
 * The ONNX execution provider a model file's session got in this worker (CUDA may fall back to
 * CPU); on a CPU-only worker, cpu. Undefined when the session is not loaded and the device is a GPU.
 */
export function providerOf(rt: Pick<JobRuntime, 'sessions' | 'config'>, file: string): 'cpu' | 'cuda' | undefined {
  return rt.sessions.providers.get(file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined);
}

/** What reading the source_srt as SRT normalised (readSrt's notes), for the transcript's asr record. */
function sourceNotes(sourceSrt: string | undefined): { notes?: string[] } {
  const notes = sourceSrt !== undefined ? sourceSrtNotes(sourceSrt) : [];
  return notes.length ? { notes } : {};
}

/**
 * yue-CN through a Whisper model without a Cantonese token (every model but large-v3: base and
 * small among them): Whisper transcribes it as Chinese (`zh`), in Mandarin's written form, so the
 * asr record says so (Cantonese words and particles may be missed or written as Mandarin).
 */
export function whisperLanguageNotes(locale: string, engine: string, label: string, files: readonly { file: string }[]): { notes?: string[] } {
  if (locale !== 'yue-CN' || engine !== 'whisper') return {};
  const tokenizer = files.find((f) => path.basename(f.file) === 'tokenizer.json');
  let hasYue = false;
  try {
    hasYue = tokenizer ? readFileSync(tokenizer.file, 'utf8').includes('"<|yue|>"') : false;
  } catch {
    /* unreadable: said as without */
  }
  if (hasYue) return {};
  return { notes: [`${label} has no Cantonese (yue) token: yue-CN was transcribed as Chinese (zh), in Mandarin's written form; Cantonese words and particles may be missing or written as Mandarin (Whisper large-v3 has yue)`] };
}

/** The deterministic job id of a version's prepare job (a redelivery enqueues the same id). */
export function prepareVersionJobId(versionId: string): string {
  return `${versionId}-prepare`;
}

export async function prepareAsset(job: PrepareAssetJob, rt: JobRuntime, opts: PrepareAssetOptions = {}): Promise<PrepareAssetResult> {
  const stages: PrepareStages = { ...defaultStages, ...opts.stages };
  const work = await mkdtemp(path.join(rt.config.tmpDir, 'dub-prepare-'));
  let videoWorkDone: Promise<{ error: unknown } | undefined> | undefined;
  try {
    const env: StageEnv = { config: rt.config, sessions: sessionCacheOf(rt.sessions), tmpDir: work };
    const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: work });
    const runner = new StageRunner(rt, cache, { type: 'prepare-asset' }, { weights: WEIGHTS });
    const files = new LocalFiles(rt.store, work);
    const limits = job.limits ?? {};
    const mediaOpts = { maxBytes: limits.max_media_bytes, allowPrivate: limits.allow_private_urls === true, fetchTimeoutMs: opts.fetchTimeoutMs ?? 60_000 };

    // Source media, probe, limits, trim window.
    const media = await resolveMedia(job.media, 'media_url', rt.store, runner, mediaOpts);
    const probed = await runner.run('probe', { media: media.identity }, async (_out, ctx) => {
      const info = await stages.probe(await files.path(media.key), env, ctx);
      return { ...info, file: '' } satisfies MediaInfo;
    });
    const info = probed.value;
    const range = checkTrim(info.duration, job.start_time, job.end_time);
    const duration = range.end - range.start;
    if (limits.max_video_seconds !== undefined && duration > limits.max_video_seconds) {
      throw new AssetError('video_duration_limit_reached', `the video is ${duration.toFixed(1)} s long (after trimming); the limit is ${limits.max_video_seconds} s`, {
        details: { duration, max: limits.max_video_seconds },
      });
    }

    // Source video (trimmed) and thumbnail: only the versions read them, so they are made while
    // the audio is analysed (the trim's AAC encode beside the ASR); awaited before the transcript.
    const videoWork = (async () => {
      // v2: the streams keep their places on the source's presentation timeline (no shift for AAC priming)
      const trimmed = await runner.run('trim', { v: 2, media: media.identity, range }, async (out, ctx) => {
        const file = path.join(out.dir, 'source.mp4');
        await stages.trim(await files.path(media.key), file, range, { ...info, file: await files.path(media.key) }, env, ctx);
        out.addFile('source.mp4', file);
        return { start: range.start, end: range.end };
      });
      const sourceVideoKey = blobKeys.sourceVideo(job.asset_id);
      if (!trimmed.cached || !(await rt.store.has(sourceVideoKey))) await copyBlob(rt.store, trimmed.files['source.mp4']!, sourceVideoKey);

      let thumbnailKey: string | undefined;
      try {
        const thumb = await runner.run('thumbnail', { source: trimmed.key }, async (out, ctx) => {
          const file = path.join(out.dir, 'thumbnail.jpg');
          await stages.thumbnail(await files.path(trimmed.files['source.mp4']!), file, env, ctx);
          out.addFile('thumbnail.jpg', file);
          return null;
        });
        thumbnailKey = blobKeys.thumbnail(job.asset_id);
        if (!thumb.cached || !(await rt.store.has(thumbnailKey))) await copyBlob(rt.store, thumb.files['thumbnail.jpg']!, thumbnailKey);
      } catch (e) {
        if ((e as { code?: string }).code === 'aborted') throw e;
        rt.ctx.logger.warn({ err: (e as Error).message }, 'no thumbnail; continuing without one');
        thumbnailKey = undefined;
      }
      return { sourceVideoKey, thumbnailKey };
    })();
    // Settled (its failure read) below or when the job ends; never an unhandled rejection.
    videoWorkDone = videoWork.then(
      () => undefined,
      (e: unknown) => ({ error: e }),
    );

    // Audio, separation (or the given clean tracks).
    // v2: sample 0 is the source's presentation origin (an audio stream that starts late is preceded by silence)
    const audio = await runner.run('audio', { v: 2, media: media.identity, range }, async (out, ctx) => {
      const file = path.join(out.dir, 'mix.wav');
      await stages.extractAudio(await files.path(media.key), file, range, MIX_FORMAT, env, ctx);
      out.addFile('mix.wav', file);
      return null;
    });
    const given: { speech?: ResolvedMedia; background?: ResolvedMedia } = {};
    if (job.speech) given.speech = await resolveMedia(job.speech, 'speech_url', rt.store, runner, { ...mediaOpts, maxBytes: undefined });
    if (job.background) given.background = await resolveMedia(job.background, 'background_url', rt.store, runner, { ...mediaOpts, maxBytes: undefined });
    const hasGiven = given.speech !== undefined || given.background !== undefined;
    // The engines of separation and VAD (DUB_SEPARATION_ENGINE, DUB_VAD_ENGINE): an explicit one that cannot run fails here, naming what to fetch.
    const choice = engineChoiceFromEnv(process.env);
    const vadEngine = await resolveEngine('vad', opts.vadEngine ?? choice.vad, undefined, engineHost(rt.config.modelsDir) as never);
    const vadIdentity = { engine: vadEngine.id, model: vadEngine.models[0]?.sha256 ?? null };
    const sepEngine = hasGiven ? undefined : await resolveEngine('separation', opts.separationEngine ?? choice.separation, undefined, { ...engineHost(rt.config.modelsDir), device: rt.config.device });
    // Without given tracks: is there a background to separate, and where does the model run?
    const planned = hasGiven
      ? undefined
      : // v2: the plan carries the speech regions (plan.speech) outside which the background is the mix; v3: with too few gaps the pauses between words may rule a background out
        await runner.run<{ vad: SpeechRegions; plan: SeparationPlan }>('separation-plan', { v: 3, mix: audio.key, vad: vadIdentity }, async (_out, ctx) => {
          const r = await stages.planSeparation(await files.path(audio.files['mix.wav']!), env, ctx, vadEngine.id);
          ctx.logger.info({ mode: r.plan.mode, reason: r.plan.reason, measurement: r.plan.measurement }, 'separation plan');
          return r;
        });
    // The engine `none` keeps a measured background in the speech track; an explicit model runs whatever the check found: the plan applied says so.
    const plan = planned && sepEngine ? planFor(planned.value.plan, sepEngine) : planned?.value.plan;
    // The model's identity is part of the key: a replaced HTDemucs separates again.
    const separationModel = sepEngine && plan?.mode !== 'none' ? sepEngine.models[0] : undefined;
    // Whole graph or its consecutive parts (same weights, outputs equal within float rounding): in the key and the record.
    const sepGraph = separationModel
      ? await separationGraph(separationModel.file, rt.config, sepEngine!.id)
      : undefined;
    const separated = await runner.run<{ engine: string; provider?: 'cpu' | 'cuda' }>(
      'separation',
      {
        mix: audio.key,
        given: hasGiven ? { speech: given.speech?.identity ?? null, background: given.background?.identity ?? null, range } : null,
        plan: planned?.key ?? null,
        // the mode applied (an explicit model runs where the check alone would run none), and v2: the mix kept outside speech
        mode: plan?.mode ?? null,
        keep: plan ? 2 : null,
        engine: sepEngine?.id ?? null,
        ...(separationModel ? { model: separationModel.sha256 } : {}),
        ...(sepGraph ? { graph: sepGraph.split ? `split-${sepGraph.split.parts.length}` : 'whole' } : {}),
      },
      async (out, ctx) => {
        const mix = await files.path(audio.files['mix.wav']!);
        const speech = path.join(out.dir, 'speech.wav');
        const background = path.join(out.dir, 'background.wav');
        let tracks: { speech?: string; background?: string } | undefined;
        if (hasGiven) {
          tracks = {};
          for (const kind of ['speech', 'background'] as const) {
            const g = given[kind];
            if (!g) continue;
            const file = path.join(out.dir, `given-${kind}.wav`);
            await stages.extractAudio(await files.path(g.key), file, range, MIX_FORMAT, env, ctx);
            tracks[kind] = file;
          }
        }
        const run = () => stages.separate(mix, { speech, background }, tracks, env, ctx, plan, sepEngine?.id);
        // No model, no GPU slot.
        const engine = rt.withLimit && plan?.mode !== 'none' ? await rt.withLimit('gpu', run) : await run();
        out.addFile('speech.wav', speech);
        out.addFile('background.wav', background);
        const provider = sepGraph ? providerOf(rt, sepGraph.sessionFile) : undefined;
        return { engine, ...(provider ? { provider } : {}) };
      },
    );
    const speechKey = separated.files['speech.wav']!;

    // Speech regions, transcript text, speakers.
    // When the speech track is the mix itself (no background), the mix's VAD is its VAD.
    const mixIsSpeech = plan?.mode === 'none' && !plan.background;
    const vad = await runner.run<SpeechRegions>('vad', { speech: speechKey, ...vadIdentity, ...(mixIsSpeech ? { same_as: planned!.key } : {}) }, async (_out, ctx) =>
      mixIsSpeech ? planned!.value.vad : stages.detectSpeech(await files.path(speechKey), env, ctx, vadEngine.id),
    );
    // The engine and its model files (sha256) are part of the key: installing Whisper transcribes again.
    const asr: StageEngine =
      job.source_srt !== undefined
        ? { id: 'source_srt', selected: 'explicit', reason: 'the asset has a source_srt', models: [], record: { id: 'source_srt', label: 'source subtitles', selected: 'explicit', reason: 'the asset has a source_srt' } }
        : await asrEngineIdentity(job.locale, rt.config.modelsDir, opts.asrEngine ?? choice.asr);
    const asrLabel = asr.record.label ?? asr.id;
    const recognition = await runner.run<Recognition & { provider?: 'cpu' | 'cuda' }>(
      'transcription',
      { speech: speechKey, vad: vad.key, locale: job.locale, source_srt: job.source_srt ?? null, engine: asr.id, model: asr.models.length ? asr.models.map((m) => [m.model, m.sha256]) : null },
      async (_out, ctx) => {
        const request = { locale: job.locale, regions: vad.value, ...(job.source_srt !== undefined ? { sourceSrt: job.source_srt } : asr.id !== 'none' ? { engine: asr.id } : {}) };
        const run = async () => stages.transcribe(await files.path(speechKey), request, env, ctx);
        const r = rt.withLimit ? await rt.withLimit('gpu', run) : await run();
        if (!r.segments.some((s) => s.text.trim() !== '')) throw new AssetError('empty_transcript', 'no spoken content was found in the video');
        const provider = asr.models[0] ? providerOf(rt, asr.models[0].file) : undefined;
        return { ...r, ...(provider ? { provider } : {}) };
      },
    );
    const speakerEngine = await speakerEngineOf(opts.speakerEngine ?? choice.speaker, rt.config.modelsDir);
    const speakers = await runner.run<SpeakerTurns & { provider?: 'cpu' | 'cuda' }>(
      'speakers',
      // v2: the output records how the count was reached and the clusters folded or merged
      // v3: the count by length-normalized BIC, and lines cut to at most 7 s at pauses (issue #26)
      { v: 3, speech: speechKey, transcription: recognition.key, speakers_count: job.speakers_count ?? null, engine: speakerEngine.id, model: speakerEngine.models[0]?.sha256 ?? null, window: speakerEngine.window ?? null },
      async (out, ctx) => {
        const refDir = path.join(out.dir, 'references');
        const turns = await stages.diarize(
          await files.path(speechKey),
          {
            locale: job.locale,
            segments: recognition.value.segments,
            regions: vad.value,
            ...(job.speakers_count !== undefined ? { speakersCount: job.speakers_count } : {}),
            outDir: refDir,
            embedding: speakerEngine.embedding,
            ...(speakerEngine.models[0] ? { embeddingModel: speakerEngine.models[0].file } : {}),
          },
          env,
          ctx,
        );
        for (const sp of turns.speakers) if (sp.reference) out.addFile(`reference-${sp.id}.wav`, sp.reference.file);
        const provider = speakerEngine.models[0] ? providerOf(rt, speakerEngine.models[0].file) : undefined;
        return { ...turns, speakers: turns.speakers.map((sp) => (sp.reference ? { ...sp, reference: { ...sp.reference, file: `reference-${sp.id}.wav` } } : sp)), ...(provider ? { provider } : {}) };
      },
    );
    const referenceKeys: Record<string, string> = {};
    for (const sp of speakers.value.speakers) if (sp.reference) referenceKeys[sp.id] = speakers.files[sp.reference.file]!;

    // The trimmed video and the thumbnail (their failure is the job's).
    const { sourceVideoKey, thumbnailKey } = await videoWork;

    // The transcript, the event, the versions.
    const t0 = performance.now();
    // What the background holds: the source's audio outside speech, the model's background (or silence) in it.
    const kept = plan ? (await import('@dub/separation')).keptOutsideSpeech(plan.speech ?? [], duration) : undefined;
    const separation = separationRecord(separated.value.engine, plan, kept);
    const keptWords = kept ? `; the background is the source's audio outside speech (${kept.keptSeconds.toFixed(1)} of ${duration.toFixed(1)} s kept as it is, ${kept.replacedSeconds.toFixed(1)} s of speech replaced${plan?.mode === 'none' ? ' by silence' : ' by the model\'s background'})` : '';
    const speakerLabel = speakerEngine.record.label ?? speakerEngine.id;
    const speakerRecord: EngineRecord = speakerEngine.models[0]
      ? await modelEngineRecord(speakerEngine.id, speakerEngine.models[0].file, { label: speakerLabel, selected: speakerEngine.selected, reason: speakerEngine.reason, provider: speakers.value.provider, terms: recordTerms(speakerEngine.record) })
      : { id: speakerEngine.id, label: speakerLabel, selected: speakerEngine.selected, reason: speakerEngine.reason };
    const engines: EngineRecords = {
      separation: separationModel
        ? { ...sepEngine!.record, ...(separated.value.provider ? { provider: separated.value.provider } : {}), reason: `${sepEngine!.reason}; ${plan?.reason ?? 'the separation plan'}; ${sepGraph?.reason ?? 'whole graph'}${keptWords}` }
        : { id: separated.value.engine, label: separated.value.engine === 'given_tracks' ? 'given clean tracks' : separated.value.engine === 'none' ? 'no separation' : separated.value.engine, selected: sepEngine?.selected ?? 'auto', reason: hasGiven ? 'clean tracks were given with the asset' : `${plan?.reason ?? 'no model ran'}${keptWords}` },
      vad: vadRecord(vadEngine, vadEngine.models[0] ? providerOf(rt, vadEngine.models[0].file) : undefined),
      asr: asr.models[0]
        ? { ...(await modelEngineRecord(recognition.value.engine, asr.models[0].file, { label: asrLabel, selected: asr.selected, reason: asr.reason, provider: recognition.value.provider, terms: recordTerms(asr.record) })), files: asr.models.map((m) => ({ name: m.model, sha256: m.sha256, size: m.size })), ...whisperLanguageNotes(job.locale, recognition.value.engine, asrLabel, asr.models) }
        : { id: recognition.value.engine, label: asrLabel, selected: asr.selected, reason: asr.reason, ...sourceNotes(job.source_srt) },
      speakers: speakerRecord,
    };
    // No separation model because the model policy refused the installed ones: the record names them, and its reason says why.
    const sepPassed = sepEngine?.record.passed_over;
    if (sepPassed?.length && engines.separation?.id === 'none') {
      const why = engines.separation.reason ?? '';
      engines.separation = { ...engines.separation, passed_over: sepPassed, reason: why.startsWith(sepEngine!.reason) ? why : `${sepEngine!.reason}; ${why}` };
    }
    const transcript = validate<Transcript>(
      TranscriptSchema,
      {
        ...buildTranscript(job.locale, duration, recognition.value.engine, speakers.value, referenceKeys, { speech: speechKey, background: separated.files['background.wav']! }, separation),
        speaker_engine: speakerRecord,
        engines,
      },
      'transcript',
    );
    const transcriptKey = blobKeys.transcript(job.asset_id);
    const json = JSON.stringify(transcript);
    const unchanged = (await rt.store.has(transcriptKey)) && (await rt.store.getBuffer(transcriptKey)).toString('utf8') === json;
    if (!unchanged) await rt.store.put(transcriptKey, Buffer.from(json));
    await runner.done('transcript', unchanged, (performance.now() - t0) / 1000);

    await rt.emit({
      type: 'asset_prepared',
      duration: transcript.duration,
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
    return { duration: transcript.duration, sourceVideoKey, thumbnailKey, transcriptKey, transcript, versionJobs };
  } catch (e) {
    // The trim ran first before the two overlapped: its failure is the one reported.
    const video = await videoWorkDone;
    throw video ? video.error : e;
  } finally {
    // Nothing of the job still writes into its work directory.
    await videoWorkDone;
    await rm(work, { recursive: true, force: true });
  }
}

/** The record of the VAD that ran, with the provider its model ran on (none for the energy VAD). */
function vadRecord(e: StageEngine, provider: 'cpu' | 'cuda' | undefined): EngineRecord {
  return e.models.length && provider ? { ...e.record, provider } : { ...e.record };
}

/**
 * The plan applied with the separation engine `engine`:
 * - `none`: a source with a background to separate keeps it in the speech track (mode none, the
 *   mix as speech; the background track is still the mix outside speech), and the reason says so;
 * - an explicit model (DUB_SEPARATION_ENGINE, --separation-engine) runs: where the check alone
 *   would load no model (no background to separate, or no speech) it runs everywhere, and the
 *   reason names both; the check never replaces an explicit choice;
 * - otherwise the plan as measured.
 */
export function planFor(plan: SeparationPlan, engine: Pick<StageEngine, 'id' | 'selected' | 'reason'>): SeparationPlan {
  if (engine.id === 'none') {
    if (plan.mode === 'none') return plan;
    return { ...plan, mode: 'none', background: false, spans: [], modelSeconds: 0, reason: `${engine.reason}: not separated, the source's audio stays in the speech track and outside speech in the background (the plan: ${plan.reason})` };
  }
  if (engine.selected === 'explicit' && plan.mode === 'none') {
    const duration = plan.measurement.duration;
    return { ...plan, mode: 'full', spans: duration > 0 ? [{ start: 0, end: duration }] : [], modelSeconds: duration, reason: `${engine.reason}: the model runs everywhere as chosen (the check alone would run none: ${plan.reason})` };
  }
  return plan;
}
