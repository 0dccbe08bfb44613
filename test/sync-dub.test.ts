/**
 * Issue #24 item 1 through the pipeline: a source with one-frame flashes and beeps placed
 * together (over a noise bed) is made into the source video blob and the audio by prepare's own
 * stages (defaultStages.trim and extractAudio, as prepare-asset runs them), then dubbed by
 * generateVersion without lips and with lips (the viseme warp: no model weights). The beep reaches
 * the dub through the background track (the source's audio as a given clean background, as
 * prepare-asset extracts one), so its place in dubbed.mp4 against the flash is where the pipeline
 * put the source's audio. Checked: the beep-to-flash offset is the source's within 15 ms, the
 * picture keeps its first frame's time and every frame, the container lasts as long as the
 * source within one frame, the dubbed audio starts where the source's did against the picture.
 * The media steps alone on all the edge cases: packages/media/src/sync.test.ts.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeys, FsBlobStore, loadConfig, silentLogger, type EmittedEvent, type GenerateVersionJob, type JobRuntime, type Transcript, type VersionScript } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { probe } from '@dub/media';
import { defaultStages, generateVersion } from '@dub/pipeline';
import { ArtifactCache } from '../packages/pipeline/src/artifacts.js';
import { beepNear, beepToFlash, makeSyncCase, makeSyncParts, SYNC_CASES, SYNC_FPS, timelineEvents } from '../packages/media/test-support/sync-events.js';

const CASES = ['audio after video', 'video after audio', 'variable frame rate'];
const sessions = new SessionCache({ threads: 1 });
let dir: string;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-sync-e2e-'));
  await makeSyncParts(path.join(dir, 'v.mkv'), path.join(dir, 'a.wav'));
}, 60_000);
afterAll(async () => {
  await sessions.disposeAll();
  await fsp.rm(dir, { recursive: true, force: true });
});

function runtime(store: FsBlobStore, events: EmittedEvent[]): JobRuntime {
  return {
    store,
    ctx: { logger: silentLogger, onProgress: () => undefined },
    config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), DUB_ONNX_THREADS: '1' }),
    sessions,
    emit: async (e) => void events.push(e),
    enqueue: async () => undefined,
    attempt: 1,
  };
}

for (const name of CASES) {
  describe(name, () => {
    const slug = name.replace(/\W+/g, '-');
    const ASSET = `ast_sync_${slug}`;
    const VERSION = `ver_sync_${slug}`;
    let store: FsBlobStore;
    let source: string;
    let duration: number;

    beforeAll(async () => {
      source = path.join(dir, `${slug}.${SYNC_CASES[name]!.ext}`);
      await makeSyncCase(name, path.join(dir, 'v.mkv'), path.join(dir, 'a.wav'), source);
      await fsp.mkdir(path.join(dir, 'tmp'), { recursive: true });
      store = new FsBlobStore(path.join(dir, `blobs-${slug}`));
      const info = await defaultStages.probe(source, { config: loadConfig({}), sessions, tmpDir: dir } as never, {});
      duration = info.duration;
      const env = { config: loadConfig({}), sessions, tmpDir: path.join(dir, 'tmp') } as Parameters<typeof defaultStages.trim>[4];
      // prepare-asset's source video blob and audio, by its own stages
      const trimmed = path.join(dir, `${slug}-source.mp4`);
      await defaultStages.trim(source, trimmed, { start: 0, end: duration }, info, env, {});
      await store.putFile(blobKeys.sourceVideo(ASSET), trimmed);
      const cache = new ArtifactCache(store, ASSET, { tmpDir: dir });
      const separated = await cache.run('separation', { mix: slug }, { logger: silentLogger }, async (out) => {
        const mix = path.join(out.dir, 'background.wav');
        await defaultStages.extractAudio(source, mix, { start: 0, end: duration }, { sampleRate: 44100, channels: 2 }, env, {});
        out.addFile('background.wav', mix);
        out.addFile('speech.wav', mix);
        return { engine: 'given_tracks' };
      });
      // one line between the two beeps in every case (1.7 and 3.38 s; 1.2 and 2.88 s): the dub's speech never covers them
      const transcript = {
        v: 1, locale: 'en-US', engine: 'test', duration,
        speakers: [{ id: 'S1', speech_seconds: 0.6 }],
        segments: [{ id: 'seg-0001', start: 2.1, end: 2.6, speaker: 'S1', text: 'Hello.', words: [] }],
        tracks: { speech: separated.files['speech.wav']!, background: separated.files['background.wav']! },
      } as unknown as Transcript;
      await store.put(blobKeys.transcript(ASSET), JSON.stringify(transcript));
      const script: VersionScript = {
        v: 1, asset_id: ASSET, version_id: VERSION, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'test',
        speakers: transcript.speakers,
        segments: [{ id: 'seg-0001', start: 2.1, end: 2.6, speaker: 'S1', source_text: 'Hello.', target_text: 'Hola.' }],
        updated_at: new Date().toISOString(),
      };
      await store.put(blobKeys.script(VERSION), JSON.stringify(script));
    }, 120_000);

    // voice-over mixes the source video's own audio (ducked) under the dub: read on the same timeline
    const runs = [['without_lips', false], ['with_lips', false], ...(name === 'audio after video' ? [['without_lips', true] as const] : [])] as const;
    for (const [mode, voiceOver] of runs) {
      it(`${mode}${voiceOver ? ', voice-over' : ''}: the beep stays with its flash, the picture keeps its times and frames`, async () => {
        const events: EmittedEvent[] = [];
        const generation = voiceOver ? 3 : mode === 'with_lips' ? 2 : 1;
        const job: GenerateVersionJob = { v: 1, type: 'generate-version', job_id: `job-${generation}`, asset_id: ASSET, version_id: VERSION, locale: 'es-ES', mode, script_key: blobKeys.script(VERSION), generation, options: voiceOver ? { voice_over: true, voice_library_id: 'ana' } : {} };
        const r = await generateVersion(job, runtime(store, events), { tts: { engine: 'espeak-ng' }, voiceConversion: 'none', lips: { engine: 'viseme-warp' }, quality: { asr: 'pocketsphinx', speaker: 'mfcc' } });
        const out = store.localPath(r.resultVideoKey)!;
        const [src, dub] = await Promise.all([timelineEvents(source), timelineEvents(out)]);
        const want = beepToFlash(src);
        expect(dub.flashes).toHaveLength(want.length);
        // each beep looked for where the source has it against its flash (the dub's speech is louder than the beeps' level)
        dub.flashes.forEach((f, i) => {
          const beep = beepNear(dub, f + want[i]!);
          expect(beep, `no beep within 100 ms of ${(f + want[i]!).toFixed(3)} s`).toBeDefined();
          const g = beep! - f;
          expect(Math.abs(g - want[i]!), `beep ${i}: ${(1000 * g).toFixed(1)} ms from its flash, ${(1000 * want[i]!).toFixed(1)} ms in the source`).toBeLessThanOrEqual(0.015);
        });
        const origin = Math.min(src.videoStart, src.audioStart);
        expect(Math.abs(dub.videoStart - (src.videoStart - origin)), `video starts at ${dub.videoStart} s`).toBeLessThan(0.001);
        expect(dub.frames).toBe(src.frames);
        expect(Math.abs(dub.duration - src.duration), `container ${dub.duration} s, source ${src.duration} s`).toBeLessThan(1 / SYNC_FPS);
        const lag = dub.audioStart - dub.videoStart - (src.audioStart - src.videoStart);
        expect(Math.abs(lag), `the dubbed audio starts ${(1000 * lag).toFixed(1)} ms off the source's start against the picture`).toBeLessThan(0.024);
        expect((await probe(out)).audio).toHaveLength(1);
      }, 180_000);
    }
  });
}
