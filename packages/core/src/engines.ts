/**
 * Provenance of an engine run: which engine a stage ran, with which model file (name, sha256,
 * size), on which ONNX execution provider, how it was chosen and why. The same record is written
 * in the transcript (prepare's stages), the script (translation), the `version_generated` event,
 * the API's Version object and `dub run`'s engines.json.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';

export const EngineRecordSchema = Type.Object({
  /** Engine id (htdemucs, silero, whisper, pocketsphinx, wespeaker, mfcc, apertium, espeak-ng, piper, chatterbox, wav2lip, viseme-warp, ...). */
  id: Type.String(),
  /**
   * Short human-readable name of what ran: the engine and, where it has one, its model (e.g.
   * "Silero VAD v5", "energy VAD", "HTDemucs v4", "no separation", "Whisper base", "WeSpeaker
   * ResNet34", "Apertium", "Piper es_ES-davefx-medium", "espeak-ng", "Wav2Lip GAN 96", "viseme
   * warp", "rubberband"). Every record the pipeline writes has one; records written before it
   * existed lack it.
   */
  label: Type.Optional(Type.String()),
  /** File name of the engine's model, where it has one. */
  model: Type.Optional(Type.String()),
  /** sha256 of that file (hex). */
  sha256: Type.Optional(Type.String()),
  /** Size of that file in bytes. */
  size: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Every file of a model made of several (Whisper: encoder, decoder, tokenizer); `model`/`sha256` name the first. */
  files: Type.Optional(Type.Array(Type.Object({ name: Type.String(), sha256: Type.String(), size: Type.Integer({ minimum: 0 }) }))),
  /** ONNX execution provider the model ran on; absent for engines that are not ONNX models (native tools, services). */
  provider: Type.Optional(Type.Union([Type.Literal('cpu'), Type.Literal('cuda')])),
  /** The manifest entry whose terms cover the weights that ran (models/manifest.json `models`, `derived` or `system`); absent for engines without weights. */
  model_id: Type.Optional(Type.String()),
  /** Licence id of those weights: an SPDX id (MIT, CC-BY-4.0, ...) or a named licence ("Demucs weights: scientific purposes only"). */
  license: Type.Optional(Type.String()),
  /** Whether a business may use those weights commercially, by their authors' words (`no`/`unclear`: `dub run`, doctor and the studio warn). */
  commercial: Type.Optional(Type.Union([Type.Literal('yes'), Type.Literal('no'), Type.Literal('unclear')])),
  /** Installed engines `auto` passed over because the model policy "commercial" refuses their weights (the reason names their licences). */
  passed_over: Type.Optional(Type.Array(Type.String())),
  /** auto: picked by the engine selection; explicit: named by DUB_<STAGE>_ENGINE, a flag or the job. */
  selected: Type.Union([Type.Literal('auto'), Type.Literal('explicit')]),
  /** Why this engine ran (e.g. "auto: no Wav2Lip model here", "clean source: no background to separate"). */
  reason: Type.Optional(Type.String()),
  /**
   * What was normalised in an input the stage read, one line each: a source or reference SRT read
   * as ffmpeg reads it ("decoded as windows-1252 (detected: ...)", "3 empty cues dropped (first at
   * line 12)", "coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 8)"). Absent when nothing was.
   */
  notes: Type.Optional(Type.Array(Type.String())),
});
export type EngineRecord = Static<typeof EngineRecordSchema>;

/** Engine records by stage (separation, vad, asr, speakers, translation, tts, lips). */
export const EngineRecordsSchema = Type.Record(Type.String(), EngineRecordSchema);
export type EngineRecords = Static<typeof EngineRecordsSchema>;

/** The licence fields of a record (what `recordTerms` copies from the registry's record into one a stage rebuilds). */
export type RecordTerms = Pick<EngineRecord, 'model_id' | 'license' | 'commercial'>;

/** The licence fields of `r` (none when it has none). */
export function recordTerms(r: EngineRecord | undefined): RecordTerms {
  if (!r?.license) return {};
  return { ...(r.model_id ? { model_id: r.model_id } : {}), license: r.license, ...(r.commercial ? { commercial: r.commercial } : {}) };
}

/** The records among `engines` whose weights are not cleared for commercial use (commercial `no` or `unclear`). */
export function uncleared(engines: Record<string, EngineRecord> | undefined): [string, EngineRecord][] {
  return Object.entries(engines ?? {}).filter(([, e]) => e.commercial !== undefined && e.commercial !== 'yes');
}

/** One warning line per record whose weights are not cleared for commercial use ("separation: HTDemucs v4 int8 ran: weights Demucs ..., commercial use no"). */
export function licenceWarnings(engines: Record<string, EngineRecord> | undefined): string[] {
  return uncleared(engines).map(([stage, e]) => `${stage}: ${e.label ?? e.id} ran; its weights are ${e.license} (commercial use: ${e.commercial})`);
}

export interface ModelIdentity {
  /** Absolute path. */
  file: string;
  /** File name. */
  model: string;
  sha256: string;
  size: number;
}

const hashes = new Map<string, { size: number; mtimeMs: number; sha256: string }>();

/**
 * The identity of a model file: its name, size and sha256. The hash is computed once per process
 * for a given path, size and modification time (a replaced file is hashed again), streaming the
 * file (HTDemucs, 174 MB, takes about half a second).
 */
export async function modelIdentity(file: string): Promise<ModelIdentity> {
  const st = await fs.promises.stat(file);
  const known = hashes.get(file);
  if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) return { file, model: path.basename(file), sha256: known.sha256, size: st.size };
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  const sha256 = h.digest('hex');
  hashes.set(file, { size: st.size, mtimeMs: st.mtimeMs, sha256 });
  return { file, model: path.basename(file), sha256, size: st.size };
}

/** An engine record for a model-backed engine: its label, its file's identity and the provider it ran on. */
export async function modelEngineRecord(
  id: string,
  file: string,
  o: { label: string; selected: 'auto' | 'explicit'; reason?: string; provider?: 'cpu' | 'cuda' | undefined; terms?: RecordTerms },
): Promise<EngineRecord> {
  const m = await modelIdentity(file);
  return { id, label: o.label, model: m.model, sha256: m.sha256, size: m.size, ...(o.provider ? { provider: o.provider } : {}), ...(o.terms ?? {}), selected: o.selected, ...(o.reason ? { reason: o.reason } : {}) };
}
