/**
 * The stage functions prepare calls, as one object so an embedding can swap an engine (and so
 * importing the pipeline loads no stage package): the defaults import @dub/media,
 * @dub/separation and @dub/asr on first use. Each takes files and returns plain data; none
 * knows about blobs, jobs or events.
 */
import { copyFile, mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import type { DubConfig, PartialContext, SpeakerAdjustment, Word } from '@dub/core';
import type { RemovedRepeats, SkippedWindow, VadEngineId } from '@dub/asr';
import type { SessionCache } from '@dub/onnx';
import type { MediaInfo } from '@dub/media';
import type { SeparatePlan, SeparationEngineId, SeparationPlan } from '@dub/separation';

export interface StageEnv {
  config: DubConfig;
  sessions: SessionCache;
  /** Where stages write temporary files. */
  tmpDir: string;
}

export interface Region {
  start: number;
  end: number;
}

export interface SpeechRegions {
  engine: string;
  duration: number;
  frameSeconds: number;
  regions: (Region & { probability: number })[];
}

export interface RecognizedSegment {
  start: number;
  end: number;
  text: string;
  words: Word[];
}

export interface Recognition {
  /** ASR engine id, or "source_srt". */
  engine: string;
  segments: RecognizedSegment[];
  /** Repetition loops cut to their first copy (Whisper's hallucination), with the removed text and the reason. */
  removedRepeats?: RemovedRepeats[];
  /** Windows Whisper judged silent (left out, or kept when every window was: noSpeechFallback). */
  skippedWindows?: SkippedWindow[];
}

export interface SpeakerTurns {
  /** Embedding engine id. */
  engine: string;
  /** The recognized segments labelled with their speaker (split where the speaker changes). */
  segments: (RecognizedSegment & { speaker: string })[];
  /** `reference.file`: the speaker's reference clip (6-20 s of its cleanest speech), a WAV. */
  speakers: { id: string; speechSeconds: number; reference?: { file: string } }[];
  /** How the count was reached, and clusters folded or merged into another speaker with the reason. */
  method?: 'speakers_count' | 'bic' | 'threshold' | 'none';
  adjustments?: SpeakerAdjustment[];
}

export interface PrepareStages {
  /** Probe and classify: AssetError unsupported_media / missing_audio_track. */
  probe(file: string, env: StageEnv, ctx: PartialContext): Promise<MediaInfo>;
  trim(input: string, output: string, range: Region, info: MediaInfo, env: StageEnv, ctx: PartialContext): Promise<void>;
  thumbnail(video: string, output: string, env: StageEnv, ctx: PartialContext): Promise<void>;
  /** Audio of [range) as WAV at `sampleRate` with `channels`. */
  extractAudio(input: string, output: string, range: Region | undefined, format: { sampleRate: number; channels: number }, env: StageEnv, ctx: PartialContext): Promise<void>;
  /**
   * Whether `mix` has a background worth separating and where the model must run: a VAD of the
   * mix (returned as `vad`), the background measured outside its speech, the model's spans built
   * from the same VAD at a sensitive threshold (`SPAN_VAD_THRESHOLD`); see @dub/separation
   * `planSeparation`. `vadEngine`: the VAD_ENGINES id (or auto) the VAD runs with.
   */
  planSeparation(mix: string, env: StageEnv, ctx: PartialContext, vadEngine?: string): Promise<{ vad: SpeechRegions; plan: SeparationPlan }>;
  /**
   * Split `mix` into speech and background files; given clean tracks replace the model, a `plan`
   * limits where it runs (none, spans, full) and, with `plan.speech`, what is replaced: outside
   * the speech the background is the mix itself (@dub/separation keepOutsideSpeech), `engine` names the model engine (SEPARATION_ENGINES:
   * htdemucs, the default, htdemucs-int8 or spleeter-2stems). Returns the engine id (`none` when no model ran).
   */
  separate(
    mix: string,
    out: { speech: string; background: string },
    given: { speech?: string; background?: string } | undefined,
    env: StageEnv,
    ctx: PartialContext,
    plan?: SeparatePlan,
    engine?: string,
  ): Promise<string>;
  /** Speech regions of `speech` by the VAD_ENGINES engine `engine` (default auto). */
  detectSpeech(speech: string, env: StageEnv, ctx: PartialContext, engine?: string): Promise<SpeechRegions>;
  /** ASR of the speech regions, or the source_srt as transcript. */
  transcribe(speech: string, request: { locale: string; sourceSrt?: string; regions: SpeechRegions; engine?: string }, env: StageEnv, ctx: PartialContext): Promise<Recognition>;
  /** Who speaks each segment (speakers_count, else estimated); reference clips written under `outDir`. */
  diarize(
    speech: string,
    request: { locale: string; segments: readonly RecognizedSegment[]; regions: SpeechRegions; speakersCount?: number; outDir: string; embedding?: 'mfcc' | 'onnx'; embeddingModel?: string; /** The segments are a source SRT's cues: their times are kept (no fitting to the speech). */ authored?: boolean },
    env: StageEnv,
    ctx: PartialContext,
  ): Promise<SpeakerTurns>;
}

/**
 * Silero probability from which a frame counts as speech when planning where HTDemucs runs (the
 * VAD's own threshold is 0.5). Speech buried in music gets low probabilities: a quiet phone call
 * under music-coffee.wav at its level scored p90 0.12, and 0.5 let 30 s of it pass as background;
 * at 0.2 the model ran on all of it, while on music alone it only added a 4 s span.
 */
export const SPAN_VAD_THRESHOLD = 0.2;

const tools = (env: StageEnv) => ({ config: env.config, ffmpegPath: env.config.ffmpegPath, ffprobePath: env.config.ffprobePath });

export const defaultStages: PrepareStages = {
  async probe(file, env, ctx) {
    const { probeSource } = await import('@dub/media');
    return probeSource(file, tools(env), ctx);
  },
  async trim(input, output, range, info, env, ctx) {
    const { trim } = await import('@dub/media');
    await trim(input, output, { ...tools(env), start: range.start, end: range.end, info }, ctx);
  },
  async thumbnail(video, output, env, ctx) {
    const { thumbnail } = await import('@dub/media');
    await thumbnail(video, output, { ...tools(env), width: 640 }, ctx);
  },
  async extractAudio(input, output, range, format, env, ctx) {
    const { extractAudio } = await import('@dub/media');
    await extractAudio(input, output, { ...tools(env), ...format, ...(range ? { start: range.start, end: range.end } : {}) }, ctx);
  },
  async planSeparation(mix, env, ctx, vadEngine) {
    const { detectSpeech, resolveVadOptions, speechRegions } = await import('@dub/asr');
    const { planSeparation } = await import('@dub/separation');
    const d = await detectSpeech(mix, { ...asrEnv(env), ...vadChoice(vadEngine) }, ctx);
    const vad: SpeechRegions = { engine: d.engine, duration: d.duration, frameSeconds: d.frameSeconds, regions: d.regions.map((r) => ({ start: r.start, end: r.end, probability: r.probability })) };
    const sensitive = speechRegions(d.probabilities, d.frameSeconds, d.duration, resolveVadOptions({ threshold: SPAN_VAD_THRESHOLD }));
    return { vad, plan: await planSeparation(mix, vad.regions, { spanRegions: sensitive }) };
  },
  async separate(mix, out, given, env, ctx, plan, engine) {
    const { separate } = await import('@dub/separation');
    // An id @dub/separation does not know is refused there (ValidationError), never replaced.
    const model = (engine ?? 'htdemucs') as SeparationEngineId;
    const base = { config: env.config, sessions: env.sessions, tmpDir: env.tmpDir, speechPath: out.speech, backgroundPath: out.background };
    const r = given ? await separate(mix, { ...base, given }, ctx) : await separate(mix, { ...base, engine: model, ...(plan ? { plan } : {}) }, ctx);
    // A given track is used in place: copy it to where the caller expects it.
    if (r.speech !== out.speech) await copyFile(r.speech, out.speech);
    if (r.background !== out.background) await copyFile(r.background, out.background);
    return given ? 'given_tracks' : plan?.mode === 'none' ? 'none' : model;
  },
  async detectSpeech(speech, env, ctx, engine) {
    const { detectSpeech } = await import('@dub/asr');
    const d = await detectSpeech(await speechAt16k(speech, env, ctx), { ...asrEnv(env), ...vadChoice(engine) }, ctx);
    return { engine: d.engine, duration: d.duration, frameSeconds: d.frameSeconds, regions: d.regions.map((r) => ({ start: r.start, end: r.end, probability: r.probability })) };
  },
  async transcribe(speech, request, env, ctx) {
    const { transcribe } = await import('@dub/asr');
    const t = await transcribe(
      await speechAt16k(speech, env, ctx),
      {
        locale: request.locale,
        ...(request.sourceSrt !== undefined ? { sourceSrt: request.sourceSrt } : {}),
        ...(request.engine === 'whisper' || request.engine === 'pocketsphinx' ? { engine: request.engine } : {}),
        speech: { ...request.regions, probabilities: new Float32Array(0) },
        // a transcript to dub: a loop's repeats go (the speaker said the phrase once), each removal recorded
        removeLoopRepeats: true,
        // the speech is there (the VAD found it): Whisper's text of it rather than an empty transcript, marked
        noSpeechFallback: true,
        ...asrEnv(env),
      },
      ctx,
    );
    return { engine: t.engine, segments: t.segments.map((s) => ({ start: s.start, end: s.end, text: s.text, words: s.words })), ...(t.removedRepeats ? { removedRepeats: t.removedRepeats } : {}), ...(t.skippedWindows ? { skippedWindows: t.skippedWindows } : {}) };
  },
  async diarize(speech, request, env, ctx) {
    const { diarize } = await import('@dub/asr');
    const d = await diarize(
      await speechAt16k(speech, env, ctx),
      {
        locale: request.locale,
        segments: request.segments.map((s) => ({ start: s.start, end: s.end, text: s.text, words: s.words.map((w) => ({ ...w, confidence: w.confidence ?? 1 })) })),
        speech: { ...request.regions, probabilities: new Float32Array(0) },
        ...(request.speakersCount !== undefined ? { speakersCount: request.speakersCount } : {}),
        referenceClips: { dir: request.outDir },
        ...(request.embedding ? { embedding: request.embedding } : {}),
        ...(request.embeddingModel ? { onnx: { file: request.embeddingModel } } : {}),
        ...(request.authored ? { lines: { fitSpans: false } } : {}),
        ...asrEnv(env),
      },
      ctx,
    );
    const segments = d.segments.map((s) => ({ start: s.start, end: s.end, text: s.text, words: s.words, speaker: s.speaker ?? d.speakers[0]?.id ?? 'speaker_1' }));
    const speakers = d.speakers.map((sp) => ({ id: sp.id, speechSeconds: sp.speechSeconds, ...(sp.reference?.file ? { reference: { file: sp.reference.file } } : {}) }));
    // Text where no speech window was long enough to tell speakers apart still has a speaker (no reference clip: a default voice).
    for (const s of segments) if (!speakers.some((sp) => sp.id === s.speaker)) speakers.push({ id: s.speaker, speechSeconds: 0 });
    return {
      engine: d.engine,
      segments,
      speakers,
      method: d.method,
      adjustments: d.adjustments,
    };
  },
};

/** Per prepare (its StageEnv), the 16 kHz copy of each speech file the stages read. */
const speech16 = new WeakMap<StageEnv, Map<string, Promise<string>>>();

/**
 * `file` as @dub/asr reads a file it is given: a 16 kHz mono pcm16 WAV, made by ffmpeg with the
 * same call @dub/asr makes (openSpeechAudio), once per prepare: the VAD, the transcription and
 * the speakers read the same speech track, which each converted again before. A file already in
 * that form is used as it is (as @dub/asr would).
 */
async function speechAt16k(file: string, env: StageEnv, ctx: PartialContext): Promise<string> {
  let made = speech16.get(env);
  if (!made) speech16.set(env, (made = new Map()));
  let p = made.get(file);
  if (!p) {
    const m = made;
    p = (async () => {
      const { extractAudio, WavReader } = await import('@dub/media');
      const r = await WavReader.open(file).catch(() => undefined);
      const ready = r !== undefined && r.sampleRate === SPEECH_RATE && r.channelCount === 1 && r.sampleFormat === 'pcm16';
      await r?.close();
      if (ready) return file;
      const out = path.join(await mkdtemp(path.join(env.tmpDir, 'dub-speech-16k-')), 'speech.wav');
      await extractAudio(file, out, { sampleRate: SPEECH_RATE, channels: 1, format: 'pcm16' }, ctx);
      return out;
    })();
    made.set(file, p);
    p.catch(() => m.delete(file));
  }
  return p;
}

/** @dub/asr's SPEECH_SAMPLE_RATE (Hz). */
const SPEECH_RATE = 16000;

/** The VAD option of an engine id or auto (an unknown id is refused by @dub/asr). */
function vadChoice(engine: string | undefined): { engine?: 'auto' | VadEngineId } {
  return engine ? { engine: engine as 'auto' | VadEngineId } : {};
}

/** What every @dub/asr stage takes from the worker: its sessions, device, threads, scratch dir and models dir. */
function asrEnv(env: StageEnv) {
  return {
    sessions: env.sessions,
    device: env.config.device,
    threads: env.config.onnxThreads,
    tmpDir: env.tmpDir,
    ...(env.config.modelsDir ? { models: { modelsDir: env.config.modelsDir } } : {}),
  };
}
