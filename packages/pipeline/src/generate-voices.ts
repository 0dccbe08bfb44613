/**
 * The voice of every speaker for one generation: the library voice for all of them when
 * voice_library_id is set; otherwise each speaker's voice matched from their reference clip
 * (family, pitch and rate on espeak-ng, and the timbre: an equalisation toward the speaker's
 * long-term spectral envelope) and moved away by voice_anonymization. Engines with a library of
 * voices (Kokoro) take the one nearest the speaker's family and F0. Engines without pitch control
 * or voice choice (Piper) speak with their own voice.
 */
import path from 'node:path';
import type { Speaker, StageContext } from '@dub/core';
import { readWav, resample, type MediaToolOptions } from '@dub/media';
import { mapConcurrent } from './concurrent.js';
import {
  analyzeVoice,
  DEFAULT_VOICE,
  getLibraryVoice,
  CALIBRATION_TEXT,
  libraryVoiceSettings,
  spectralEnvelope,
  type ToneColorConverter,
  timbreCorrection,
  VoiceMatcher,
  type TtsEngine,
  type VoiceProfile,
  type VoiceSettings,
} from '@dub/voice';

export interface VoicePlan {
  /** Speaker id -> settings. */
  voices: Record<string, VoiceSettings>;
  /** How each voice was chosen: "library:<id>", "matched" (espeak-ng: pitch, rate, timbre; Kokoro: the voice nearest the speaker's family and F0, in `voices[id].model`), "timbre" (a neural voice moved toward the speaker's envelope), "converted" (converted to the speaker's tone colour), "cloned" (a cloning engine speaks in the voice of the speaker's reference clip), "default". */
  sources: Record<string, string>;
}

export interface VoicePlanRequest {
  locale: string;
  speakers: readonly Speaker[];
  libraryVoiceId: string | undefined;
  anonymization: number;
  /** Local path of a speaker's reference clip. */
  referenceFile(key: string): Promise<string>;
  workDir: string;
  media: MediaToolOptions;
  /** Timbre match toward each speaker's spectral envelope (default true; bench/voice-match.mjs measures it). */
  timbre?: boolean;
  /**
   * Voice conversion (OpenVoice V2): each speaker with a reference clip gets its tone colour
   * (`toneColor`), which the engine (withToneConversion) converts every line to; the timbre
   * filter is then not used. With voice_anonymization above 0 no voice is converted.
   */
  converter?: ToneColorConverter;
  /** Speakers planned at once (default 1): generate passes linesAtOnce (espeak-ng: one per core). The plan does not depend on it. */
  speakersAtOnce?: number;
}

/** A profile for speakers without a usable reference clip: a mid male voice. */
const FALLBACK_PROFILE: VoiceProfile = { medianF0: 120, f0RangeSemitones: 0, syllablesPerSecond: 0, speechSeconds: 0, gender: 'male' };

export async function planVoices(engine: TtsEngine, req: VoicePlanRequest, ctx: StageContext): Promise<VoicePlan> {
  let matcher: VoiceMatcher | undefined;
  let own: Promise<number[] | null> | undefined;
  // Each speaker's voice depends on that speaker alone (the matcher's calibrations are shared and made once).
  const planned = await mapConcurrent(req.speakers, req.speakersAtOnce ?? 1, async (sp, i): Promise<{ settings: VoiceSettings; source: string }> => {
    // The speaker's own choice (saved in the script) wins over the job's options.
    const choice = sp.voice;
    const libraryId = choice ? (choice.source === 'library' ? choice.library_voice_id : undefined) : req.libraryVoiceId;
    if (libraryId !== undefined) return { settings: libraryVoiceSettings(getLibraryVoice(libraryId), req.locale), source: `library:${libraryId}` };
    const anonymization = choice?.source === 'anonymized' ? (choice.anonymization ?? 1) : choice?.source === 'speaker' ? 0 : req.anonymization;
    const one = { ...req, anonymization };
    if (engine.capabilities.voiceCloning) {
      // Cloning engines (Chatterbox) speak in the voice of the speaker's reference clip; an
      // anonymized speaker, or one without a clip, gets the engine's default voice instead.
      const clone = !!sp.reference_key && anonymization === 0;
      return clone ? { settings: { ...DEFAULT_VOICE, reference: sp.reference_key! }, source: 'cloned' } : { settings: { ...DEFAULT_VOICE }, source: 'default' };
    }
    if (engine.capabilities.pitchControl) {
      matcher ??= new VoiceMatcher(engine);
      return matchedVoice(engine, matcher, sp, i, one, ctx);
    }
    if (engine.capabilities.voiceChoice && engine.chooseVoice) return chosenVoice(engine, sp, i, one, ctx);
    // Neural voices (Piper) keep their own voice; conversion or the timbre match moves it toward the speaker.
    const fallback = { settings: { ...DEFAULT_VOICE }, source: 'default' };
    const strength = 1 - anonymization;
    if (!sp.reference_key || strength <= 0) return fallback;
    if (req.converter) {
      // an anonymized voice is not converted to the speaker's tone colour
      const tone = anonymization === 0 ? await speakerTone(req, sp.reference_key, i, ctx) : undefined;
      return tone ? { settings: { ...DEFAULT_VOICE, toneColor: tone }, source: 'converted' } : fallback;
    }
    if (req.timbre === false) return fallback;
    const envelope = await referenceEnvelope(req, sp.reference_key, i, ctx);
    if (!envelope) return fallback;
    own ??= engine.synthesize({ text: CALIBRATION_TEXT, locale: req.locale, speed: 1, voice: { ...DEFAULT_VOICE } }, ctx).then((audio) => spectralEnvelope(audio.channels[0]!, audio.sampleRate));
    const ownEnvelope = await own;
    if (!ownEnvelope) return fallback;
    return { settings: { ...DEFAULT_VOICE, timbre: timbreCorrection(envelope, ownEnvelope, { strength }) }, source: 'timbre' };
  });
  const voices: Record<string, VoiceSettings> = {};
  const sources: Record<string, string> = {};
  for (const [i, sp] of req.speakers.entries()) {
    voices[sp.id] = planned[i]!.settings;
    sources[sp.id] = planned[i]!.source;
  }
  return { voices, sources };
}

/** espeak-ng matched to the speaker's reference (pitch, rate, timbre or tone colour), moved away by the anonymization. */
async function matchedVoice(engine: TtsEngine, matcher: VoiceMatcher, sp: Speaker, i: number, req: VoicePlanRequest, ctx: StageContext): Promise<{ settings: VoiceSettings; source: string }> {
  let profile = FALLBACK_PROFILE;
  let source = 'default';
  let envelope: number[] | null = null;
  if (sp.reference_key) {
    const wav = path.join(req.workDir, `reference-${i}.wav`);
    await resample(await req.referenceFile(sp.reference_key), wav, { ...req.media, sampleRate: 16000, channels: 1 }, ctx);
    const audio = await readWav(wav);
    const p = analyzeVoice(audio);
    if (p.medianF0 > 0) {
      profile = p;
      source = 'matched';
      envelope = spectralEnvelope(audio.channels[0]!, audio.sampleRate);
    } else ctx.logger.warn({ speaker: sp.id }, 'no voiced frames in the reference clip; default voice');
  }
  const m = await matcher.match(profile, { locale: req.locale, speakerIndex: i, anonymization: req.anonymization, ...(req.timbre !== false && !req.converter ? { referenceEnvelope: envelope } : {}) }, ctx);
  ctx.logger.debug({ speaker: sp.id, f0: profile.medianF0, target: m.targetF0, settings: m.settings }, 'voice matched');
  const tone = source === 'matched' && req.converter && req.anonymization === 0 ? await speakerTone(req, sp.reference_key!, i, ctx) : undefined;
  if (tone) return { settings: { ...m.settings, toneColor: tone }, source: 'converted' };
  return { settings: m.settings, source };
}

/**
 * A library voice of the engine (Kokoro) chosen for the speaker as the espeak-ng matcher chooses a
 * variant: family by the reference clip's F0 (moved by the anonymization), then the voice nearest
 * in F0 (speaker i takes the i-th nearest, so speakers of one family differ). Without a usable
 * clip, the fallback profile (a mid male voice), source `default`.
 */
async function chosenVoice(engine: TtsEngine, sp: Speaker, i: number, req: VoicePlanRequest, ctx: StageContext): Promise<{ settings: VoiceSettings; source: string }> {
  let profile = FALLBACK_PROFILE;
  let source = 'default';
  if (sp.reference_key) {
    const wav = path.join(req.workDir, `reference-${i}.wav`);
    await resample(await req.referenceFile(sp.reference_key), wav, { ...req.media, sampleRate: 16000, channels: 1 }, ctx);
    const p = analyzeVoice(await readWav(wav));
    if (p.medianF0 > 0) {
      profile = p;
      source = 'matched';
    } else ctx.logger.warn({ speaker: sp.id }, 'no voiced frames in the reference clip; default voice');
  }
  const m = engine.chooseVoice!(profile, { locale: req.locale, speakerIndex: i, anonymization: req.anonymization });
  ctx.logger.debug({ speaker: sp.id, f0: profile.medianF0, target: m.targetF0, voice: m.settings.model }, 'voice chosen');
  return { settings: m.settings, source };
}

/**
 * A speaker's tone colour (the converter's rate), or undefined when the clip has no voiced speech:
 * the mean of the tone colours of the clip's ~10 s pieces, as OpenVoice's se_extractor.py does
 * (ToneColorConverter.referenceTone, tonePieces).
 */
async function speakerTone(req: VoicePlanRequest, key: string, i: number, ctx: StageContext): Promise<number[] | undefined> {
  const converter = req.converter!;
  const wav = path.join(req.workDir, `tone-${i}.wav`);
  await resample(await req.referenceFile(key), wav, { ...req.media, sampleRate: converter.config.sampleRate, channels: 1 }, ctx);
  const audio = await readWav(wav);
  if (!(analyzeVoice(audio).medianF0 > 0)) return undefined;
  return Array.from(await converter.referenceTone(audio.channels[0]!));
}

/** The long-term spectral envelope of a speaker's reference clip (16 kHz mono); null without voiced speech. */
async function referenceEnvelope(req: VoicePlanRequest, key: string, i: number, ctx: StageContext): Promise<number[] | null> {
  const wav = path.join(req.workDir, `reference-${i}.wav`);
  await resample(await req.referenceFile(key), wav, { ...req.media, sampleRate: 16000, channels: 1 }, ctx);
  const audio = await readWav(wav);
  return analyzeVoice(audio).medianF0 > 0 ? spectralEnvelope(audio.channels[0]!, audio.sampleRate) : null;
}
