/**
 * What generation reads besides the job: the version script, the asset's transcript, and the
 * separated background that prepare-asset stored as the output of its `separation` stage.
 */
import {
  NotFoundError,
  TranscriptSchema,
  VersionScriptSchema,
  blobKeys,
  validate,
  type BlobStore,
  type Transcript,
  type VersionScript,
} from '@dub/core';

async function readJson<T>(store: BlobStore, key: string, schema: Parameters<typeof validate>[0], what: string): Promise<T> {
  if (!(await store.has(key))) throw new NotFoundError(`${what} ${key} does not exist`, { details: { key } });
  return validate<T>(schema, JSON.parse((await store.getBuffer(key)).toString('utf8')), what);
}

export function loadScript(store: BlobStore, key: string): Promise<VersionScript> {
  return readJson<VersionScript>(store, key, VersionScriptSchema, 'version script');
}

export function loadTranscript(store: BlobStore, assetId: string): Promise<Transcript> {
  return readJson<Transcript>(store, blobKeys.transcript(assetId), TranscriptSchema, 'transcript');
}

/** Stage name and output file under which prepare-asset keeps the separated background. */
export const SEPARATION_STAGE = 'separation';
export const BACKGROUND_FILE = 'background.wav';

interface StoredManifest {
  created_at?: string;
  files?: Record<string, string>;
}

/**
 * The background track of the asset's latest separation (prepare-asset's `separation` stage
 * output; its inputs, and so its hash, are prepare's own, so it is found by listing). Undefined
 * when the asset has none.
 */
export async function findSeparatedBackground(store: BlobStore, assetId: string): Promise<string | undefined> {
  const prefix = blobKeys.artifact(assetId, SEPARATION_STAGE, '', '').replace(/-\/$/, '-');
  const manifests = (await store.list(prefix)).filter((k) => k.endsWith('/manifest.json'));
  let best: { at: string; key: string } | undefined;
  for (const key of manifests) {
    const m = JSON.parse((await store.getBuffer(key)).toString('utf8')) as StoredManifest;
    const bg = m.files?.[BACKGROUND_FILE];
    if (!bg) continue;
    const at = m.created_at ?? '';
    if (!best || at > best.at) best = { at, key: bg };
  }
  return best?.key;
}
