/**
 * One line at a time, as generation would make it (the studio's Re-dub and voice previews):
 *
 * - redubSegment: one segment of a version re-synthesized with its current text (or the text
 *   given, not saved) and its speaker's voice, through generate-version's own synthesis code
 *   (generate-synthesis.ts: the same engine resolution, voice plan, `utterance` and `synthesis`
 *   cache entries and placement). Every line is synthesized at speed 1 and placed (a line's
 *   place depends on the others: from the cache after a generation), then only that segment is
 *   fitted to its placed time. The fitted line lands in the cache generation reads, so the next
 *   generation of the same script takes it from there instead of synthesizing it again.
 * - previewSpeakerVoice: a short text spoken at speed 1 with the voice a speaker gets under a
 *   voice choice (their own, a library voice, anonymized), planned exactly as generation plans it.
 *
 * Both return a 16-bit PCM WAV. Neither emits events or touches the version's state.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { NotFoundError, ValidationError, type GenerateVersionJob, type JobRuntime, type SpeakerVoice, type VersionScript } from '@dub/core';
import { encodeWav, readWav, type MediaToolOptions } from '@dub/media';
import { ArtifactCache } from './artifacts.js';
import { StageRunner } from './stage-runner.js';
import { synthesizeLines, type SynthesisResult } from './generate-synthesis.js';
import { resolveGenerateJob } from './generate-job.js';
import { resolveGenerateOptions, type GenerateVersionOptions } from './generate-options.js';

/** Longest text a re-dub or preview speaks (characters). */
export const REDUB_MAX_TEXT = 2000;

export interface RedubSegmentRequest {
  segmentId: string;
  /** The line's text (default: the script's); not saved. */
  text?: string;
  /** The line's speaker (default: the script's); not saved. */
  speaker?: string;
  /** The segment's times in seconds (default: the script's); not saved. */
  start?: number;
  end?: number;
}

export interface RedubSegmentResult {
  segment_id: string;
  speaker: string;
  text: string;
  /** 16-bit PCM WAV of the line as placed (its placed length). */
  wav: Buffer;
  sample_rate: number;
  duration_seconds: number;
  /** The placement generation gives the line (seconds on the video's timeline). */
  start: number;
  end: number;
  resolution: string;
  speed_factor: number;
  /** The line was synthesized now (false: generation or an earlier re-dub already had it, same text, voice and time). */
  regenerated: boolean;
  /** Other lines synthesized at speed 1 on the way (not in the cache yet: their natural lengths place this one). */
  others_synthesized: number;
  /** How the speaker's voice was chosen (the voice plan's source: matched, converted, library:<id>, ...). */
  voice_source: string;
  tts_engine: string;
  /** Blob key of the fitted line in the artifact cache (the entry generation reads). */
  artifact_key: string;
}

export interface PreviewVoiceRequest {
  speakerId: string;
  /** The voice choice to hear (default: the one saved in the script); null: no choice (the version's options). */
  voice?: SpeakerVoice | null;
  text: string;
}

export interface PreviewVoiceResult {
  speaker: string;
  text: string;
  wav: Buffer;
  sample_rate: number;
  duration_seconds: number;
  voice_source: string;
  tts_engine: string;
  /** The utterance came from the cache. */
  cached: boolean;
}

function checkText(text: string, field: string): string {
  if (typeof text !== 'string' || text.trim() === '') throw new ValidationError(`${field}: the text to speak is empty`, { field });
  if (text.length > REDUB_MAX_TEXT) throw new ValidationError(`${field}: ${text.length} characters; at most ${REDUB_MAX_TEXT}`, { field });
  return text;
}

/** A runtime for one request: no events, no follow-up jobs. */
function quiet(rt: JobRuntime): JobRuntime {
  return { ...rt, emit: async () => undefined, enqueue: async () => undefined };
}

async function withSynthesis<T>(
  job: GenerateVersionJob,
  rt: JobRuntime,
  opts: GenerateVersionOptions,
  extra: { only?: string; voicesOnly?: boolean; editScript(script: VersionScript): VersionScript },
  use: (s: SynthesisResult, local: (key: string) => Promise<string>) => Promise<T>,
): Promise<T> {
  const q = quiet(rt);
  const work = await mkdtemp(path.join(rt.config.tmpDir, 'dub-redub-'));
  const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: work });
  const runner = new StageRunner(q, cache, { type: 'redub', version_id: job.version_id }, { weights: { synthesis: 1 } });
  const media: MediaToolOptions = { config: rt.config };
  const local = async (key: string): Promise<string> => {
    const direct = rt.store.localPath(key);
    if (direct) return direct;
    const file = path.join(work, 'blobs', key.replace(/\//g, '__'));
    await rt.store.getToFile(key, file);
    return file;
  };
  let synth: SynthesisResult | undefined;
  try {
    synth = await synthesizeLines(resolveGenerateJob(job), q, resolveGenerateOptions(opts), { runner, cache, local, media, ...extra });
    return await use(synth, local);
  } finally {
    await synth?.dispose();
    await rm(work, { recursive: true, force: true });
  }
}

async function pcm16(file: string): Promise<{ wav: Buffer; sampleRate: number; seconds: number }> {
  const audio = await readWav(file);
  return { wav: encodeWav(audio, { format: 'pcm16' }), sampleRate: audio.sampleRate, seconds: (audio.channels[0]?.length ?? 0) / audio.sampleRate };
}

/**
 * Re-synthesize one segment (with its text, speaker or times replaced, unsaved, when given) of the version `job` describes (a generate-version job of the
 * version as it stands: its script key, locale and options) as generation would.
 * 404 when the segment is not in the script; 400 for an empty or over-long text, an unknown
 * speaker, or a line that cannot be spoken (no time, or past the end of the video).
 */
export async function redubSegment(job: GenerateVersionJob, rt: JobRuntime, opts: GenerateVersionOptions, req: RedubSegmentRequest): Promise<RedubSegmentResult> {
  if (req.text !== undefined) checkText(req.text, 'text');
  let found = false;
  const editScript = (script: VersionScript): VersionScript => {
    const seg = script.segments.find((s) => s.id === req.segmentId);
    if (!seg) throw new NotFoundError(`segment ${req.segmentId} is not in the script of version ${job.version_id}`, { details: { segment_id: req.segmentId } });
    found = true;
    if (req.speaker !== undefined && !script.speakers.some((s) => s.id === req.speaker)) {
      throw new ValidationError(`speaker: "${req.speaker}" is not one of the script's speakers (${script.speakers.map((s) => s.id).join(', ') || 'none'})`, { field: 'speaker' });
    }
    const text = req.text ?? checkText(seg.target_text, 'text');
    const start = req.start ?? seg.start;
    const end = req.end ?? seg.end;
    if (!(Number.isFinite(start) && start >= 0)) throw new ValidationError(`start: ${start} is not a time of 0 or more`, { field: 'start' });
    if (!(end > start)) throw new ValidationError(`segment ${seg.id} has no time (start ${start}, end ${end}): nothing to place the line in`, { field: req.end !== undefined || req.start !== undefined ? 'end' : 'segment_id' });
    return { ...script, segments: script.segments.map((s) => (s.id === seg.id ? { ...s, target_text: text, start, end, ...(req.speaker !== undefined ? { speaker: req.speaker } : {}) } : s)) };
  };
  return withSynthesis(job, rt, opts, { only: req.segmentId, editScript }, async (synth, local) => {
    if (!found) throw new NotFoundError(`segment ${req.segmentId} is not in the script of version ${job.version_id}`);
    const placed = synth.segments.find((s) => s.slot.segment.id === req.segmentId);
    if (!placed) throw new ValidationError(`segment ${req.segmentId} starts at or after the end of the video (${synth.duration.toFixed(2)} s): it is not spoken`, { field: 'segment_id' });
    if (!placed.result) throw new ValidationError(`segment ${req.segmentId}: nothing of the line fits before the end of the video (${synth.duration.toFixed(2)} s)`, { field: 'segment_id' });
    const utterance = synth.utterances.get(req.segmentId);
    const others = [...synth.utterances.entries()].filter(([id, u]) => id !== req.segmentId && !u.cached).length;
    const out = await pcm16(await local(placed.result.files['speech.wav']!));
    const speaker = placed.slot.segment.speaker;
    return {
      segment_id: req.segmentId,
      speaker,
      text: placed.spokenText,
      wav: out.wav,
      sample_rate: out.sampleRate,
      duration_seconds: out.seconds,
      start: placed.placement.start,
      end: placed.placement.end,
      resolution: placed.placement.resolution,
      speed_factor: placed.result.value.speedFactor,
      regenerated: !(utterance?.cached === true && placed.result.cached),
      others_synthesized: others,
      voice_source: synth.voices.value.sources[speaker] ?? 'default',
      tts_engine: synth.engineId,
      artifact_key: placed.result.files['speech.wav']!,
    };
  });
}

/**
 * `text` at speed 1 with the voice speaker `speakerId` gets under `voice` (the saved choice when
 * undefined), planned by generation's voice plan: what Re-dub would use after that choice is saved.
 */
export async function previewSpeakerVoice(job: GenerateVersionJob, rt: JobRuntime, opts: GenerateVersionOptions, req: PreviewVoiceRequest): Promise<PreviewVoiceResult> {
  checkText(req.text, 'text');
  let known = false;
  const editScript = (script: VersionScript): VersionScript => {
    known = script.speakers.some((s) => s.id === req.speakerId) || script.segments.some((s) => s.speaker === req.speakerId);
    if (!known) throw new NotFoundError(`speaker ${req.speakerId} is not in the script of version ${job.version_id}`, { details: { speaker: req.speakerId } });
    if (req.voice === undefined) return script;
    const speakers = script.speakers.some((s) => s.id === req.speakerId) ? script.speakers : [...script.speakers, { id: req.speakerId }];
    return {
      ...script,
      speakers: speakers.map((s) => {
        if (s.id !== req.speakerId) return s;
        const { voice: _old, ...rest } = s;
        return req.voice ? { ...rest, voice: req.voice } : rest;
      }),
    };
  };
  return withSynthesis(job, rt, opts, { voicesOnly: true, editScript }, async (synth, local) => {
    const voice = synth.voices.value.voices[req.speakerId];
    if (!voice) throw new NotFoundError(`speaker ${req.speakerId} has no voice in the plan`);
    const u = await synth.utter(req.text, voice);
    const out = await pcm16(await local(u.files['utterance.wav']!));
    return {
      speaker: req.speakerId,
      text: req.text,
      wav: out.wav,
      sample_rate: out.sampleRate,
      duration_seconds: out.seconds,
      voice_source: synth.voices.value.sources[req.speakerId] ?? 'default',
      tts_engine: synth.engineId,
      cached: u.cached,
    };
  });
}
