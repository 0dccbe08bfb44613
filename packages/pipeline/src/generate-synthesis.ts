/**
 * The synthesis half of generate-version, shared by generation and the one-line re-dub
 * (redub.ts), so both resolve the same engines, plan the same voices and write the same cache
 * artifacts: TTS engine and voice conversion resolution, the script and transcript, the source's
 * duration (`source` stage), the voice plan (`voices` stage), every line at speed 1
 * (`utterance`, keyed by text and voice), the placement of every line, and each line fitted to
 * its placed time (`synthesis`, keyed by text, voice, utterance and placed time). With `only`
 * every line is still synthesized at speed 1 and placed (a line's place depends on the others)
 * but only that segment is fitted.
 */
import os from 'node:os';
import path from 'node:path';
import {
  DubError,
  engineLabel,
  modelIdentity,
  recordTermsOf,
  reportProgress,
  throwIfAborted,
  ValidationError,
  type EngineRecord,
  type JobRuntime,
  type ModelIdentity,
  type RecordTerms,
  type Speaker,
  type StageContext,
  type Transcript,
  type VersionScript,
  type Word,
} from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { probe, readWav, WavReader, writeWav, type MediaToolOptions } from '@dub/media';
import { chatterboxTextStepNote, detectStretchers, espeakPoorNote, kokoroLocaleNote, TTS_ENGINES, type Stretcher, VOICE_CONVERSION_ENGINES, ToneColorConverter, withToneConversion, type TtsEngine, type TtsEngineConfig, type TtsEngineId, type VoiceSettings, speedResponseOf, INVERSE_SPEED, type SpeedResponse } from '@dub/voice';
import { inputsHash, type ArtifactCache, type StageResult } from './artifacts.js';
import type { StageRunner } from './stage-runner.js';
import { loadScript, loadTranscript } from './generate-inputs.js';
import { planVoices, type VoicePlan } from './generate-voices.js';
import { fitSegment, naturalSeconds, segmentSlots, type FittedSegment, type SegmentSlot } from './generate-segments.js';
import { placeLines, type Placement } from './generate-placement.js';
import type { Shortening } from './generate-quality.js';
import { shortenerFor, shortenLine, type LineLength, type Shortener } from './generate-shorten.js';
import { engineHost, resolveEngine } from './engine-choice.js';
import { mapConcurrent } from './concurrent.js';
import { linePace, linePaceOf, planPace, withLinePaces, PACE_VERSION, type LinePace, type PacePlan, type SpeakerPace } from './generate-pace.js';
import { calibrationLines, lengthRate, predictLength, PREDICT_VERSION, type LengthRate, type LengthSample } from './generate-predict.js';

/** The TTS engine a generate runs, why, and its voice model's identity (Piper). */
export interface TtsEngineChoice {
  id: TtsEngineId;
  selected: 'auto' | 'explicit';
  reason: string;
  models: ModelIdentity[];
  /** Installed engines auto passed over under the model policy "commercial" (the record's passed_over). */
  passedOver?: string[];
  /** The tts record's notes (Kokoro's pt-PT: Brazilian voices on European Portuguese phonemes). */
  notes?: string[];
}

/** The voice conversion a generate runs after synthesis (openvoice or none), why, and its files' identity (tone_clone_model first). */
export interface VoiceConversionChoice {
  id: string;
  selected: 'auto' | 'explicit';
  reason: string;
  models: ModelIdentity[];
}
import type { ResolvedGenerateOptions } from './generate-options.js';
import type { ResolvedGenerateJob } from './generate-job.js';

/** Bump when the output of a stage changes for the same inputs (new fitting, new mix). */
export const STAGE_VERSION = 1;

export interface UtteranceArtifact {
  sampleRate: number;
  frames: number;
  /** Seconds of speech, silence trimmed. */
  natural: number;
  /**
   * A line not spoken at speed 1: `natural` is predicted from its length units and its voice's
   * rate (generate-predict.ts); no audio file, `frames` 0.
   */
  predicted?: { units: number; speechSeconds: number; rate: LengthRate };
}

/**
 * A fitted line as the stage cache keeps it: FittedSegment with its audio as sample rate and frame
 * count (the samples are the artifact's file); pace and articulation optional (older artifacts).
 */
export interface SegmentArtifact
  extends Omit<FittedSegment, 'audio' | 'pace' | 'syllables' | 'articulationSeconds' | 'passes' | 'natural'>,
    Partial<Pick<FittedSegment, 'pace' | 'syllables' | 'articulationSeconds' | 'passes' | 'natural'>> {
  sampleRate: number;
  frames: number;
}

export interface PlacedSegment {
  slot: SegmentSlot;
  placement: Placement;
  spokenText: string;
  shortening: Shortening | null;
  /** Absent when nothing of the line fits before the end of the video (or, with `only`, for the other lines). */
  result?: StageResult<SegmentArtifact>;
}

export interface SynthesisInput {
  runner: StageRunner;
  cache: ArtifactCache;
  /** A local file for a blob key. */
  local(key: string): Promise<string>;
  media: MediaToolOptions;
  /** Fit only this segment (the others are synthesized at speed 1 and placed). */
  only?: string;
  /** Change the loaded script before anything reads it (re-dub: unsaved text, speaker or voice). */
  editScript?(script: VersionScript): VersionScript;
  /** Plan the voices only: no line is synthesized or placed (a voice preview then calls `utter`). */
  voicesOnly?: boolean;
}

export interface SynthesisResult {
  ttsChoice: TtsEngineChoice;
  engineId: TtsEngineId;
  ttsModel: ModelIdentity | undefined;
  /** The tts record's label (the Piper voice, "espeak-ng", "Chatterbox Multilingual"). */
  ttsLabel: string;
  conversion: VoiceConversionChoice;
  /** The voice_conversion record's label ("OpenVoice V2 tone colour", "no voice conversion"). */
  conversionLabel: string;
  /** The licence fields of the tts and voice_conversion records (the weights' terms in models/manifest.json; none without weights). */
  ttsTerms: RecordTerms;
  conversionTerms: RecordTerms;
  script: VersionScript;
  transcript: Transcript;
  sourceKey: string;
  sourceIdentity: { key: string; size: number; transcript: string };
  duration: number;
  voiceOver: boolean;
  voiceOverDelay: number;
  speakers: Speaker[];
  voices: StageResult<VoicePlan>;
  /** Each speaker's articulation rate and the rate input their lines were synthesized at; each line's source rate. */
  pace: PacePlan;
  utterances: Map<string, StageResult<UtteranceArtifact>>;
  segments: PlacedSegment[];
  shortener: Shortener;
  /** TURN_DEFAULTS when lines were placed by turns, false when line by line. */
  turns: { pause: number; shift: number } | false;
  speedCap: number;
  speedLimit: number;
  /** The time-stretch filter lines are fitted with: rubberband when this ffmpeg has it, else atempo (for the engine record). */
  stretcher: Stretcher;
  getEngine(): Promise<TtsEngine>;
  /** A text at speed 1 (or `speed`, the line's pace) with a voice, through the `utterance` cache generation uses. */
  utter(text: string, voice: VoiceSettings, slot?: SegmentSlot, speed?: number): Promise<StageResult<UtteranceArtifact>>;
  /** Release the TTS engine (and converter). */
  dispose(): Promise<void>;
}

/**
 * The engine record of the time stretch that fits lines to their time: ffmpeg's rubberband filter
 * (phase vocoder with transient handling) when this ffmpeg has it, else atempo (WSOLA). Neither
 * loads a model; it is chosen by what ffmpeg offers, so the record says which one and why.
 */
export function stretchRecord(stretcher: Stretcher): EngineRecord {
  return stretcher === 'rubberband'
    ? { id: 'rubberband', label: 'rubberband', selected: 'auto', reason: "auto: this ffmpeg has the rubberband filter (pitch-preserving phase vocoder)" }
    : { id: 'atempo', label: 'atempo', selected: 'auto', reason: "auto: this ffmpeg has no rubberband filter (librubberband), so ffmpeg's atempo (WSOLA) stretches the lines" };
}

export async function synthesizeLines(job: ResolvedGenerateJob, rt: JobRuntime, opts: ResolvedGenerateOptions, input: SynthesisInput): Promise<SynthesisResult> {
  const { runner, cache, media, local } = input;
  // The model policy (DUB_MODEL_POLICY) refuses an explicit engine whose weights are not cleared, before any line is synthesized.
  if (opts.tts.engine) TTS_ENGINES.checkPolicy(opts.tts.engine, job.locale, engineHost(rt.config.modelsDir));
  const { anonymization, voiceOver } = job;
  // auto: the registry's choice (Kokoro where it speaks the locale, Piper when the locale's voice is
  // installed, else espeak-ng); explicit engines come in opts. An explicit Chatterbox or Kokoro is
  // resolved here so a missing model or a language it refuses fails before any stage runs.
  // An explicit espeak-ng too: it has no voice for some locales (fil-PH), and speaks zh-CN and
  // ja-JP poorly, which its record then says (withEspeakNote).
  // Kokoro's pt-PT (Brazilian voices on European phonemes) is said in the record's notes (withKokoroNote).
  const ttsChoice: TtsEngineChoice = withKokoroNote(withEspeakNote(withTextStepNote(
    opts.tts.engine
      ? (opts.tts.engine === 'chatterbox' && !opts.tts.config?.chatterbox?.dir) || opts.tts.engine === 'kokoro' || opts.tts.engine === 'espeak-ng'
        ? await resolveTts(opts.tts.engine, job.locale, rt)
        : { id: opts.tts.engine, selected: 'explicit', reason: `DUB_TTS_ENGINE=${opts.tts.engine}`, models: [] }
      : await resolveTts('auto', job.locale, rt),
    job.locale,
  ), job.locale), job.locale);
  const engineId = ttsChoice.id;
  // the engine's measured length response to its speed (Kokoro), unless DUB_SPEED_RESPONSE=off (1/speed)
  const response = opts.synthesis.speedResponse ? speedResponseOf(engineId) : undefined;
  // Voice conversion to each speaker's tone colour (OpenVoice V2) when installed or chosen.
  const resolved: VoiceConversionChoice = await resolveEngine('voiceConversion', opts.voiceConversion, job.locale, engineHost(rt.config.modelsDir));
  // A cloning engine already speaks in each speaker's voice: auto converts nothing after it.
  const conversion: VoiceConversionChoice =
    engineId === 'chatterbox' && resolved.id === 'openvoice' && resolved.selected === 'auto' ? { id: 'none', selected: 'auto', reason: 'auto: Chatterbox clones each speaker\'s voice itself; no voice conversion after it', models: [] } : resolved;
  let converter: ToneColorConverter | undefined;
  let engine: TtsEngine | undefined;
  // One engine however many lines ask for it at once.
  let creating: Promise<TtsEngine> | undefined;
  const getEngine = (): Promise<TtsEngine> =>
    (creating ??= (async () => {
      const base = await createEngine(engineId, opts.tts.config, rt, { referenceFile: local, media });
      if (conversion.id !== 'openvoice') return (engine = base);
      converter = (await VOICE_CONVERSION_ENGINES.create('openvoice', { dir: path.dirname(conversion.models[0]!.file), sessions: sessionCacheOf(rt.sessions), device: rt.config.device }, engineHost(rt.config.modelsDir)))!;
      return (engine = withToneConversion(base, converter, { tmpDir: rt.config.tmpDir }));
    })().catch((e: unknown) => {
      creating = undefined;
      throw e;
    }));
  try {
    // The voice model (Piper) is part of the voices and synthesis keys: a new voice file re-synthesizes.
    const ttsModelFile = engineId === 'espeak-ng' ? undefined : (ttsChoice.models[0]?.file ?? (await getEngine()).modelFile?.(job.locale));
    const ttsModel = ttsModelFile ? await modelIdentity(ttsModelFile) : undefined;
    const loaded = await loadScript(rt.store, job.keys.script);
    const script = input.editScript ? input.editScript(loaded) : loaded;
    const transcript = await loadTranscript(rt.store, job.keys.transcript);
    const sourceKey = job.keys.sourceVideo;
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

    // Lines (and speakers' voices) are independent: an engine that runs a process per call (espeak-ng) does a few at once.
    const lineConcurrency = opts.synthesis.linesAtOnce ?? linesAtOnce(engineId, conversion.id);
    // Voices: every speaker of the transcript, and any speaker the script adds (a default voice).
    const speakers = speakersOf(transcript, script);
    const voices = await runner.run<VoicePlan>(
      'voices',
      // tone 2: a speaker's tone colour is the mean over the reference's ~10 s pieces (was: the whole clip at once)
      { v: STAGE_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, timbre: 1, conversion: conversion.models[0]?.sha256 ?? null, ...(conversion.models[0] ? { tone: 2 } : {}), locale: job.locale, library: job.voiceLibraryId ?? null, anonymization, speakers: speakers.map((s) => [s.id, s.reference_key ?? null, s.voice ?? null]) },
      async (out, ctx) => {
        const e = await getEngine();
        return planVoices(e, { locale: job.locale, speakers, libraryVoiceId: job.voiceLibraryId, anonymization, referenceFile: local, workDir: out.dir, media, speakersAtOnce: lineConcurrency, ...(converter ? { converter } : {}) }, ctx);
      },
    );

    // Synthesis: every line at speed 1 (its natural length), then placed, then fitted to its time.
    const synthCtx = runner.context('synthesis');
    const t0 = performance.now();
    const voiceOverDelay = opts.voiceOver.delaySeconds;
    // in voice-over the speech starts later by the delay: lines end that much before the end
    const limit = Math.max(0.05, duration - (voiceOver ? voiceOverDelay : 0));
    const slots = input.voicesOnly ? [] : segmentSlots(script.segments, limit);
    const voiceOf = (slot: SegmentSlot): VoiceSettings => {
      const v = voices.value.voices[slot.segment.speaker];
      if (!v) throw new ValidationError(`segment ${slot.segment.id}: speaker "${slot.segment.speaker}" is not one of the script's speakers (${Object.keys(voices.value.voices).join(', ') || 'none'})`, { field: 'segments', details: { segment: slot.segment.id, speaker: slot.segment.speaker } });
      return v;
    };
    for (const slot of slots) voiceOf(slot);
    const stretcher = (await detectStretchers(media, synthCtx))[0] ?? 'atempo';
    const { speedCap, speedLimit } = opts.placement;
    let allCached = true;
    // Engines that generate open-ended (Chatterbox) stop at the longest the line's slot allows.
    const capped = engineId === 'chatterbox';
    const utter = async (text: string, voice: VoiceSettings, slot?: SegmentSlot, speed = 1): Promise<StageResult<UtteranceArtifact>> => {
      const maxSeconds = capped && slot ? round6(maxLineSeconds(slot, speedLimit)) : undefined;
      // the rate input is part of the key (speed 1 keeps the keys of lines spoken at the default rate)
      const r = await cache.run<UtteranceArtifact>('utterance', { v: STAGE_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, conversion: conversion.models[0]?.sha256 ?? null, locale: job.locale, text, voice, ...(speed !== 1 ? { speed } : {}), ...(maxSeconds !== undefined ? { maxSeconds } : {}) }, synthCtx, async (out) => {
        const audio = await (await getEngine()).synthesize({ text, locale: job.locale, voice, speed, ...(maxSeconds !== undefined ? { maxSeconds } : {}) }, synthCtx);
        const file = path.join(out.dir, 'utterance.wav');
        await writeWav(file, audio, { format: 'float32' });
        out.addFile('utterance.wav', file);
        return { sampleRate: audio.sampleRate, frames: audio.channels[0]?.length ?? 0, natural: naturalSeconds(audio) };
      });
      allCached &&= r.cached;
      return r;
    };
    // A voice's length rate, kept per asset by voice (not by the lines it was measured on): an edit
    // of a voice's first line in a later generation or re-dub moves no other line's prediction.
    const voiceRate = async (voice: VoiceSettings, samples: LengthSample[]): Promise<LengthRate | undefined> => {
      const rate = lengthRate(samples);
      if (!rate) return undefined;
      const r = await cache.run<LengthRate>('length-rate', { v: STAGE_VERSION, predict: PREDICT_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, conversion: conversion.models[0]?.sha256 ?? null, locale: job.locale, voice }, synthCtx, async () => rate);
      allCached &&= r.cached;
      return r.value;
    };
    // A line's predicted length at speed 1 (no audio): keyed by what predicts it (its units and its voice's rate).
    const predicted = async (text: string, voice: VoiceSettings, units: number, rate: LengthRate): Promise<StageResult<UtteranceArtifact>> => {
      const p = predictLength(rate, units);
      const r = await cache.run<UtteranceArtifact>('utterance-length', { v: STAGE_VERSION, predict: PREDICT_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, conversion: conversion.models[0]?.sha256 ?? null, locale: job.locale, text, voice, units, rate }, synthCtx, async () => ({
        sampleRate: 0,
        frames: 0,
        natural: p.natural,
        predicted: { units, speechSeconds: p.speechSeconds, rate },
      }));
      allCached &&= r.cached;
      return r;
    };
    // The speakers' articulation rates (source), then each line's rate input for its speaker's pace.
    const enabled = opts.synthesis.speakerPace;
    const plan = await speakerRates(input, { script, transcript, speakers: Object.keys(voices.value.voices), cache, ctx: synthCtx, concurrency: lineConcurrency, local });
    const linePaces = new Map<string, { speaker: string; pace: LinePace }>();
    const paceOfLine = async (slot: SegmentSlot, text: string, u: StageResult<UtteranceArtifact>): Promise<LinePace> =>
      u.value.predicted
        ? linePaceOf(engineId, text, job.locale, u.value.predicted.speechSeconds, rateToMatch(plan.speakers[slot.segment.speaker]), enabled, synthCtx, response)
        : linePace(engineId, text, job.locale, await readWav(await local(u.files['utterance.wav']!)), rateToMatch(plan.speakers[slot.segment.speaker]), enabled, synthCtx, response);
    const paceOf = (slot: SegmentSlot): LinePace | undefined => linePaces.get(slot.segment.id)?.pace;
    const utterances = new Map<string, StageResult<UtteranceArtifact>>();
    const spokenText = new Map<string, string>();
    let uttered = 0;
    // Speaking each line once (generate-predict.ts): each voice's first lines at speed 1, the others' lengths predicted from them.
    const lengths = await lineLengthUnits(slots, voiceOf, { predict: opts.synthesis.predict && !capped && !input.voicesOnly, getEngine, locale: job.locale, ctx: synthCtx, concurrency: lineConcurrency });
    const calibration = lengths ? calibrationLines(slots.map((s) => ({ id: s.segment.id, voice: voiceKey(voiceOf(s)), units: lengths.get(s.segment.id)! }))) : undefined;
    const spokenAtOne = calibration ? slots.filter((s) => calibration.has(s.segment.id)) : slots;
    const measured = await mapConcurrent(spokenAtOne, lineConcurrency, async (slot) => {
      throwIfAborted(synthCtx.signal);
      const r = await utter(slot.segment.target_text, voiceOf(slot), slot);
      const pace = await paceOfLine(slot, slot.segment.target_text, r);
      linePaces.set(slot.segment.id, { speaker: slot.segment.speaker, pace });
      reportProgress(synthCtx, 'synthesis', (0.4 * ++uttered) / Math.max(1, slots.length));
      return [slot.segment.id, { u: r, speechSeconds: pace.voiceSeconds }] as const;
    });
    const byId = new Map<string, StageResult<UtteranceArtifact>>(measured.map(([id, m]) => [id, m.u]));
    if (lengths && calibration) {
      const rates = new Map<string, LengthRate | undefined>();
      const samples = new Map(measured.map(([id, m]) => [id, { units: lengths.get(id)!, natural: m.u.value.natural, speechSeconds: m.speechSeconds }]));
      for (const slot of slots) {
        if (calibration.has(slot.segment.id)) continue;
        const voice = voiceOf(slot);
        const key = voiceKey(voice);
        if (!rates.has(key)) rates.set(key, await voiceRate(voice, spokenAtOne.filter((s) => voiceKey(voiceOf(s)) === key).map((s) => samples.get(s.segment.id)!)));
        const rate = rates.get(key);
        const text = slot.segment.target_text;
        // a voice whose first lines gave no length (silent audio) speaks its lines at speed 1 first, as without prediction
        const r = rate ? await predicted(text, voice, lengths.get(slot.segment.id)!, rate) : await utter(text, voice, slot);
        linePaces.set(slot.segment.id, { speaker: slot.segment.speaker, pace: await paceOfLine(slot, text, r) });
        reportProgress(synthCtx, 'synthesis', (0.4 * ++uttered) / Math.max(1, slots.length));
        byId.set(slot.segment.id, r);
      }
      synthCtx.logger.info({ lines: slots.length, spokenAtSpeed1: spokenAtOne.length, rates: Object.fromEntries(rates) }, 'synthesis: line lengths predicted from each voice\'s first lines');
    }
    const spoken = slots.map((s) => byId.get(s.segment.id)!);
    for (const [i, slot] of slots.entries()) {
      utterances.set(slot.segment.id, spoken[i]!);
      spokenText.set(slot.segment.id, slot.segment.target_text);
    }

    // Placement (by turns unless DUB_PLACEMENT_TURNS=off): a shorter translation where the engine writes to a length budget or ranks alternatives.
    const shortener = await shortenerFor(script, opts.translate, cache, synthCtx, { condense: opts.placement.condense });
    const shortenings = new Map<string, Shortening>();
    const bySegment = new Map(slots.map((s) => [s.segment.id, s]));
    const turns = opts.placement.turns;
    // line by line (turns off) speeds are counted from the line's length at its pace, as before turns
    const speakerRateOf = (slot: SegmentSlot): number | null => (turns ? rateToMatch(plan.speakers[slot.segment.speaker]) : null);
    const placements = await placeLines(
      // a line's natural length: at its pace (its length at the default rate / the rate input); and at its speaker's rate, which speeds are counted from
      slots.map((s) => ({ id: s.segment.id, start: s.start, end: s.end, speaker: s.segment.speaker, ...lineLength(utterances.get(s.segment.id)!.value.natural, paceOf(s), speakerRateOf(s), response) })),
      {
        limit,
        speedCap,
        speedLimit,
        earlyStart: voiceOver ? voiceOverDelay : 0,
        turns,
        shorten: async (line, room) => {
          const slot = bySegment.get(line.id)!;
          let spoken: { u: StageResult<UtteranceArtifact>; pace: LinePace } | undefined;
          const r = await shortenLine(shortener, slot.segment, { natural: line.natural, ...(line.atSpeakerRate !== undefined ? { atSpeakerRate: line.atSpeakerRate } : {}) }, room, speedCap, async (text) => {
            const u = await utter(text, voiceOf(slot), slot);
            const pace = await paceOfLine(slot, text, u);
            spoken = { u, pace };
            return lineLength(u.value.natural, pace, speakerRateOf(slot), response);
          });
          shortenings.set(line.id, r.record);
          if (r.text === undefined || !r.length || !spoken) return undefined;
          utterances.set(line.id, spoken.u);
          spokenText.set(line.id, r.text);
          linePaces.set(line.id, { speaker: slot.segment.speaker, pace: spoken.pace });
          return r.length;
        },
      },
    );

    const segments: PlacedSegment[] = [];
    const toFit: { placed: PlacedSegment; run: () => Promise<StageResult<SegmentArtifact>> }[] = [];
    for (const p of placements) {
      const slot = bySegment.get(p.id)!;
      const text = spokenText.get(p.id)!;
      const voice = voiceOf(slot);
      const u = utterances.get(p.id)!;
      const placed: PlacedSegment = { slot, placement: p, spokenText: text, shortening: shortenings.get(p.id) ?? null };
      segments.push(placed);
      if (!(p.seconds > 0)) continue; // cut entirely at the end of the video (said in the report)
      if (input.only !== undefined && p.id !== input.only) continue; // one line (re-dub): the others are placed, not fitted
      const fitSeconds = p.seconds + p.truncated;
      const lp = paceOf(slot);
      const pace = lp?.pace ?? 1;
      // at its speaker's pace a short line is padded, not slowed below it (unless the engine's range stopped it short of a slower speaker)
      const slowest = lp && !lp.reason && !(lp.clamped && pace <= 1) ? pace : undefined;
      // rate: the artifact carries the line's articulation (syllables, speech seconds) and pace
      const inputs = { v: STAGE_VERSION, engine: engineId, model: ttsModel?.sha256 ?? null, conversion: conversion.models[0]?.sha256 ?? null, locale: job.locale, text, voice, utterance: u.key, seconds: round6(p.seconds), fit: round6(fitSeconds), speedLimit, stretcher, rate: PACE_VERSION, pace, slowest: slowest ?? null, ...(response ? { response: response.id } : {}) };
      const run = () =>
        cache.run<SegmentArtifact>('synthesis', inputs, synthCtx, async (out) => {
          const natural = u.value.predicted ? { predicted: u.value.natural } : await readWav(await local(u.files['utterance.wav']!));
          const fitted = await fitSegment(await getEngine(), text, natural, fitSeconds, p.seconds, { locale: job.locale, voice, stretcher, media, tmpDir: out.dir, speedLimit, pace, ...(slowest !== undefined ? { slowest } : {}), ...(response ? { response } : {}) }, synthCtx);
          const file = path.join(out.dir, 'speech.wav');
          await writeWav(file, fitted.audio, { format: 'float32' });
          out.addFile('speech.wav', file);
          const { audio, ...rest } = fitted;
          return { ...rest, sampleRate: audio.sampleRate, frames: audio.channels[0]!.length };
        });
      toFit.push({ placed, run });
    }
    let fittedCount = 0;
    await mapConcurrent(toFit, lineConcurrency, async ({ placed, run }) => {
      throwIfAborted(synthCtx.signal);
      placed.result = await run();
      allCached &&= placed.result.cached;
      reportProgress(synthCtx, 'synthesis', 0.4 + (0.6 * ++fittedCount) / Math.max(1, toFit.length));
      const p = placed.placement;
      if (p.resolution !== 'fits' && p.resolution !== 'used_gap_after' && p.resolution !== 'borrowed') synthCtx.logger.warn({ segment: p.id, resolution: p.resolution, slot: [p.slotStart, p.slotEnd], placed: [p.start, p.end], natural: p.natural }, 'line longer than its slot');
    });
    await runner.done('synthesis', allCached && slots.length > 0, (performance.now() - t0) / 1000);
    reportProgress(synthCtx, 'synthesis', 1);

    return {
      ttsChoice,
      engineId,
      ttsModel,
      ttsLabel: withVoices(engineLabel(TTS_ENGINES.get(engineId), ttsModel ? [ttsModel.file] : []), engineId, voices.value),
      conversionLabel: engineLabel(VOICE_CONVERSION_ENGINES.get(conversion.id), conversion.models.map((m) => m.file)),
      ttsTerms: recordTermsOf(TTS_ENGINES.termsOf(engineId, job.locale, engineHost(rt.config.modelsDir))),
      conversionTerms: conversion.models.length ? recordTermsOf(VOICE_CONVERSION_ENGINES.termsOf(conversion.id, job.locale, engineHost(rt.config.modelsDir))) : {},
      conversion,
      script,
      transcript,
      sourceKey,
      sourceIdentity,
      duration,
      voiceOver,
      voiceOverDelay,
      speakers,
      voices,
      pace: withLinePaces(plan, linePaces),
      utterances,
      segments,
      shortener,
      turns,
      speedCap,
      speedLimit,
      stretcher,
      getEngine,
      utter,
      dispose: async () => {
        await engine?.dispose();
      },
    };
  } catch (e) {
    await engine?.dispose();
    throw e;
  }
}

/** Lines of one voice share a length rate (generate-predict.ts). */
function voiceKey(v: VoiceSettings): string {
  return JSON.stringify(v);
}

/**
 * Each line's length units (TtsEngine.lengthUnits) when its lengths are to be predicted: the
 * engine counts them and has rate control; undefined otherwise (every line spoken at speed 1).
 */
async function lineLengthUnits(
  slots: readonly SegmentSlot[],
  voiceOf: (slot: SegmentSlot) => VoiceSettings,
  o: { predict: boolean; getEngine(): Promise<TtsEngine>; locale: string; ctx: StageContext; concurrency: number },
): Promise<Map<string, number> | undefined> {
  if (!o.predict || slots.length === 0) return undefined;
  const engine = await o.getEngine();
  if (!engine.capabilities.rateControl || !engine.lengthUnits) return undefined;
  const units = await mapConcurrent(slots, o.concurrency, (s) => engine.lengthUnits!({ text: s.segment.target_text, locale: o.locale, voice: voiceOf(s) }, o.ctx));
  return new Map(slots.map((s, i) => [s.segment.id, units[i]!]));
}

/**
 * The speakers' articulation rates and the source lines' (generate-pace.ts), cached by the
 * script's source lines and the speech track: espeak-ng syllable counting and the track's frames.
 */
async function speakerRates(
  input: SynthesisInput,
  s: { script: VersionScript; transcript: Transcript; speakers: string[]; cache: ArtifactCache; ctx: StageContext; concurrency: number; local(key: string): Promise<string> },
): Promise<PacePlan> {
  if (input.voicesOnly) return { speakers: {}, lines: {} };
  const transcriptWords = new Map(s.transcript.segments.map((t) => [t.id, t.words]));
  const segments = s.script.segments.map((g) => ({ ...g, source_words: g.source_words?.length ? g.source_words : (transcriptWords.get(g.id) ?? []) }));
  const inputs = {
    v: PACE_VERSION,
    // the speech track the source rates are measured in
    speech: s.transcript.tracks?.speech ?? null,
    source: s.script.source_locale,
    speakers: s.speakers,
    lines: segments.map((g) => [g.id, g.speaker, g.start, g.end, g.source_text, g.source_words.map((w) => [w.start, w.end])]),
  };
  const r = await s.cache.run<PacePlan>('pace', inputs, s.ctx, async () => {
    // the track is read span by span from disk: an hour of it is over a gigabyte of float samples
    const speech = s.transcript.tracks?.speech ? await WavReader.open(await s.local(s.transcript.tracks.speech)) : undefined;
    try {
      return await planPace(
        {
          ...(speech ? { sourceSpeech: speech } : {}),
          sourceLocale: s.script.source_locale,
          segments,
          transcriptWords: new Map(),
          speakers: s.speakers,
          concurrency: s.concurrency,
        },
        s.ctx,
      );
    } finally {
      await speech?.close();
    }
  });
  return r.value;
}

/**
 * A line's lengths for placement: at its pace (its default-rate length x the engine's response at
 * the rate input, `response`; without one, / the rate input) and, when
 * both rates are measured, at its speaker's rate (its default-rate length x its rate / the
 * speaker's): placement counts speeds from the latter, so a line is given the time it needs to be
 * spoken at its speaker's rate, also where the engine's range held its pace short of that rate
 * (clamped) or the pace's 0.05 steps rounded it.
 */
export function lineLength(defaultSeconds: number, lp: LinePace | undefined, speakerRate: number | null, response: SpeedResponse = INVERSE_SPEED): LineLength {
  const pace = lp?.pace ?? 1;
  const natural = pace === 1 ? defaultSeconds : defaultSeconds * response.lengthRatio(pace);
  if (!lp || lp.reason || !lp.voiceRate || !speakerRate || !(speakerRate > 0)) return { natural };
  return { natural, atSpeakerRate: (defaultSeconds * lp.voiceRate) / speakerRate };
}

/** The speaker's rate a line's pace is matched to: none when it was measured over spans with their pauses (no speech track, no words). */
function rateToMatch(sp: SpeakerPace | undefined): number | null {
  return sp && sp.basis !== 'span' ? sp.rate : null;
}

/**
 * How many lines a generate synthesizes and fits at once with engine `id`: espeak-ng runs a
 * process per call, so its lines share the CPU cores (at most 4 at once); the model engines
 * (Piper, Chatterbox) and voice conversion after any engine already spread one line over the
 * cores or the GPU, and run one line at a time.
 */
export function linesAtOnce(id: TtsEngineId, conversion: string, cores = os.availableParallelism()): number {
  return id === 'espeak-ng' && conversion !== 'openvoice' ? Math.max(1, Math.min(4, cores)) : 1;
}

/**
 * The longest a line may last: its slot at the fitting's speed limit, plus one second (placement
 * may give it the gap after its slot). Chatterbox's cap on new tokens comes from it.
 */
export function maxLineSeconds(slot: SegmentSlot, speedLimit: number): number {
  return (slot.end - slot.start) * Math.max(1, speedLimit) + 1;
}

function createEngine(id: TtsEngineId, config: TtsEngineConfig | undefined, rt: JobRuntime, io: { referenceFile(key: string): Promise<string>; media: MediaToolOptions }): Promise<TtsEngine> {
  const host = engineHost(rt.config.modelsDir);
  if (id === 'chatterbox') {
    // a voice's reference is the speaker's reference clip key in the blob store
    return TTS_ENGINES.create('chatterbox', { chatterbox: { ...config?.chatterbox, sessions: sessionCacheOf(rt.sessions), ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}), device: rt.config.device, tmpDir: rt.config.tmpDir, referenceFile: io.referenceFile, media: io.media } }, host);
  }
  if (id === 'piper') {
    return TTS_ENGINES.create('piper', { piper: { ...config?.piper, sessions: sessionCacheOf(rt.sessions), ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}), device: rt.config.device } }, host);
  }
  if (id === 'kokoro') {
    return TTS_ENGINES.create('kokoro', { kokoro: { ...config?.kokoro, sessions: sessionCacheOf(rt.sessions), ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}), device: rt.config.device } }, host);
  }
  return TTS_ENGINES.create(id, { [id]: { tmpDir: rt.config.tmpDir, ...config?.[id] } } as TtsEngineConfig, host);
}

/** The TTS engine of a generate: the registry's choice on this host's models and device. */
async function resolveTts(choice: string, locale: string, rt: JobRuntime): Promise<TtsEngineChoice> {
  const r = await resolveEngine('tts', choice, locale, { ...engineHost(rt.config.modelsDir), device: rt.config.device });
  return { id: r.id as TtsEngineId, selected: r.selected, reason: r.reason, models: r.models, ...(r.record.passed_over ? { passedOver: r.record.passed_over } : {}) };
}

/**
 * The choice with its reason saying, when Chatterbox speaks a locale whose reference text step is
 * not ported here (zh, ja, he, ru), that the text is tokenized without it: the tts engine record
 * (and so the version event, the API's Version and engines.json) carries it.
 */
export function withTextStepNote(choice: TtsEngineChoice, locale: string): TtsEngineChoice {
  const note = choice.id === 'chatterbox' ? chatterboxTextStepNote(locale) : undefined;
  return note ? { ...choice, reason: `${choice.reason}; ${note}` } : choice;
}

/** The choice with its reason saying why espeak-ng speaks the locale poorly (zh-CN, ja-JP), when it was chosen for one. */
export function withEspeakNote(choice: TtsEngineChoice, locale: string): TtsEngineChoice {
  const note = choice.id === 'espeak-ng' ? espeakPoorNote(locale) : undefined;
  return note ? { ...choice, reason: `${choice.reason}; ${note}` } : choice;
}

/**
 * The choice with the note Kokoro's record carries where its voices are not of the locale's own
 * variety (pt-PT: a Brazilian Portuguese voice reading espeak-ng's European Portuguese phonemes),
 * auto or explicit: engines.json, `dub run`'s summary and the report's engines list it.
 */
export function withKokoroNote(choice: TtsEngineChoice, locale: string): TtsEngineChoice {
  const note = choice.id === 'kokoro' ? kokoroLocaleNote(locale) : undefined;
  return note ? { ...choice, notes: [...(choice.notes ?? []), note] } : choice;
}

/**
 * The tts record's label with the library voices an engine with a voice library (Kokoro) speaks
 * with, in the order of the speakers ("Kokoro-82M v1.0 int8: em_alex, ef_dora"), as Piper's label
 * names its voice.
 */
export function withVoices(label: string, engineId: string, plan: VoicePlan): string {
  if (engineId !== 'kokoro') return label;
  const chosen = [...new Set(Object.values(plan.voices).map((v) => v.model).filter((m): m is string => !!m))];
  return chosen.length ? `${label}: ${chosen.join(', ')}` : label;
}

export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/**
 * The transcript's speakers (reference clips) with the choices saved in the script (name, voice),
 * then any speaker the script names that the transcript does not have (no reference clip).
 */
export function speakersOf(transcript: Transcript, script: VersionScript): Speaker[] {
  const chosen = new Map(script.speakers.map((sp) => [sp.id, sp]));
  const out: Speaker[] = transcript.speakers.map((sp) => {
    const c = chosen.get(sp.id);
    return { ...sp, ...(c?.name !== undefined ? { name: c.name } : {}), ...(c?.voice ? { voice: c.voice } : {}) };
  });
  for (const sp of script.speakers) if (!out.some((s) => s.id === sp.id)) out.push(sp);
  return out;
}
