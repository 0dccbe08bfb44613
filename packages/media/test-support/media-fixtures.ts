/** Media the tests generate themselves: ffmpeg lavfi sources and espeak-ng speech, in a temp dir. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export async function tempDir(prefix = 'dub-media-'): Promise<{ dir: string; file: (name: string) => string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, file: (name) => path.join(dir, name), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function ffmpeg(args: string[]): Promise<void> {
  await exec('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...args], { maxBuffer: 16 * 1024 * 1024 });
}

export async function ffprobeJson(file: string): Promise<{ streams: Record<string, unknown>[]; format: Record<string, unknown> }> {
  const { stdout } = await exec('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]);
  return JSON.parse(stdout) as { streams: Record<string, unknown>[]; format: Record<string, unknown> };
}

export interface VideoSpec {
  duration: number;
  width?: number;
  height?: number;
  fps?: number;
  /** Include a sine audio track (default true). */
  audio?: boolean;
  /** Audio frequency (Hz). */
  freq?: number;
  sampleRate?: number;
  channels?: number;
  /** Keyframe interval in frames (default 2 s). */
  gop?: number;
}

/** An H.264 (+ AAC) MP4 from testsrc (and sine). */
export async function makeVideo(file: string, spec: VideoSpec): Promise<void> {
  const w = spec.width ?? 320;
  const h = spec.height ?? 240;
  const fps = spec.fps ?? 25;
  const args = ['-f', 'lavfi', '-i', `testsrc=size=${w}x${h}:rate=${fps}:duration=${spec.duration}`];
  if (spec.audio !== false) {
    args.push('-f', 'lavfi', '-i', `sine=frequency=${spec.freq ?? 440}:sample_rate=${spec.sampleRate ?? 44100}:duration=${spec.duration}`);
  }
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', String(spec.gop ?? fps * 2));
  if (spec.audio !== false) args.push('-c:a', 'aac', '-ac', String(spec.channels ?? 2));
  args.push('-shortest', file);
  await ffmpeg(args);
}

/** A sine tone in any container ffmpeg infers from the extension. */
export async function makeTone(file: string, opts: { duration: number; freq?: number; sampleRate?: number; channels?: number; codec?: string }): Promise<void> {
  const args = ['-f', 'lavfi', '-i', `sine=frequency=${opts.freq ?? 440}:sample_rate=${opts.sampleRate ?? 44100}:duration=${opts.duration}`];
  if (opts.channels && opts.channels > 1) args.push('-ac', String(opts.channels));
  if (opts.codec) args.push('-c:a', opts.codec);
  args.push(file);
  await ffmpeg(args);
}

/** Speech from espeak-ng (22050 Hz mono WAV). */
export async function makeSpeech(file: string, text: string, voice = 'en'): Promise<void> {
  await exec('espeak-ng', ['-v', voice, '-w', file, text]);
}
