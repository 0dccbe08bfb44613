/**
 * The contract's re-dub path through the HTTP API, with the real generation (@dub/pipeline's
 * generate-version handler in the embedded worker: auto's lines (Kokoro for Spanish), the mix, the AAC chunks, the
 * mux, the quality report): Completed -> PATCH revise -> GET script, edit one line, PUT script with
 * If-Match -> POST generate -> Completed.
 *
 * - revise removes the generated video, audio and report (their keys and URLs), and keeps the
 *   re-dub state outside the result prefix: the mix state and the AAC chunks it names;
 * - the re-dub updates the previous mix in place, keeps its loudness gain
 *   (`kept_from_generation` names generation 1), takes the unchanged chunks' identities without
 *   reading them and re-encodes only the chunks near the edited line;
 * - once it completed, generation 1's state is superseded and removed, and the AAC chunk blobs
 *   left are exactly generation 2's (the ones only generation 1 used are collected).
 *
 * Preparation is not under test: a stand-in prepare handler stores what prepare-asset and
 * prepare-version would (a 30 s source video, a background track, the transcript and a Spanish
 * script written here) and emits their events.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { blobKeys, FsBlobStore, loadConfig, type JobHandlers, type QualityReport, type Transcript, type VersionScript } from '@dub/core';
import { createJobHandlers, prepareVersionJobId } from '@dub/pipeline';
import { createEmbeddedRuntime, type EmbeddedRuntime } from '@dub/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, startTestApi, tmpDir, type TestApi } from './api-helpers.js';

const DURATION = 30;
const LINES = [
  { id: 's1', start: 0.5, end: 3.2, en: 'Hello and welcome to the show.', es: 'Hola y bienvenidos al programa.' },
  { id: 's2', start: 4.0, end: 7.5, en: 'Today we talk about open source dubbing.', es: 'Hoy hablamos del doblaje de código abierto.' },
  { id: 's3', start: 14.0, end: 17.5, en: 'Every line is spoken again in Spanish.', es: 'Cada frase se dice otra vez en español.' },
  { id: 's4', start: 23.0, end: 26.5, en: 'Thank you all for listening today.', es: 'Gracias a todos por escuchar hoy.' },
];
const EDITED = { id: 's3', es: 'Cada línea vuelve a sonar, ahora en castellano.' };

type AudioValue = { chunks: { total: number; encoded: number; reused: number }; identities: { hashes: string[] }; hashesReused: number };
type MixValue = { update?: { used: boolean; from_generation?: number; reason?: string } };

describe('re-dub through the API: revise, edit one line, generate', () => {
  const dir = tmpDir('dub-api-revise-');
  let rt: EmbeddedRuntime;
  let t: TestApi;
  let store: FsBlobStore;
  let assetId = '';
  let versionId = '';

  const api = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.api.app.inject({ method, url, headers: { ...t.auth1, ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
  async function waitStatus(status: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = (await api('GET', `/v1/versions/${versionId}`)).json() as Record<string, unknown>;
      if (v.status === status) return v;
      if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}`);
      if (Date.now() > end) throw new Error(`timed out waiting for ${status} (status ${String(v.status)})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async function generate(): Promise<QualityReport> {
    const g = await api('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
    expect(g.statusCode, g.body).toBe(202);
    await waitStatus('Completed', 400_000);
    const r = await api('GET', `/v1/versions/${versionId}/report`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as QualityReport;
  }
  /** The value of the stage output (`<stage>-<hash>/manifest.json`) whose value passes `pick`. */
  async function stageValues<T>(stage: string): Promise<T[]> {
    const keys = (await store.list(`assets/${assetId}/artifacts/${stage}-`)).filter((k) => new RegExp(`/${stage}-[0-9a-f]{20}/manifest\\.json$`).test(k));
    return Promise.all(keys.map(async (k) => (JSON.parse((await store.getBuffer(k)).toString('utf8')) as { value: T }).value));
  }
  const chunkBlobs = async () => new Set((await store.list(`assets/${assetId}/artifacts/audio-chunk-`)).map((k) => /audio-chunk-([0-9a-f]+)\//.exec(k)![1]!));
  const state = async (generation: number) => {
    const key = blobKeys.redubState(assetId, versionId, generation);
    return (await store.has(key)) ? (JSON.parse((await store.getBuffer(key)).toString('utf8')) as { aac_chunks: string[]; mix: { mix: string; speech: string; hops: string | null }; normalization: { gain_db: number } }) : undefined;
  };

  beforeAll(async () => {
    const ff = (args: string[], out: string) => {
      execFileSync('ffmpeg', ['-v', 'error', '-y', ...args, out]);
      return out;
    };
    const video = ff(['-f', 'lavfi', '-i', 'color=c=navy:s=160x120:r=10', '-f', 'lavfi', '-i', 'anoisesrc=c=pink:a=0.02:r=48000', '-t', String(DURATION), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'], path.join(dir, 'source.mp4'));
    const background = ff(['-f', 'lavfi', '-i', 'anoisesrc=c=brown:a=0.05:r=44100', '-ac', '2', '-t', String(DURATION)], path.join(dir, 'background.wav'));
    const speech = ff(['-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=mono', '-t', String(DURATION)], path.join(dir, 'speech.wav'));
    store = new FsBlobStore(path.join(dir, 'blobs'));
    const real = createJobHandlers();
    // Stand-in preparation (not under test): what prepare-asset and prepare-version store and emit.
    const handlers: JobHandlers = {
      'prepare-asset': async (job, w) => {
        const tracks = { speech: `assets/${job.asset_id}/tracks/speech.wav`, background: `assets/${job.asset_id}/tracks/background.wav` };
        await w.store.putFile(blobKeys.sourceVideo(job.asset_id), video);
        await w.store.putFile(tracks.speech, speech);
        await w.store.putFile(tracks.background, background);
        const transcript: Transcript = { v: 1, locale: 'en-US', engine: 'test', duration: DURATION, speakers: [{ id: 'S1' }], tracks, segments: LINES.map((l) => ({ id: l.id, start: l.start, end: l.end, speaker: 'S1', text: l.en, words: [] })) };
        await w.store.put(blobKeys.transcript(job.asset_id), JSON.stringify(transcript));
        await w.emit({ type: 'asset_prepared', duration: DURATION, source_video_key: blobKeys.sourceVideo(job.asset_id), transcript_key: blobKeys.transcript(job.asset_id) });
        for (const version of job.versions) await w.enqueue({ v: 1, type: 'prepare-version', job_id: prepareVersionJobId(version.version_id), asset_id: job.asset_id, source_locale: job.locale, version });
      },
      'prepare-version': async (job, w) => {
        const versionId = job.version.version_id;
        const script: VersionScript = {
          v: 1, asset_id: job.asset_id, version_id: versionId, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'test', speakers: [{ id: 'S1' }],
          segments: LINES.map((l) => ({ id: l.id, start: l.start, end: l.end, speaker: 'S1', source_text: l.en, target_text: l.es })),
          updated_at: new Date().toISOString(),
        };
        await w.store.put(blobKeys.script(versionId), JSON.stringify(script));
        await w.emit({ type: 'version_prepared', version_id: versionId, script_key: blobKeys.script(versionId) });
      },
      'generate-version': real['generate-version'],
    };
    rt = createEmbeddedRuntime({ dataDir: path.join(dir, 'worker'), store, handlers, config: loadConfig({ ...process.env, DUB_DATA_DIR: dir, DUB_TMP_DIR: path.join(dir, 'tmp') }) });
    fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
    t = await startTestApi('pglite', { store, transport: { queue: rt.queue, events: rt.events }, outboxPollMs: 50 });
    const created = await api('POST', '/v1/assets/', createBody());
    expect(created.statusCode, created.body).toBe(201);
    assetId = created.json().asset_id as string;
    versionId = created.json().languages[0].versions[0].version_id as string;
    await waitStatus('ReadyToEdit', 60_000);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await rt?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('revise keeps the re-dub state; the edited line is re-dubbed from it (gain kept from generation 1, chunk identities reused); generation 1\'s state and chunks are then collected', async () => {
    const first = await generate();
    expect(first.loudness.normalization).toMatchObject({ kept_from_generation: null });
    const v1 = (await api('GET', `/v1/versions/${versionId}`)).json() as { result_url?: string };
    expect(v1.result_url).toBeTruthy();
    const s1 = (await state(1))!;
    expect(s1).toBeDefined();
    const [audio1] = (await stageValues<AudioValue>('audio')).filter((a) => a.identities.hashes.join() === s1.aac_chunks.join());
    expect(audio1).toMatchObject({ hashesReused: 0 });
    const total = audio1!.chunks.total;
    expect(total).toBeGreaterThanOrEqual(5);

    // revise: the result (video, audio, report) and its URLs go; the re-dub state and what it names stay
    const revise = await api('PATCH', `/v1/versions/${versionId}/revise`, {});
    expect(revise.statusCode, revise.body).toBe(200);
    const v2 = (await api('GET', `/v1/versions/${versionId}`)).json() as { status: string; result_url?: string };
    expect(v2).toMatchObject({ status: 'ReadyToEdit' });
    expect(v2.result_url).toBeUndefined();
    for (const k of [blobKeys.resultVideo(versionId, 1), blobKeys.resultAudio(versionId, 1), blobKeys.qualityReport(versionId, 1)]) expect(await store.has(k), k).toBe(false);
    expect((await api('GET', `/v1/versions/${versionId}/report`)).statusCode).toBe(404);
    expect(await state(1)).toEqual(s1);
    for (const k of [s1.mix.mix, s1.mix.speech, s1.mix.hops!]) expect(await store.has(k), k).toBe(true);
    const before = await chunkBlobs();
    for (const h of s1.aac_chunks) expect(before.has(h)).toBe(true);

    // edit one line as a client does: read with its ETag, write with If-Match
    const read = await api('GET', `/v1/versions/${versionId}/script`);
    const etag = read.headers.etag as string;
    const script = read.json() as VersionScript;
    script.segments.find((s) => s.id === EDITED.id)!.target_text = EDITED.es;
    const put = await api('PUT', `/v1/versions/${versionId}/script`, script, { 'if-match': etag });
    expect(put.statusCode, put.body).toBe(200);
    expect((await api('PUT', `/v1/versions/${versionId}/script`, script, { 'if-match': etag })).statusCode).toBe(412);

    const second = await generate();
    // the gain of generation 1 is kept; only the edited line was synthesized again
    expect(second.loudness.normalization).toMatchObject({ kept_from_generation: 1, gain_db: first.loudness.normalization!.gain_db });
    expect(second.segments.filter((s) => s.regenerated).map((s) => s.id)).toEqual([EDITED.id]);
    const s2 = (await state(2))!;
    expect(s2).toBeDefined();
    // the mix was generation 1's, updated near the edited line
    expect((await stageValues<MixValue>('mix')).map((m) => m.update).filter((u) => u?.used)).toEqual([expect.objectContaining({ used: true, from_generation: 1 })]);
    // the chunks away from the edit kept generation 1's identities unread; only those near it were encoded
    const [audio2] = (await stageValues<AudioValue>('audio')).filter((a) => a.identities.hashes.join() === s2.aac_chunks.join());
    expect(audio2!.hashesReused).toBeGreaterThanOrEqual(2);
    expect(audio2!.chunks.encoded).toBeGreaterThan(0);
    expect(audio2!.chunks.encoded).toBeLessThanOrEqual(total - 2);
    const same = s2.aac_chunks.filter((h, i) => h === s1.aac_chunks[i]).length;
    expect(same).toBe(total - audio2!.chunks.encoded);

    // generation 2 superseded generation 1's state; the chunk blobs left are exactly generation 2's
    expect(await state(1)).toBeUndefined();
    expect(await chunkBlobs()).toEqual(new Set(s2.aac_chunks));
    expect(await store.has(blobKeys.redubRunning(assetId, versionId, 2))).toBe(false);
  }, 900_000);
});
