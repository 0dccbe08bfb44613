/**
 * What generation reads besides the job: the version script, the asset's transcript, and the
 * separated background that prepare-asset stored as the output of its `separation` stage.
 */
import {
  NotFoundError,
  TranscriptSchema,
  VersionScriptSchema,
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

/** The asset's transcript, at `key` (blobKeys.transcript of the asset). */
export function loadTranscript(store: BlobStore, key: string): Promise<Transcript> {
  return readJson<Transcript>(store, key, TranscriptSchema, 'transcript');
}
