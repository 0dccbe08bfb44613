/**
 * The `musetalk` engine (MuseTalk v1.5) on tiny stand-ins of its four exported graphs
 * (fixtures/musetalk-tiny, scripts/make-tiny-musetalk.py): the stand-ins have exactly the
 * export's signature (fixtures/musetalk-signature.json), the audio front end's windows and
 * positional encoding equal an independent numpy rendering of MuseTalk's code
 * (fixtures/musetalk-audio-references.json), the engine runs end to end on a real talking head
 * (frame count, size, rate and every frame's time kept; the mouth box changed, nothing outside
 * it), and the registry: auto prefers it over Wav2Lip under the model policy `commercial`.
 * The real weights are not here: nothing below says anything about MuseTalk's lips quality.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { runFfprobe, writeWav } from '@dub/media';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { describeWithMedia } from '../../../test/support/media.js';
import { MUSETALK_AUDIO, MuseTalkAudio, musetalkFeatureLength, musetalkPositionalEncoding, musetalkWindowRows, musetalkWindowStart } from './audio/musetalk-audio.js';
import { MUSETALK_GRAPHS, MUSETALK_SIZE, MuseTalkEngine, musetalkCrop, musetalkImageBatch, resolveMuseTalkModels } from './engines/musetalk.js';
import { BlazeFaceDetector } from './face/blazeface.js';
import { trackFaces } from './face/face-track.js';
import { clipRect, createImage, type Rect, type RgbImage } from './image/rgb-image.js';
import { lipSync } from './lip-sync.js';
import { LIPS_ENGINES, lipsEngineHost } from './registry.js';
import { LIPS_CONFORMANCE_CHECKS, type LipsConformanceFixture } from './testing/lips-conformance.js';
import { readFrames } from './video/frame-reader.js';
import { videoInfo, type VideoInfo } from './video/video-info.js';
import type { FaceTrack, LipsRenderOptions } from './types.js';
import { dubbedSpeech, isLoudAt, requireBlazeFace, TALKING_HEAD, TINY_WAV2LIP, trim } from './media.test-helper.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const TINY = path.join(FIXTURES, 'musetalk-tiny');
const ctx = resolveContext();

interface WindowCase {
  samples: number;
  fps: number;
  seconds: number;
  featureLength: number;
  numFrames: number;
  frames: number[];
  rows: number[][];
}
const references = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'musetalk-audio-references.json'), 'utf8')) as {
  windows: WindowCase[];
  positionalEncoding: { rows: number; dim: number; dims: number[]; values: number[][]; sum: number };
};

describe('MuseTalk v1.5 export signature (stand-in: fixtures/musetalk-tiny)', () => {
  const sessions = new SessionCache({ threads: 1 });
  afterAll(() => sessions.disposeAll());

  it('each tiny graph has exactly the export signature, fixed dimensions included', async () => {
    const sig = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'musetalk-signature.json'), 'utf8')) as Signature & { fixedDims: Record<string, Record<string, (number | null)[]>> };
    expect(sig.source).toEqual(expect.arrayContaining([expect.stringMatching(/^https:\/\/github\.com\/TMElyralab\/MuseTalk\/blob\/.*audio_processor\.py/)]));
    expect(Object.keys(sig.files).sort()).toEqual(Object.values(MUSETALK_GRAPHS).sort());
    for (const [file, spec] of Object.entries(sig.files)) {
      const { session } = await sessions.get(path.join(TINY, file));
      expectSignature(session, spec, `musetalk ${file}`);
      const metas = [...session.inputMetadata, ...session.outputMetadata] as unknown as { name: string; shape?: readonly unknown[] }[];
      for (const [name, dims] of Object.entries(sig.fixedDims[file]!)) {
        const shape = metas.find((m) => m.name === name)!.shape!;
        expect(shape.map((d, i) => (dims[i] === null ? null : d)), `${file} ${name}`).toEqual(dims);
      }
    }
  });
});

describe("MuseTalk's audio front end against the numpy references", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'musetalk-audio-'));
  });
  afterAll(() => fsp.rm(dir, { recursive: true, force: true }));

  it('window rows: the feature frame each of the 10 rows reads, for every reference frame (25, 30 and 24 fps; 3 segments)', () => {
    let checked = 0;
    for (const c of references.windows) {
      expect(musetalkFeatureLength(c.samples), `${c.seconds} s`).toBe(c.featureLength);
      c.frames.forEach((i, k) => {
        expect(musetalkWindowRows(musetalkWindowStart(i, c.fps), c.featureLength), `${c.fps} fps frame ${i}`).toEqual(c.rows[k]);
        checked++;
      });
    }
    expect(checked).toBe(210);
  });

  it('positional encoding within 1e-6 of the float64 reference', () => {
    const pe = musetalkPositionalEncoding();
    const ref = references.positionalEncoding;
    let worst = 0;
    for (let p = 0; p < ref.rows; p++) ref.dims.forEach((d, k) => (worst = Math.max(worst, Math.abs(pe[p * ref.dim + d]! - ref.values[p]![k]!))));
    expect(worst).toBeLessThan(1e-6);
    expect(Math.abs(pe.reduce((s, v) => s + v, 0) - ref.sum)).toBeLessThan(1e-3);
  });

  it('MuseTalkAudio reads each row from the right segment (30 s each) and frame, zeros in the padding, and adds the encoding', async () => {
    // 61.3 s at 24 fps: a window straddles each 30 s boundary. Each segment's samples carry its index.
    const c = references.windows.find((w) => w.seconds > 60)!;
    const x = new Float32Array(c.samples);
    for (let i = 0; i < x.length; i++) x[i] = Math.floor(i / 480000) / 1000;
    const wav = path.join(dir, 'long.wav');
    await writeWav(wav, { sampleRate: 16000, channels: [x] }, { format: 'float32' });
    let encoded = 0;
    const { segmentFeatures, layers, dim } = MUSETALK_AUDIO;
    const audio = await MuseTalkAudio.open(
      wav,
      (a) => Float32Array.of(a[0]!),
      async (mel) => {
        encoded++;
        const k = Math.round(mel[0]! * 1000);
        const out = new Float32Array(segmentFeatures * layers * dim);
        for (let j = 0; j < segmentFeatures; j++) out.fill(k * segmentFeatures + j + 1, j * layers * dim, (j + 1) * layers * dim);
        return out;
      },
    );
    try {
      expect(audio.featureLength).toBe(c.featureLength);
      const pe = musetalkPositionalEncoding();
      for (const [k, i] of c.frames.entries()) {
        const p = await audio.prompt(i, c.fps);
        for (let r = 0; r < 10; r++) for (const l of [0, 4]) expect(p[(r * layers + l) * dim + 7]! - pe[(r * layers + l) * dim + 7]!, `frame ${i} row ${r}`).toBeCloseTo(c.rows[k]![r]! + 1, 3);
      }
      expect(encoded).toBeLessThanOrEqual(5); // three segments, each encoded when first needed (frames are read in order, the last two kept)
    } finally {
      await audio.close();
    }
  });
});

describe('MuseTalk engine on the stand-in graphs', () => {
  const sessions = new SessionCache({ threads: 1 });
  afterAll(() => sessions.disposeAll());

  it('crop: the face box with 10 pixels more below, clamped; image batch: masked (lower half -1) then the crop, RGB in [-1, 1]', () => {
    const face = { face: { x: 20, y: 30, w: 100, h: 100 } } as never;
    expect(musetalkCrop(face, 200, 200)).toEqual({ x: 20, y: 30, w: 100, h: 110 });
    expect(musetalkCrop(face, 200, 135)).toEqual({ x: 20, y: 30, w: 100, h: 105 });
    const crop = createImage(MUSETALK_SIZE, MUSETALK_SIZE);
    for (let p = 0; p < MUSETALK_SIZE * MUSETALK_SIZE; p++) crop.data.set([0, 255, 51], p * 3);
    const t = musetalkImageBatch(crop);
    const plane = MUSETALK_SIZE * MUSETALK_SIZE;
    const top = 10 * MUSETALK_SIZE + 3;
    const bottom = 200 * MUSETALK_SIZE + 3;
    expect([t[top], t[plane + top], t[2 * plane + top]]).toEqual([-1, 1, expect.closeTo(-0.6, 5)]);
    expect([t[bottom], t[plane + bottom], t[2 * plane + bottom]]).toEqual([-1, -1, -1]);
    expect([t[3 * plane + bottom], t[4 * plane + bottom], t[5 * plane + bottom]]).toEqual([-1, 1, expect.closeTo(-0.6, 5)]);
  });

  it('infers a 256x256 face: the upper half is the (blurred) reference whatever the audio, the lower half follows the audio prompt', async () => {
    const engine = await MuseTalkEngine.load({ modelDir: TINY, sessions });
    expect(engine.modelFiles.unet).toBe(path.join(TINY, 'unet.onnx'));
    const crop = createImage(MUSETALK_SIZE, MUSETALK_SIZE);
    crop.data.fill(100);
    const quiet = await engine.infer(crop, new Float32Array(50 * 384).fill(-1.5), ctx);
    const loud = await engine.infer(crop, new Float32Array(50 * 384).fill(0.5), ctx);
    const s = MUSETALK_SIZE;
    expect(quiet).toHaveLength(3 * s * s);
    expect(quiet[40 * s + 40]).toBeCloseTo(100 / 255, 3);
    expect(loud[40 * s + 40]).toBeCloseTo(100 / 255, 3);
    expect(quiet[220 * s + 40]).toBeCloseTo(100 / 255, 3);
    expect(loud[220 * s + 40]).toBeGreaterThan(quiet[220 * s + 40]! + 0.3);
    await engine.dispose();
  });

  it('a missing graph is model_missing naming the fetch and the export script', () => {
    expect(() => resolveMuseTalkModels({ modelDir: FIXTURES })).toThrow(/npx dub models fetch musetalk-v15 sd-vae-ft-mse whisper-tiny, then python3 scripts\/export-musetalk-onnx\.py/);
    try {
      resolveMuseTalkModels({ modelsDir: os.tmpdir(), searchDirs: [] });
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'model_missing' });
    }
  });
});

describe('registry: musetalk beside wav2lip and viseme-warp', () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'musetalk-none-'));
  afterAll(() => fs.rmSync(empty, { recursive: true, force: true }));
  const host = (o: { musetalk?: boolean; wav2lip?: boolean; device?: 'cpu' | 'cuda'; policy?: 'any' | 'commercial' }) => ({
    ...lipsEngineHost({ modelsDir: empty, searchDirs: [], ...(o.musetalk ? { musetalk: { modelDir: TINY } } : {}), ...(o.wav2lip ? { wav2lip: { modelPath: TINY_WAV2LIP } } : {}), ...(o.device ? { device: o.device } : {}) }),
    ...(o.policy ? { policy: o.policy } : {}),
  });

  it('under commercial, auto takes musetalk when installed (on CUDA) and passes over Wav2Lip, saying so; its record carries its terms', async () => {
    const r = await LIPS_ENGINES.resolve('auto', 'es-ES', host({ musetalk: true, wav2lip: true, device: 'cuda', policy: 'commercial' }));
    expect(r.id).toBe('musetalk');
    expect(r.reason).toMatch(/passes over wav2lip/);
    expect(r.record).toMatchObject({ id: 'musetalk', label: 'MuseTalk v1.5', model: 'unet.onnx', model_id: 'musetalk-v15', commercial: 'yes', selected: 'auto' });
    expect(LIPS_ENGINES.allowed('es-ES', { models: {}, policy: 'commercial' })).toEqual(['musetalk', 'viseme-warp']);
    await expect(LIPS_ENGINES.resolve('wav2lip', 'es-ES', host({ wav2lip: true, policy: 'commercial' }))).rejects.toThrow(/musetalk or viseme-warp/);
  });

  it('under any, Wav2Lip stays first where installed; else musetalk on CUDA; on the CPU auto leaves musetalk to an explicit choice', async () => {
    expect((await LIPS_ENGINES.resolve('auto', 'es-ES', host({ musetalk: true, wav2lip: true, device: 'cuda', policy: 'any' }))).id).toBe('wav2lip');
    expect((await LIPS_ENGINES.resolve('auto', 'es-ES', host({ musetalk: true, device: 'cuda', policy: 'any' }))).id).toBe('musetalk');
    const cpu = await LIPS_ENGINES.resolve('auto', 'es-ES', host({ musetalk: true, device: 'cpu', policy: 'commercial' }));
    expect(cpu.id).toBe('viseme-warp');
    expect(cpu.reason).toMatch(/CUDA/);
    expect((await LIPS_ENGINES.resolve('musetalk', 'es-ES', host({ musetalk: true, device: 'cpu' }))).id).toBe('musetalk');
  });

  it('not installed: auto says nothing of it unless asked; explicit musetalk fails model_missing naming the fetch', async () => {
    const r = await LIPS_ENGINES.resolve('auto', 'es-ES', host({ device: 'cuda', policy: 'any' }));
    expect(r.record).toMatchObject({ id: 'viseme-warp', reason: 'auto: no Wav2Lip model here (classical mouth warp)' });
    await expect(LIPS_ENGINES.resolve('musetalk', 'es-ES', host({ device: 'cuda' }))).rejects.toMatchObject({ code: 'model_missing', message: expect.stringMatching(/npx dub models fetch musetalk-v15/) });
  });
});

/** Mean absolute difference over `rect` of two frames. */
function meanDiff(a: RgbImage, b: RgbImage, rect: Rect): number {
  const r = clipRect(rect, a.width, a.height);
  let s = 0;
  for (let y = r.y; y < r.y + r.h; y++) for (let x = r.x; x < r.x + r.w; x++) for (let c = 0; c < 3; c++) s += Math.abs(a.data[(y * a.width + x) * 3 + c]! - b.data[(y * a.width + x) * 3 + c]!);
  return s / Math.max(1, r.w * r.h * 3);
}

/** Largest mean absolute difference per 8x8 block outside `rect` and a macroblock around it. */
function worstBlockOutside(a: RgbImage, b: RgbImage, rect: Rect): number {
  const r = clipRect(rect, a.width, a.height);
  let worst = 0;
  for (let by = 0; by + 8 <= a.height; by += 8) {
    for (let bx = 0; bx + 8 <= a.width; bx += 8) {
      if (bx + 8 > r.x - 16 && bx < r.x + r.w + 16 && by + 8 > r.y - 16 && by < r.y + r.h + 16) continue; // within a macroblock (16 px) of the mouth box: x264 spreads a change that far
      worst = Math.max(worst, meanDiff(a, b, { x: bx, y: by, w: 8, h: 8 }));
    }
  }
  return worst;
}

describeWithMedia(['talking-head-480.mp4'], 'MuseTalk engine end to end on a real talking head (stand-in graphs)', () => {
  let dir: string;
  let video: VideoInfo;
  let faces: FaceTrack;
  let speech: string;
  const sessions = new SessionCache({ threads: 1 });

  beforeAll(async () => {
    requireBlazeFace();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lips-musetalk-'));
    const clip = await trim(TALKING_HEAD, path.join(dir, 'head.mp4'), 8, 3, '240:240');
    speech = await dubbedSpeech(path.join(dir, 'dub.wav'), 3);
    video = await videoInfo(clip);
    const detector = await BlazeFaceDetector.load({ sessions });
    faces = await trackFaces(video, { detector, detectEvery: 2 });
  });
  afterAll(async () => {
    await sessions.disposeAll();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const renderOpts = (): LipsRenderOptions => ({ workScale: 1, encode: { crf: 10, preset: 'ultrafast' }, tmpDir: dir, media: {} });

  it('renders every frame at the source size and rate; the mouth box changes (brighter when the dub is loud, the stand-in rule), nothing outside it does', async () => {
    const engine = await MuseTalkEngine.load({ modelDir: TINY, sessions });
    const out = path.join(dir, 'musetalk.mp4');
    const r = await engine.render(video, { file: speech }, faces, out, renderOpts(), ctx);
    // the same clip through the same decoder and encoder with no face: what the codec alone changes
    const base = path.join(dir, 'passthrough.mp4');
    await engine.render(video, { file: speech }, { ...faces, frames: faces.frames.map(() => null) }, base, renderOpts(), ctx);
    await engine.dispose();
    expect(r.frames).toBe(90);
    expect(r.changedFrames).toBeGreaterThan(85);
    const info = await videoInfo(out);
    expect([info.width, info.height, info.fps, info.frameCount]).toEqual([video.width, video.height, video.fps, 90]);
    const src = readFrames(video.file, { width: video.width, height: video.height });
    const passthrough = readFrames(base, { width: video.width, height: video.height });
    const inside: number[] = [];
    const lum: number[] = [];
    let outside = 0;
    let i = 0;
    for await (const f of readFrames(out, { width: video.width, height: video.height })) {
      const s = (await src.next()).value!;
      const p = (await passthrough.next()).value!;
      const face = faces.frames[i]!;
      inside.push(meanDiff(f, s, face.mouth));
      lum.push(meanDiff(f, createImage(f.width, f.height), face.mouth) - meanDiff(s, createImage(s.width, s.height), face.mouth));
      outside = Math.max(outside, worstBlockOutside(f, p, face.mouth));
      i++;
    }
    await src.return(undefined);
    await passthrough.return(undefined);
    expect(i).toBe(90);
    const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
    // frames whose whole audio window (-80 ms .. +120 ms at 30 fps) is inside or outside a loud span
    const loud = lum.filter((_, k) => isLoudAt(k / 30 - 0.08) && isLoudAt(k / 30 + 0.12));
    const silent = lum.filter((_, k) => !isLoudAt(k / 30 - 0.08) && !isLoudAt(k / 30 + 0.12) && !isLoudAt(k / 30));
    expect(loud.length).toBeGreaterThan(20);
    expect(silent.length).toBeGreaterThan(15);
    console.log(`musetalk stand-in: mouth box change ${mean(inside).toFixed(2)} (mean abs), brightening loud ${mean(loud).toFixed(2)} vs silent ${mean(silent).toFixed(2)}, worst 8x8 block outside the box against the codec-only pass ${outside.toFixed(2)}`);
    expect(Math.min(...inside)).toBeGreaterThan(0.5);
    expect(mean(loud)).toBeGreaterThan(mean(silent) + 8);
    expect(outside).toBeLessThan(3);
  });

  it('lipSync with engine musetalk, in chunks as the pipeline renders: every frame time kept, a second run reuses every chunk', async () => {
    const framePts = async (file: string): Promise<string[]> =>
      (await runFfprobe(['-select_streams', 'v:0', '-show_entries', 'frame=pts_time', '-of', 'csv=p=0', file])).split('\n').map((l) => l.split(',')[0]!.trim()).filter(Boolean);
    const kept = new Map<string, string>();
    const store = {
      get: async (k: string) => kept.get(k),
      put: async (k: string, f: string) => {
        const to = path.join(dir, `chunk-${kept.size}.mp4`);
        await fsp.copyFile(f, to);
        kept.set(k, to);
      },
    };
    const run = (out: string) =>
      lipSync({ video: video.file, speech: { file: speech }, output: out, faces, audio: [{ file: speech, language: 'spa' }], chunks: { store, identity: video.file, chunkFrames: 30 } }, { engine: 'musetalk', musetalk: { modelDir: TINY }, sessions, tmpDir: dir });
    const r = await run(path.join(dir, 'lipsync.mp4'));
    expect(r.engine).toBe('musetalk');
    expect(r.frames).toBe(90);
    expect(r.chunks).toMatchObject({ total: 3, rendered: 3 });
    expect(await framePts(path.join(dir, 'lipsync.mp4'))).toEqual(await framePts(video.file));
    const again = await run(path.join(dir, 'lipsync-again.mp4'));
    expect(again.chunks).toMatchObject({ total: 3, rendered: 0 });
  });

  const fixture = (): LipsConformanceFixture => ({ video, speech: { file: speech }, faces, tmpDir: dir });
  for (const c of LIPS_CONFORMANCE_CHECKS) it(`conformance: ${c.name}`, () => c.run(() => MuseTalkEngine.load({ modelDir: TINY, sessions }), fixture()));
});
