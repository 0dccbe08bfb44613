/**
 * The media steps of a dub keep every event where it was against the picture: the trimmed source
 * video (trim), the audio the dub is built on (extractAudio), the dubbed track (encodeAudioChunked)
 * and the dubbed video (mux), run as prepare-asset and generate-version run them, on sources made
 * by ffmpeg with a one-frame flash and a beep at the same presentation times. Where events sit is
 * measured on decoded frames (their pts) and decoded audio (its first frame's pts), not read from
 * durations. The full pipeline on the same sources, with and without lips: test/sync-dub.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeWaveform, encodeAudioChunked, extractAudio, levelToDb, mux, probe, streamStarts, trim, type AacChunkStore } from './index.js';
import { tempDir } from '../test-support/media-fixtures.js';
import { beepToFlash, FLASH_FRAMES, makeSyncCase, makeSyncParts, SYNC_CASES, SYNC_FPS, timelineEvents, type TimelineEvents } from '../test-support/sync-events.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir('dub-sync-');
  await makeSyncParts(tmp.file('v.mkv'), tmp.file('a.wav'));
}, 60_000);
afterAll(async () => {
  await tmp.cleanup();
});

function memoryStore(): AacChunkStore {
  const files = new Map<string, string>();
  return { get: async (k) => files.get(k), put: async (k, f) => void files.set(k, f) };
}

/** prepare-asset's trim and audio, generate-version's dubbed track and mux (the mix stands in for the dub: it holds the beeps). */
async function dubMedia(source: string, name: string, window?: { start: number; end: number }): Promise<{ out: string; trimmed: string; mixFrames: number; duration: number }> {
  const info = await probe(source);
  const range = window ?? { start: 0, end: info.duration };
  const trimmed = tmp.file(`${name}-source.mp4`);
  await trim(source, trimmed, { ...range, info });
  const mix = await extractAudio(source, tmp.file(`${name}-mix.wav`), { sampleRate: 44100, channels: 2, format: 'float32', ...range });
  const m4a = tmp.file(`${name}-result.m4a`);
  const work = tmp.file(`${name}-work`);
  await mkdir(work, { recursive: true });
  await encodeAudioChunked(mix.file, m4a, { store: memoryStore(), tmpDir: work });
  const audioStart = (await streamStarts(trimmed, { only: 'audio' })).audio ?? 0;
  const out = tmp.file(`${name}-dubbed.mp4`);
  await mux({ video: trimmed, audioTracks: [{ file: m4a, language: 'spa' }], output: out, durationSeconds: range.end - range.start, copyAudio: true, audioStart: audioStart > 0.0005 ? audioStart : 0 });
  return { out, trimmed, mixFrames: mix.frames, duration: range.end - range.start };
}

function expectSameTimeline(src: TimelineEvents, out: TimelineEvents, label: string): void {
  expect(out.flashes, `${label}: flashes`).toHaveLength(FLASH_FRAMES.length);
  const want = beepToFlash(src);
  const got = beepToFlash(out);
  got.forEach((g, i) => expect(Math.abs(g - want[i]!), `${label}: beep ${i} is ${(1000 * g).toFixed(1)} ms from its flash, ${(1000 * want[i]!).toFixed(1)} ms in the source`).toBeLessThanOrEqual(0.015));
  // the picture keeps its first frame's time, and the flashes theirs
  expect(Math.abs(out.videoStart - (src.videoStart - Math.min(src.videoStart, src.audioStart))), `${label}: video start ${out.videoStart}`).toBeLessThan(0.001);
  expect(out.frames, `${label}: frames`).toBe(src.frames);
  expect(Math.abs(out.duration - src.duration), `${label}: container ${out.duration} s, source ${src.duration} s`).toBeLessThan(1 / SYNC_FPS);
}

// the cases are independent (own files): two at a time keep both cores busy
describe.concurrent('the media steps of a dub keep events in place against the picture', () => {
  for (const name of Object.keys(SYNC_CASES)) {
    it(name, async () => {
      const source = tmp.file(`${name.replace(/\W+/g, '-')}.${SYNC_CASES[name]!.ext}`);
      await makeSyncCase(name, tmp.file('v.mkv'), tmp.file('a.wav'), source);
      const src = await timelineEvents(source);
      // the edge case is what it claims to be
      if (name === 'audio after video') expect(src.audioStart - src.videoStart).toBeGreaterThan(0.4);
      if (name === 'video after audio') expect(src.videoStart - src.audioStart).toBeGreaterThan(0.25);
      if (name === 'variable frame rate') expect(src.frames).toBeLessThan(80);
      const { out, trimmed, mixFrames, duration } = await dubMedia(source, name.replace(/\W+/g, '-'));
      // the trimmed source and the dubbed video
      expectSameTimeline(src, await timelineEvents(trimmed), `${name}, trimmed source`);
      const dubbed = await timelineEvents(out);
      expectSameTimeline(src, dubbed, `${name}, dubbed`);
      // the dubbed audio starts where the source's did against the picture (copied AAC: within one AAC frame after it)
      const srcLag = src.audioStart - src.videoStart;
      const outLag = dubbed.audioStart - dubbed.videoStart;
      expect(outLag - srcLag, `${name}: audio starts ${(1000 * outLag).toFixed(1)} ms after the picture, ${(1000 * srcLag).toFixed(1)} ms in the source`).toBeGreaterThan(-0.024);
      expect(outLag - srcLag).toBeLessThan(0.024);
      // the studio's waveform of the source is on the same timeline: the first beep in its window
      const wave = await computeWaveform(source);
      const loud = wave.peak.findIndex((p) => levelToDb(p) > -10) / wave.rate;
      const beep = src.beeps[0]! - Math.min(src.videoStart, src.audioStart);
      expect(beep - loud, `${name}: waveform's first beep at ${loud} s, the beep at ${beep.toFixed(4)} s`).toBeGreaterThanOrEqual(-0.001);
      expect(beep - loud).toBeLessThan(1 / wave.rate + 0.001);
      // the extracted audio spans the timeline from its origin (the audio the transcript and the dub
      // are timed on): to its end, or to where the audio ends first (the picture 0.3 s late)
      expect(mixFrames).toBeLessThanOrEqual(Math.round(duration * 44100));
      expect(mixFrames).toBeGreaterThanOrEqual(Math.round((name === 'video after audio' ? duration - 0.33 : duration - 0.01) * 44100));
    }, 180_000);
  }
});

/** Decoded audio (mono 44.1 kHz) and the presentation time of its first sample. */
async function decodedAudio(file: string): Promise<{ x: Float32Array; start: number }> {
  const exec = promisify(execFile);
  const { stdout } = await exec('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'f32le', '-'], { encoding: 'buffer', maxBuffer: 1 << 26 });
  const start = (await streamStarts(file, { only: 'audio' })).audio ?? 0;
  return { x: new Float32Array(stdout.buffer, stdout.byteOffset, stdout.length / 4), start };
}

/** The lag (s) of `b` against `a` on the presentation timeline that best lines up their sound, within +-`range`. */
function soundLag(a: { x: Float32Array; start: number }, b: { x: Float32Array; start: number }, from: number, seconds: number, range: number): number {
  const rate = 44100;
  const n = Math.round(seconds * rate);
  const ia = Math.round((from - a.start) * rate);
  let best = -Infinity;
  let lag = 0;
  for (let d = -Math.round(range * rate); d <= Math.round(range * rate); d++) {
    const ib = Math.round((from - b.start) * rate) + d;
    let dot = 0;
    let eb = 0;
    for (let i = 0; i < n; i++) {
      const v = b.x[ib + i] ?? 0;
      dot += a.x[ia + i]! * v;
      eb += v * v;
    }
    const score = eb > 0 ? dot / Math.sqrt(eb) : -Infinity;
    if (score > best) {
      best = score;
      lag = d / rate;
    }
  }
  return lag;
}

describe.concurrent('a trim window keeps events in place too', () => {
  // the cut starts between keyframes (the video is re-encoded), or before the picture starts
  for (const [name, start, end] of [['audio after video', 1, 3.5], ['B-frames', 1.1, 3.5], ['video after audio', 0.1, 3.5]] as const) {
    it(`${name}, [${start}, ${end})`, async () => {
      const slug = `${name.replace(/\W+/g, '-')}-cut`;
      const source = tmp.file(`${slug}.${SYNC_CASES[name]!.ext}`);
      await makeSyncCase(name, tmp.file('v.mkv'), tmp.file('a.wav'), source);
      const src = await timelineEvents(source);
      const origin = Math.min(src.videoStart, src.audioStart);
      const { out, mixFrames } = await dubMedia(source, slug, { start, end });
      const dubbed = await timelineEvents(out);
      // the flashes and beeps inside the window, each moved by the window's start
      const inside = src.flashes.filter((t) => t - origin >= start && t - origin < end - 0.1);
      expect(dubbed.flashes.length).toBe(inside.length);
      dubbed.flashes.forEach((t, i) => expect(Math.abs(t - (inside[i]! - origin - start))).toBeLessThan(0.001));
      const want = beepToFlash(src);
      dubbed.flashes.forEach((t, i) => {
        const beep = dubbed.beeps.find((b) => Math.abs(b - t - want[src.flashes.indexOf(inside[i]!)]!) < 0.1);
        expect(beep, `no beep near ${t} s`).toBeDefined();
        expect(Math.abs(beep! - t - want[src.flashes.indexOf(inside[i]!)]!)).toBeLessThanOrEqual(0.015);
      });
      // the picture starts where the window meets it
      expect(Math.abs(dubbed.videoStart - Math.max(0, src.videoStart - origin - start))).toBeLessThan(1 / SYNC_FPS / 2 + 0.001);
      expect(Math.abs(dubbed.duration - (end - start))).toBeLessThan(1 / SYNC_FPS);
      expect(mixFrames).toBe(Math.round((end - start) * 44100));
    }, 180_000);
  }
});

describe('a real phone recording (fixtures/iphone-rotated.mov, from another project\'s test fixtures)', () => {
  it('keeps its sound against its picture, every frame and its rotation', async () => {
    const source = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'iphone-rotated.mov');
    const { out } = await dubMedia(source, 'iphone');
    const [srcInfo, outInfo] = await Promise.all([probe(source), probe(out)]);
    expect(outInfo.video!.rotation).toBe(srcInfo.video!.rotation);
    expect(srcInfo.video!.rotation).not.toBe(0);
    const [srcVideo, outVideo] = await Promise.all([streamStarts(source, { only: 'video' }), streamStarts(out, { only: 'video' })]);
    expect(Math.abs(outVideo.video! - srcVideo.video!)).toBeLessThan(0.001);
    const count = async (f: string) => {
      const exec = promisify(execFile);
      const { stdout } = await exec('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', f]);
      return Number(stdout.trim());
    };
    expect(await count(out)).toBe(await count(source));
    expect(Math.abs(outInfo.duration - srcInfo.duration)).toBeLessThan(1 / srcInfo.video!.fps);
    // the sound of 0.3-1.8 s lines up with the source's at the same presentation times (AAC encoded twice: within 1 ms)
    const lag = soundLag(await decodedAudio(source), await decodedAudio(out), 0.3, 1.5, 0.03);
    expect(Math.abs(lag), `the dubbed sound is ${(1000 * lag).toFixed(2)} ms off the source's`).toBeLessThanOrEqual(0.001);
  }, 60_000);
});
