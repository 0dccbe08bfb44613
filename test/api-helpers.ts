/** Shared set-up of the API tests: an API over a MemoryTransport, on PGlite or PostgreSQL. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { blobKeys, type Transcript, type VersionScript } from '@dub/core';
import { createApi, MemoryTransport, type CreateApiOptions, type DubApi } from '@dub/api';

export const PG_URL = process.env.DUB_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgAvailable: Promise<boolean> | undefined;
export function postgresAvailable(): Promise<boolean> {
  pgAvailable ??= (async () => {
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 1500 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  })();
  return pgAvailable;
}

export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}

export type DbKind = 'pglite' | 'postgres';

export interface TestApi {
  api: DubApi;
  transport: MemoryTransport;
  dataDir: string;
  schema: string | undefined;
  /** Authorization header of org1 / org2. */
  auth1: { authorization: string };
  auth2: { authorization: string };
  close(opts?: { keepData?: boolean }): Promise<void>;
}

export function tmpDir(prefix = 'dub-api-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startTestApi(kind: DbKind, extra: Partial<CreateApiOptions> = {}, reuse?: { dataDir: string; schema?: string }): Promise<TestApi> {
  const dataDir = reuse?.dataDir ?? tmpDir();
  const schema = kind === 'postgres' ? (reuse?.schema ?? `dub_test_${crypto.randomBytes(5).toString('hex')}`) : undefined;
  const transport = new MemoryTransport();
  const api = await createApi({
    dataDir,
    keys: [
      { key: 'key-one', org: 'org1' },
      { key: 'key-two', org: 'org2' },
    ],
    allowPrivateUrls: true,
    transport: { queue: transport, events: transport },
    ...(kind === 'postgres' ? { databaseUrl: PG_URL, databaseSchema: schema } : {}),
    ...extra,
  });
  return {
    api,
    transport,
    dataDir,
    schema,
    auth1: { authorization: 'Bearer key-one' },
    auth2: { authorization: 'Bearer key-two' },
    async close(o = {}) {
      await api.close();
      if (!o.keepData) {
        if (schema) await dropSchema(schema);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export const createBody = (over: Record<string, unknown> = {}) => ({
  name: 'Interview',
  locale: 'en-US',
  languages: [{ locale: 'es-ES' }],
  media_url: 'http://127.0.0.1:9/video.mp4',
  ...over,
});

export function sampleTranscript(): Transcript {
  return {
    v: 1,
    locale: 'en-US',
    engine: 'test',
    duration: 12,
    speakers: [{ id: 'S1' }],
    segments: [
      { id: 's1', start: 0.5, end: 3.2, speaker: 'S1', text: 'Hello and welcome to the show.', words: [] },
      { id: 's2', start: 4.0, end: 7.5, speaker: 'S1', text: 'Today we talk about open source dubbing.', words: [] },
    ],
  };
}

export function sampleScript(assetId: string, versionId: string): VersionScript {
  return {
    v: 1,
    asset_id: assetId,
    version_id: versionId,
    source_locale: 'en-US',
    target_locale: 'es-ES',
    translation_engine: 'test',
    speakers: [{ id: 'S1' }],
    segments: [
      { id: 's1', start: 0.5, end: 3.2, speaker: 'S1', source_text: 'Hello and welcome to the show.', target_text: 'Hola y bienvenidos al programa.' },
      { id: 's2', start: 4.0, end: 7.5, speaker: 'S1', source_text: 'Today we talk about open source dubbing.', target_text: 'Hoy hablamos del doblaje de código abierto.' },
    ],
    updated_at: new Date().toISOString(),
  };
}

/** Drive the worker side: the asset is prepared and each of its versions gets a script. */
export async function prepareAsset(t: TestApi, assetId: string, opts: { duration?: number } = {}): Promise<string[]> {
  const { api, transport } = t;
  await api.store.put(blobKeys.transcript(assetId), JSON.stringify(sampleTranscript()));
  await api.store.put(blobKeys.sourceVideo(assetId), Buffer.from('source video bytes'));
  await transport.publish({ type: 'asset_prepared', job_id: `job_prep_${assetId}`, asset_id: assetId, duration: opts.duration ?? 120, source_video_key: blobKeys.sourceVideo(assetId), transcript_key: blobKeys.transcript(assetId) });
  const versions = (await api.db.query<{ version_id: string }>('SELECT version_id FROM versions WHERE asset_id = $1 ORDER BY seq', [assetId])).rows.map((r) => r.version_id);
  for (const vid of versions) await prepareVersion(t, assetId, vid);
  return versions;
}

export async function prepareVersion(t: TestApi, assetId: string, versionId: string): Promise<void> {
  const key = blobKeys.script(versionId);
  await t.api.store.put(key, JSON.stringify(sampleScript(assetId, versionId)));
  await t.transport.publish({ type: 'version_prepared', job_id: `job_prepv_${versionId}`, asset_id: assetId, version_id: versionId, script_key: key });
}

/** The worker finishes a generation: result blobs and the event. */
export async function finishGeneration(t: TestApi, assetId: string, versionId: string, generation: number, video = Buffer.from('0123456789abcdefghij')): Promise<void> {
  const vk = blobKeys.resultVideo(versionId, generation);
  const ak = blobKeys.resultAudio(versionId, generation);
  await t.api.store.put(vk, video);
  await t.api.store.put(ak, Buffer.from('audio-bytes'));
  await t.transport.publish({
    type: 'version_generated', job_id: `job_gen_${versionId}_${generation}`, asset_id: assetId, version_id: versionId, generation, result_video_key: vk, result_audio_key: ak, duration: 120,
    engines: { tts: { id: 'espeak-ng', label: 'espeak-ng', selected: 'auto' }, lips: { id: 'viseme-warp', label: 'viseme warp', selected: 'auto' } },
  });
}

export function dbKinds(): DbKind[] {
  return ['pglite', 'postgres'];
}
