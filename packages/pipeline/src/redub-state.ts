/**
 * Re-dub state: what a generation leaves for the version's next generation to update from, its
 * lifetime, and the collection of the chunk blobs nothing live references.
 *
 * A completed generation writes `blobKeys.redubState(asset, version, n)`
 * (`assets/<asset>/redub/<version>/gen-<n>.json`): the loudness normalization it applied, its mix
 * state (mix, speech timeline, gain, loudness hops, frame peaks: the mix and quality stages'
 * artifacts) and the keys of the AAC chunks and lips chunks its dubbed track and lips video are
 * made of. It lives outside the version's result prefix (`versions/<id>/gen-`), so PATCH revise,
 * which removes the generated video, audio and report, keeps it; the next generation updates its
 * mix in place, keeps the loudness gain and re-encodes only the changed AAC chunks and lips
 * chunks.
 *
 * Lifetime: a version keeps the state of its latest completed generation of each mode (no_lips,
 * with_lips): an older one is removed when a later generation of the same mode completes. A
 * failed generation writes none (the previous state stays). An AAC chunk or lips chunk blob
 * (`assets/<asset>/artifacts/audio-chunk-<hash>/`, `lips-chunk-<key>/`) lives while a kept state
 * names it: at the end of each completed generation the asset's chunk blobs no kept state names
 * are deleted. That collection is skipped while another generation of the asset is in progress
 * (`blobKeys.redubRunning`, written at its start and removed at its end; one older than
 * RUNNING_TTL_MS is a crashed run and removed), and for the kind of chunk whose references are not
 * all known (a state that cannot be read, a lips output cached before its chunk keys were
 * recorded). A chunk that is gone when a later generation wants it is encoded or rendered again.
 */
import { blobKeys, nowIso, type BlobStore, type GenerateMode, type Logger, type QualityReport } from '@dub/core';

export type LoudnessNormalization = NonNullable<QualityReport['loudness']['normalization']>;

/** What a generation's mix leaves for the next one to update from. */
export interface MixState {
  mix: string;
  speech: string;
  gainDb: number;
  /** K-weighted premix energies per 100 ms hop (Float64 file), null for mixes that have none. */
  hops: string | null;
  /** The background track mixed (null: voice-over). */
  background: string | null;
  duration: number;
  /** After the quality stage: the dubbed track, its AAC chunk length, its true peak per 100 ms frame (null: silence) and K-weighted energy per 100 ms hop of `hop` frames. */
  audio?: string;
  chunkFrames?: number;
  framePeaks?: (number | null)[];
  hopEnergies?: number[];
  hop?: number;
  /** The AAC chunks' identities of the dubbed track (encodeAudioChunked's settings digest, frames, hashes). */
  chunks?: { settings: string; frames: number; hashes: string[] };
}

export interface RedubState {
  v: 1;
  version_id: string;
  generation: number;
  mode: GenerateMode;
  created_at: string;
  voice_over: boolean;
  normalization: LoudnessNormalization;
  mix: MixState;
  /** Keys of the AAC chunk blobs of the dubbed track (null: not known). */
  aac_chunks: string[] | null;
  /** Keys of the lips chunk blobs of the lips video: [] without lips, null when not known. */
  lips_chunks: string[] | null;
}

/** A generation marked running longer ago than this (6 h) is taken for a crashed run. */
export const RUNNING_TTL_MS = 6 * 3600 * 1000;

const AUDIO_CHUNK = 'audio-chunk';
const LIPS_CHUNK = 'lips-chunk';

export async function writeRedubState(store: BlobStore, assetId: string, state: RedubState): Promise<string> {
  const key = blobKeys.redubState(assetId, state.version_id, state.generation);
  await store.put(key, Buffer.from(JSON.stringify(state)));
  return key;
}

/** The state generation `generation` of the version left, when there is one and it reads. */
export async function readRedubState(store: BlobStore, assetId: string, versionId: string, generation: number): Promise<RedubState | undefined> {
  const key = blobKeys.redubState(assetId, versionId, generation);
  if (!(await store.has(key))) return undefined;
  try {
    const s = JSON.parse((await store.getBuffer(key)).toString('utf8')) as RedubState;
    return s.v === 1 && s.generation === generation && s.mix && s.normalization ? s : undefined;
  } catch {
    return undefined;
  }
}

/** Mark generation `generation` of the version as running; the returned function removes the mark. */
export async function markGenerationRunning(store: BlobStore, assetId: string, versionId: string, generation: number, now: () => number = Date.now): Promise<() => Promise<void>> {
  const key = blobKeys.redubRunning(assetId, versionId, generation);
  await store.put(key, Buffer.from(JSON.stringify({ version_id: versionId, generation, started_at: nowIso(new Date(now())) })));
  return () => store.delete(key);
}

export interface ChunkCollection {
  /** Chunk blobs a kept state names, and those deleted. */
  kept: number;
  removed: number;
  /** Why nothing of this kind was collected. */
  skipped?: string;
}

export interface RedubCollection {
  /** Re-dub states kept (each version's latest per mode) and removed (superseded). */
  states: { kept: number; removed: number };
  audio: ChunkCollection;
  lips: ChunkCollection;
  /** Running marks older than RUNNING_TTL_MS that were removed. */
  staleRunning: number;
}

export interface CollectOptions {
  /** The generation that collects (its own running mark is not another generation in progress). */
  self?: { versionId: string; generation: number };
  now?: () => number;
  runningTtlMs?: number;
  logger?: Logger;
}

const STATE_RE = /^([^/]+)\/gen-(\d+)\.json$/;
const RUNNING_RE = /^([^/]+)\/running-(\d+)\.json$/;

/**
 * Remove the asset's superseded re-dub states, then the AAC and lips chunk blobs no kept state
 * names (see the file comment for the rules). Linear in the asset's re-dub states and chunk blobs.
 */
export async function collectRedubState(store: BlobStore, assetId: string, opts: CollectOptions = {}): Promise<RedubCollection> {
  const now = opts.now ?? Date.now;
  const ttl = opts.runningTtlMs ?? RUNNING_TTL_MS;
  const prefix = blobKeys.redubPrefix(assetId);
  const states = new Map<string, { generation: number; key: string; state?: RedubState }[]>();
  const busy: string[] = [];
  let staleRunning = 0;
  for (const key of await store.list(prefix)) {
    const rel = key.slice(prefix.length);
    const s = STATE_RE.exec(rel);
    if (s) {
      const list = states.get(s[1]!) ?? [];
      list.push({ generation: Number(s[2]), key });
      states.set(s[1]!, list);
      continue;
    }
    const r = RUNNING_RE.exec(rel);
    if (!r) continue;
    if (opts.self && r[1] === opts.self.versionId && Number(r[2]) === opts.self.generation) continue;
    let started = Number.NaN;
    try {
      started = Date.parse((JSON.parse((await store.getBuffer(key)).toString('utf8')) as { started_at?: string }).started_at ?? '');
    } catch {
      // written whole (put is atomic) or not at all: an unreadable mark is damaged, and removed as stale
    }
    if (!Number.isFinite(started) || now() - started > ttl) {
      await store.delete(key);
      staleRunning++;
    } else busy.push(`${r[1]} generation ${r[2]}`);
  }

  // Each version keeps its latest state of each mode; an unreadable state is kept and makes every reference unknown.
  let unknownAudio: string | undefined;
  let unknownLips: string | undefined;
  const kept: RedubState[] = [];
  let removed = 0;
  let keptCount = 0;
  for (const [versionId, list] of states) {
    // newest first; the collecting generation's own state first of all (it is the live one even
    // where a higher generation's state was left by another store's history, e.g. a copied store)
    const own = (g: number): boolean => opts.self?.versionId === versionId && opts.self.generation === g;
    list.sort((a, b) => Number(own(b.generation)) - Number(own(a.generation)) || b.generation - a.generation);
    const latest = new Set<GenerateMode>();
    for (const item of list) {
      const st = await readRedubState(store, assetId, versionId, item.generation);
      if (!st) {
        unknownAudio = unknownLips = `the re-dub state ${item.key} cannot be read`;
        keptCount++;
        continue;
      }
      if (latest.has(st.mode)) {
        await store.delete(item.key);
        removed++;
        continue;
      }
      latest.add(st.mode);
      kept.push(st);
      keptCount++;
    }
  }
  const audioRefs = new Set<string>();
  const lipsRefs = new Set<string>();
  for (const st of kept) {
    if (st.aac_chunks) for (const k of st.aac_chunks) audioRefs.add(k);
    else unknownAudio ??= `the AAC chunks of ${st.version_id} generation ${st.generation} are not known`;
    if (st.lips_chunks) for (const k of st.lips_chunks) lipsRefs.add(k);
    else unknownLips ??= `the lips chunks of ${st.version_id} generation ${st.generation} are not known`;
  }
  const inProgress = busy.length > 0 ? `another generation of the asset is in progress (${busy.slice(0, 3).join(', ')})` : undefined;
  const audio = await collectChunks(store, assetId, AUDIO_CHUNK, audioRefs, inProgress ?? unknownAudio);
  const lips = await collectChunks(store, assetId, LIPS_CHUNK, lipsRefs, inProgress ?? unknownLips);
  const result: RedubCollection = { states: { kept: keptCount, removed }, audio, lips, staleRunning };
  opts.logger?.info({ asset_id: assetId, ...result }, 're-dub state collected');
  return result;
}

/** Delete the chunk blobs of `stage` (`<stage>-<key>/<file>`) whose key is not in `refs`, unless `skip` says why not. */
async function collectChunks(store: BlobStore, assetId: string, stage: string, refs: Set<string>, skip: string | undefined): Promise<ChunkCollection> {
  const prefix = blobKeys.artifact(assetId, stage, '', '').replace(/\/$/, '');
  const keys = await store.list(prefix);
  const chunkOf = (key: string): string => key.slice(prefix.length).split('/')[0]!;
  if (skip) return { kept: keys.length, removed: 0, skipped: skip };
  let removed = 0;
  let kept = 0;
  for (const key of keys) {
    if (refs.has(chunkOf(key))) kept++;
    else {
      await store.delete(key);
      removed++;
    }
  }
  return { kept, removed };
}
