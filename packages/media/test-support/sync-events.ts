/**
 * Where events sit on a file's presentation timeline, for sync tests: one-frame white flashes
 * (found in decoded frames, each with its pts) and beeps (found in decoded audio, placed by the
 * first decoded frame's pts: priming and pre-skip already removed by the decoder), and sources made
 * with ffmpeg that hold both at the same presentation times.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const run = async (cmd: string, args: string[]): Promise<Buffer> => (await exec(cmd, args, { encoding: 'buffer', maxBuffer: 1 << 28 })).stdout;

export interface TimelineEvents {
  /** Decoded video frames. */
  frames: number;
  /** First video frame's presentation time (s). */
  videoStart: number;
  /** First decoded audio sample's presentation time (s). */
  audioStart: number;
  /** Presentation times of the flash frames and of the beeps' onsets (s). */
  flashes: number[];
  beeps: number[];
  /** Container duration (s). */
  duration: number;
  /** The decoded audio (mono) and its rate, from `audioStart`. */
  samples: Float32Array;
  rate: number;
}

/** The flashes (frames whose mean luma is over half scale) and beeps (|x| over `beepLevel`) of `file`. */
export async function timelineEvents(file: string, beepLevel = 0.3): Promise<TimelineEvents> {
  const probe = JSON.parse((await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_frames', '-show_entries', 'frame=best_effort_timestamp_time', '-of', 'json', file])).toString('utf8')) as { frames: { best_effort_timestamp_time: string }[] };
  const pts = probe.frames.map((f) => Number(f.best_effort_timestamp_time));
  const gray = await run('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:v:0', '-fps_mode', 'passthrough', '-vf', 'scale=8:8,format=gray', '-f', 'rawvideo', '-']);
  const frames = gray.length / 64;
  if (frames !== pts.length) throw new Error(`${file}: ${frames} frames decoded, ${pts.length} timestamps`);
  const flashes: number[] = [];
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let k = 0; k < 64; k++) sum += gray[i * 64 + k]!;
    if (sum / 64 > 128) flashes.push(pts[i]!);
  }
  const a = JSON.parse((await run('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-read_intervals', '%+#12', '-show_frames', '-show_entries', 'frame=best_effort_timestamp_time:stream=sample_rate', '-of', 'json', file])).toString('utf8')) as {
    frames: { best_effort_timestamp_time: string }[];
    streams: { sample_rate: string }[];
  };
  const rate = Number(a.streams[0]!.sample_rate);
  const audioStart = Number(a.frames[0]!.best_effort_timestamp_time);
  const pcm = await run('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-c:a', 'pcm_f32le', '-f', 'f32le', '-']);
  const x = new Float32Array(pcm.buffer, pcm.byteOffset, pcm.length / 4);
  const beeps: number[] = [];
  for (let i = 0; i < x.length; i++) {
    if (Math.abs(x[i]!) > beepLevel) {
      beeps.push(audioStart + i / rate);
      i += Math.round(0.2 * rate);
    }
  }
  const fmt = JSON.parse((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'json', file])).toString('utf8')) as { format: { duration: string } };
  return { frames, videoStart: pts[0]!, audioStart, flashes, beeps, duration: Number(fmt.format.duration), samples: x, rate };
}

/** Each beep's offset from its flash (s), pairing them in order. */
export function beepToFlash(e: TimelineEvents): number[] {
  if (e.flashes.length !== e.beeps.length) throw new Error(`${e.flashes.length} flashes but ${e.beeps.length} beeps`);
  return e.flashes.map((t, i) => e.beeps[i]! - t);
}

/**
 * The onset of the beep near `time` (s, within +-`window`): the first sample over half the largest
 * |x| there; for outputs where other sounds (a dub's speech) pass the fixed level.
 */
export function beepNear(e: TimelineEvents, time: number, window = 0.1): number | undefined {
  const a = Math.max(0, Math.floor((time - window - e.audioStart) * e.rate));
  const b = Math.min(e.samples.length, Math.ceil((time + window - e.audioStart) * e.rate));
  let peak = 0;
  for (let i = a; i < b; i++) peak = Math.max(peak, Math.abs(e.samples[i]!));
  if (!(peak > 0.05)) return undefined;
  for (let i = a; i < b; i++) if (Math.abs(e.samples[i]!) > peak / 2) return e.audioStart + i / e.rate;
  return undefined;
}

/** Flash frames at these frame numbers of a 25 fps, 160x120 picture (lossless FFV1 in Matroska). */
export const FLASH_FRAMES = [30, 72];
export const SYNC_FPS = 25;
export const SYNC_SECONDS = 4;

/** The picture (black, white flash frames at FLASH_FRAMES) and the sound (beeps at the same times over a noise bed, 48 kHz). */
export async function makeSyncParts(video: string, audio: string): Promise<void> {
  const enable = FLASH_FRAMES.map((n) => `eq(n\\,${n})`).join('+');
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=black:s=160x120:r=${SYNC_FPS}:d=${SYNC_SECONDS}`, '-vf', `drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='${enable}'`, '-c:v', 'ffv1', video]);
  const on = FLASH_FRAMES.map((n) => `between(t\\,${n / SYNC_FPS}\\,${n / SYNC_FPS + 0.04})`).join('+');
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `aevalsrc='0.05*(random(0)-0.5)+if(${on}\\,0.6*sin(2*PI*1000*t)\\,0)':s=48000:d=${SYNC_SECONDS}`, '-c:a', 'pcm_s16le', audio]);
}

const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
const X264_BFRAMES = ['-c:v', 'libx264', '-preset', 'veryfast', '-bf', '2', '-pix_fmt', 'yuv420p'];

/**
 * The edge cases, each an ffmpeg command line (after `-y`) from the parts `v` (video) and `a`
 * (audio) to `out`: what ordinary tools write.
 */
export const SYNC_CASES: Record<string, { ext: string; args: (v: string, a: string, out: string) => string[] }> = {
  // H.264 + AAC at 16 kHz: the first audio packet at -0.064 s (1024 samples of priming, an edit list)
  'AAC priming': { ext: 'mp4', args: (v, a, out) => ['-i', v, '-i', a, ...X264, '-bf', '0', '-c:a', 'aac', '-ar', '16000', out] },
  // a MOV like a phone's: B-frames (a composition offset in the video's edit list), AAC 44.1 kHz with its priming edit
  'MOV with edit lists': { ext: 'mov', args: (v, a, out) => ['-i', v, '-i', a, ...X264_BFRAMES, '-c:a', 'aac', '-ar', '44100', out] },
  'B-frames': { ext: 'mp4', args: (v, a, out) => ['-i', v, '-i', a, ...X264_BFRAMES, '-c:a', 'aac', out] },
  // the audio 0.5 s after the picture (its track starts with an empty edit)
  'audio after video': { ext: 'mp4', args: (v, a, out) => ['-i', v, '-itsoffset', '0.5', '-i', a, ...X264, '-c:a', 'aac', out] },
  // the picture 0.3 s after the sound
  'video after audio': { ext: 'mp4', args: (v, a, out) => ['-itsoffset', '0.3', '-i', v, '-i', a, ...X264, '-fps_mode', 'passthrough', '-c:a', 'aac', out] },
  // every frame for 2 s, then every third (the second flash is frame 72, kept)
  'variable frame rate': { ext: 'mp4', args: (v, a, out) => ['-i', v, '-i', a, '-vf', "select='lt(t,2)+not(mod(n,3))'", '-fps_mode', 'vfr', ...X264, '-c:a', 'aac', out] },
  // Opus: 312 samples of pre-skip, its packets from -7 ms
  'MKV with Opus': { ext: 'mkv', args: (v, a, out) => ['-i', v, '-i', a, ...X264_BFRAMES, '-c:a', 'libopus', out] },
  'WebM VP9 with Opus': { ext: 'webm', args: (v, a, out) => ['-i', v, '-i', a, '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-c:a', 'libopus', out] },
};

export async function makeSyncCase(name: string, v: string, a: string, out: string): Promise<void> {
  const c = SYNC_CASES[name];
  if (!c) throw new Error(`no sync case ${name}`);
  await run('ffmpeg', ['-v', 'error', '-y', ...c.args(v, a, out)]);
}
