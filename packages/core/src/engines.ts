/**
 * Provenance of an engine run: which engine a stage ran, with which model file (name, sha256,
 * size), on which ONNX execution provider, how it was chosen and why. The same record is written
 * in the transcript (prepare's stages), the script (translation), the `version_generated` event,
 * the API's Version object and `dub run`'s engines.json.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
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
   * line 12)", "coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 8)"); and how a model
   * ran other than as shipped where that changes its numbers ("decoder_model_merged_quantized.onnx:
   * 2 MatMuls on dequantized weights run as DynamicQuantizeMatMul (...)"). Absent when nothing was.
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
 * Where model hashes are kept between processes: `$XDG_CACHE_HOME/dub/hashes` (default
 * `~/.cache/dub/hashes`), one small file per model file and state.
 */
export function modelHashesDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'dub', 'hashes');
}

/** Whether model hashes are kept on disk: `DUB_MODEL_HASH_CACHE`, `1`/`on` (default) or `0`/`off`. */
export function modelHashCacheOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.DUB_MODEL_HASH_CACHE ?? '').trim().toLowerCase();
  if (v === '' || v === '1' || v === 'on' || v === 'true' || v === 'yes') return true;
  if (v === '0' || v === 'off' || v === 'false' || v === 'no') return false;
  throw new RangeError(`DUB_MODEL_HASH_CACHE must be 1/on or 0/off, got "${env.DUB_MODEL_HASH_CACHE}"`);
}

/**
 * The kept hash's file for `file` as it is now: named by its path, device, inode, size and
 * modification and change times (ctime cannot be set back by hand: a file rewritten in place with
 * its mtime restored still changes name).
 */
function hashEntry(file: string, st: fs.Stats, env: NodeJS.ProcessEnv): string {
  const id = createHash('sha256').update(`${path.resolve(file)}|${st.dev}|${st.ino}|${st.size}|${st.mtimeMs}|${st.ctimeMs}`).digest('hex').slice(0, 32);
  return path.join(modelHashesDir(env), `${id}.sha256`);
}

/**
 * Files smaller than this are hashed every time (quick), so test fixtures in temporary folders
 * leave nothing in the user's cache.
 */
export const MODEL_HASH_KEEP_MIN_BYTES = 1 << 20;

/** Forget the hashes computed in this process (tests: as a new process would start). */
export function forgetModelHashes(): void {
  hashes.clear();
}

/**
 * The identity of a model file: its name, size and sha256. The hash is computed once per process
 * for a given path, size and modification time (a replaced file is hashed again), streaming the
 * file (HTDemucs, 174 MB, takes about half a second), and kept on disk (modelHashesDir, unless
 * DUB_MODEL_HASH_CACHE=0; files from 1 MiB) for later processes, named by the file's path, inode, size, mtime and
 * ctime: a cold `dub run` reads the hashes of its models instead of reading the models through
 * (about 0.4 CPU s on the 2-core machine for the preparation's models alone). A kept hash that
 * cannot be read or written is computed as before.
 */
export async function modelIdentity(file: string): Promise<ModelIdentity> {
  const st = await fs.promises.stat(file);
  const known = hashes.get(file);
  if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) return { file, model: path.basename(file), sha256: known.sha256, size: st.size };
  const keep = st.size >= MODEL_HASH_KEEP_MIN_BYTES && modelHashCacheOn() ? hashEntry(file, st, process.env) : undefined;
  let sha256: string | undefined;
  if (keep) {
    const kept = await fs.promises.readFile(keep, 'utf8').catch(() => '');
    if (/^[0-9a-f]{64}$/.test(kept)) sha256 = kept;
  }
  if (sha256 === undefined) {
    const h = createHash('sha256');
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
    sha256 = h.digest('hex');
    if (keep) {
      // written whole under a temporary name then renamed: a reader never sees half a hash
      const tmp = `${keep}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      await fs.promises
        .mkdir(path.dirname(keep), { recursive: true })
        .then(() => fs.promises.writeFile(tmp, sha256!))
        .then(() => fs.promises.rename(tmp, keep))
        .catch(() => fs.promises.rm(tmp, { force: true }).catch(() => undefined));
    }
  }
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
