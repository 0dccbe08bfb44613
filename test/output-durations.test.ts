/**
 * dubbed.mp4 and dubbed.m4a keep the source's duration (the container's, which players show) to
 * within one video frame, and dubbed.mp4 keeps every video frame, in no_lips and with_lips: on
 * generated edge cases (an audio stream longer than the video, one shorter, a variable frame rate
 * video) and on a real talking head. Each source is dubbed by `dub run` without lips, then with
 * lips from the same working data (the prepared asset is reused).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUB, makeSample } from './e2e-helpers.js';
import { describeWithMedia, media } from './support/media.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-durations-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ff = (args: string[]) => execFileSync('ffmpeg', ['-v', 'error', '-y', ...args]);

interface Facts {
  duration: number;
  frames: number;
  fps: number;
}
function facts(file: string): Facts {
  const j = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'format=duration:stream=codec_type,nb_read_frames,avg_frame_rate', '-of', 'json', file], { encoding: 'utf8' })) as {
    format: { duration: string };
    streams: { codec_type: string; nb_read_frames?: string; avg_frame_rate?: string }[];
  };
  const v = j.streams.find((s) => s.codec_type === 'video');
  const [n, d] = (v?.avg_frame_rate ?? '0/1').split('/').map(Number) as [number, number];
  return { duration: Number(j.format.duration), frames: Number(v?.nb_read_frames ?? 0), fps: d ? n / d : 0 };
}

/**
 * `env`: engine choices for the run. The generated edge cases are espeak-ng speech over a test
 * pattern and test the container's timing, which the mux decides whatever speaks: they run
 * without separation and speak with espeak-ng (half the CPU of the defaults); the real talking
 * head runs on the defaults.
 */
function dubBothModes(name: string, source: string, env: Record<string, string> = {}): void {
  const out = path.join(dir, `out-${name}`);
  for (const mode of ['no_lips', 'with_lips'] as const) {
    it(`${name}, ${mode}: same container duration within one frame, same frame count`, () => {
      const r = spawnSync(process.execPath, [DUB, 'run', source, '--from', 'en-US', '--to', 'es-ES', '-o', out, '--mode', mode, '--quiet'], { encoding: 'utf8', timeout: 400_000, env: { ...process.env, ...env } });
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      const src = facts(source);
      const frame = 1 / src.fps;
      const video = facts(path.join(out, 'es-ES', 'dubbed.mp4'));
      const audio = facts(path.join(out, 'es-ES', 'dubbed.m4a'));
      expect(video.frames).toBe(src.frames);
      expect(Math.abs(video.duration - src.duration), `dubbed.mp4 ${video.duration} s vs source ${src.duration} s`).toBeLessThan(frame);
      expect(Math.abs(audio.duration - src.duration), `dubbed.m4a ${audio.duration} s vs source ${src.duration} s`).toBeLessThan(frame);
    }, 400_000);
  }
}

describe('output durations on generated edge cases', () => {
  const sources: Record<string, string> = {};
  beforeAll(() => {
    const sample = makeSample(path.join(dir, 'sample.mp4')); // espeak-ng speech over a test pattern, 25 fps
    const v = path.join(dir, 'video-6s.mp4');
    ff(['-i', sample, '-t', '6', '-r', '25', '-an', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', v]);
    const aLong = path.join(dir, 'audio-6.3s.wav');
    const aShort = path.join(dir, 'audio-5.5s.wav');
    ff(['-i', sample, '-t', '6.3', '-vn', '-c:a', 'pcm_s16le', aLong]);
    ff(['-i', sample, '-t', '5.5', '-vn', '-c:a', 'pcm_s16le', aShort]);
    sources['audio longer than video'] = path.join(dir, 'long-audio.mp4');
    ff(['-i', v, '-i', aLong, '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac', sources['audio longer than video']]);
    sources['audio shorter than video'] = path.join(dir, 'short-audio.mp4');
    ff(['-i', v, '-i', aShort, '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac', sources['audio shorter than video']]);
    // Variable frame rate: every frame in the first 3 s, then every third.
    sources['variable frame rate'] = path.join(dir, 'vfr.mp4');
    ff(['-i', sample, '-t', '6', '-vf', "select='lt(t,3)+not(mod(n,3))'", '-fps_mode', 'vfr', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', sources['variable frame rate']]);
    // The edge cases are what they claim to be.
    const long = facts(sources['audio longer than video']);
    expect(long.duration).toBeCloseTo(6.3, 1);
    expect(long.frames).toBe(150);
    expect(facts(sources['audio shorter than video']).duration).toBeCloseTo(6, 1);
    const vfr = facts(sources['variable frame rate']);
    expect(vfr.frames).toBeLessThan(120);
  }, 120_000);
  for (const name of ['audio longer than video', 'audio shorter than video', 'variable frame rate']) {
    describe(name, () => dubBothModes(name, path.join(dir, { 'audio longer than video': 'long-audio.mp4', 'audio shorter than video': 'short-audio.mp4', 'variable frame rate': 'vfr.mp4' }[name]!), { DUB_SEPARATION_ENGINE: 'none', DUB_TTS_ENGINE: 'espeak-ng' }));
  }
});

describeWithMedia(['talking-head-480.mp4'], 'output durations on a real talking head', () => {
  const source = path.join(dir, 'head.mp4');
  beforeAll(() => {
    // 8 s of the real recording, re-encoded by ffmpeg (30 fps, AAC): its container outlasts the video by the AAC padding.
    ff(['-ss', '6', '-i', media('talking-head-480.mp4'), '-t', '8', '-vf', 'scale=320:320', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', source]);
  }, 60_000);
  dubBothModes('talking head', source);
});
