// Real clips for the benchmarks, made from ../shared/media: the face of talking-head-480.mp4 looped
// under real English speech (voice-ref-a, voice-ref-b, jfk and the two-speaker call, one after
// the other with 0.6 s pauses, looped), with or without music-coffee.wav under it (-6 dB, about
// 14 dB under the speech). Clips are made once per folder and reused.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '..', '..');
export const MEDIA = path.resolve(ROOT, '..', 'shared', 'media');
export const CLIP_MEDIA = ['talking-head-480.mp4', 'voice-ref-a.mp3', 'voice-ref-b.mp3', 'jfk.wav', 'two-speakers-call.wav', 'music-coffee.wav'];

/** The recordings a clip needs that ../shared/media lacks. */
export function missingMedia() {
  return CLIP_MEDIA.filter((f) => !fs.existsSync(path.join(MEDIA, f)));
}

/**
 * The folder a benchmark makes its clips in (`keep`, reused, or a new temporary one); when
 * ../shared/media lacks a recording the clips need, says so and ends the process (the bench is skipped).
 */
export function clipsDir(bench, keep) {
  const missing = missingMedia();
  if (missing.length) {
    console.log(`bench ${bench} skipped: ${MEDIA} lacks ${missing.join(', ')}`);
    process.exit(0);
  }
  const dir = keep ? path.resolve(keep) : fs.mkdtempSync(path.join(os.tmpdir(), `dub-bench-${bench}-`));
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function ffmpeg(args) {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`ffmpeg ${args.join(' ')}: ${r.stderr}`);
}

/** ~92 s of real English speech, 44.1 kHz stereo, in `dir`. */
export function speechLoop(dir) {
  const out = path.join(dir, 'speech-loop.wav');
  if (fs.existsSync(out)) return out;
  const inputs = ['voice-ref-a.mp3', 'voice-ref-b.mp3', 'jfk.wav', 'two-speakers-call.wav'];
  const chains = inputs.map((_, i) => `[${i}:a]aresample=44100,aformat=channel_layouts=stereo,apad=pad_dur=0.6[a${i}]`).join(';');
  ffmpeg([...inputs.flatMap((f) => ['-i', path.join(MEDIA, f)]), '-filter_complex', `${chains};${inputs.map((_, i) => `[a${i}]`).join('')}concat=n=${inputs.length}:v=0:a=1[out]`, '-map', '[out]', '-c:a', 'pcm_s16le', out]);
  return out;
}

/** The face looped for `m` minutes under the looped speech (and the music for `music`), in `dir`. */
export function clip(dir, m, variant) {
  return clipSeconds(dir, m * 60, variant, `clip-${m}min-${variant}.mp4`);
}

/**
 * A clip of `s` seconds in `dir`: `clean` and `music` as `clip` makes them; `talking-head` the
 * first `s` seconds of talking-head-480.mp4 with its own audio (a real person speaking to the
 * camera, with the room and music of the recording under the voice; at most 33.6 s).
 */
export function clipSeconds(dir, s, variant, name = `clip-${s}s-${variant}.mp4`) {
  const out = path.join(dir, name);
  if (fs.existsSync(out)) return out;
  const seconds = String(s);
  if (variant === 'talking-head') {
    if (s > 33.6) throw new Error(`talking-head clips are at most 33.6 s long (talking-head-480.mp4), got ${s} s`);
    ffmpeg(['-i', path.join(MEDIA, 'talking-head-480.mp4'), '-t', seconds, '-map', '0:v', '-map', '0:a', '-c:v', 'copy', '-c:a', 'aac', '-b:a', '128k', out]);
    return out;
  }
  const speech = speechLoop(dir);
  const args = ['-stream_loop', '-1', '-i', path.join(MEDIA, 'talking-head-480.mp4'), '-stream_loop', '-1', '-i', speech];
  if (variant === 'music') {
    args.push('-stream_loop', '-1', '-i', path.join(MEDIA, 'music-coffee.wav'));
    args.push('-filter_complex', '[2:a]aresample=44100,aformat=channel_layouts=stereo,volume=0.5[m];[1:a][m]amix=inputs=2:duration=first:normalize=0[a]', '-map', '0:v', '-map', '[a]');
  } else {
    args.push('-map', '0:v', '-map', '1:a');
  }
  args.push('-t', seconds, '-c:v', 'copy', '-c:a', 'aac', '-b:a', '128k', '-shortest', out);
  ffmpeg(args);
  return out;
}
