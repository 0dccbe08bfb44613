/**
 * Where a file's streams start on its presentation timeline, as a player presents them: the first
 * video frame's presentation time (B-frame reordering and MP4 edit lists applied), the first
 * decoded audio sample's (encoder priming and Opus pre-skip removed), and the file's origin, the
 * earlier of the two. The dubbing timeline is this origin's: time 0 of a transcript, of the
 * extracted audio and of the dubbed track is the source's presentation origin, so a stream that
 * starts late (audio 0.5 s after the picture, the picture 0.3 s after the sound) keeps its offset.
 *
 * ffmpeg's own zero (the container's `start_time`, the earliest *packet*) can differ from the
 * origin: an Opus track in Matroska starts its packets 6.5 ms before its first presented sample.
 * `formatStart` is that zero, which `-ss` counts from.
 */
import { open } from 'node:fs/promises';
import { resolveContext, type PartialContext } from '@dub/core';
import { runFfprobe } from './ffmpeg.js';
import { resolveMediaTools, tools, type MediaToolOptions } from './tools.js';
import { fileIdentity, FileMemo } from './file-memo.js';

export interface StreamStarts {
  /** Presentation time (s, in the file's timestamps) of the first video frame; undefined without a video stream. */
  video: number | undefined;
  /** Presentation time of the first decoded sample of the chosen audio stream; undefined without one. */
  audio: number | undefined;
  /** The earlier of `video` and `audio` (else the container's start, else 0). */
  origin: number;
  /** The container's start time as ffmpeg counts `-ss` from it (0 when not stated). */
  formatStart: number;
}

export interface StreamStartsOptions extends MediaToolOptions {
  /** Which audio stream (0 = the first, the default). */
  audioStream?: number;
  /** Look at one kind of stream only (default both). */
  only?: 'video' | 'audio';
}

/** Packets read from the head of a stream to find its first presented frame (reordering, priming). */
const HEAD_PACKETS = 12;

export async function streamStarts(file: string, opts: StreamStartsOptions = {}, context: PartialContext = {}): Promise<StreamStarts> {
  const ctx = resolveContext(context);
  // A PCM WAV (every track the stages write) has no timestamps: one audio stream from 0, as
  // ffprobe says, without its three processes (~0.2 CPU s each on a 2-core machine, issue #27).
  if (await isPcmWav(file)) {
    const audio = opts.only === 'video' || (opts.audioStream ?? 0) !== 0 ? undefined : 0;
    return { video: undefined, audio, origin: 0, formatStart: 0 };
  }
  const id = await fileIdentity(file);
  const key = id && `${resolveMediaTools(tools(opts)).ffprobePath}|${file}|${id}|${opts.audioStream ?? 0}|${opts.only ?? ''}`;
  const known = key ? started.get(key) : undefined;
  if (known) return known;
  if (!key) return probedStreamStarts(file, opts, ctx);
  // stages that run together (trim and audio) ask about the same file at once: one ffprobe each
  const asking = startsAsked.get(key);
  if (asking) return structuredClone(await asking);
  const p = (async () => {
    const starts = await probedStreamStarts(file, opts, ctx);
    // kept only if the file did not change while ffprobe read it
    if ((await fileIdentity(file)) === id) started.set(key, starts);
    return starts;
  })();
  startsAsked.set(key, p);
  try {
    return structuredClone(await p);
  } finally {
    startsAsked.delete(key);
  }
}

/** Questions to ffprobe under way, by the same key. */
const startsAsked = new Map<string, Promise<StreamStarts>>();

/** Stream starts of files that have not changed since (file-memo.ts). */
const started = new FileMemo<StreamStarts>();

/** `streamStarts` as ffprobe reads it (three processes), for any file. */
export async function probedStreamStarts(file: string, opts: StreamStartsOptions = {}, context: PartialContext = {}): Promise<StreamStarts> {
  const ctx = resolveContext(context);
  const first = async (select: string): Promise<number | undefined> => {
    const text = await runFfprobe(
      ['-select_streams', select, '-read_intervals', `%+#${HEAD_PACKETS}`, '-show_frames', '-show_entries', 'frame=best_effort_timestamp_time:stream=start_time', '-of', 'json', '--', file],
      opts,
      ctx,
    );
    const j = JSON.parse(text) as { frames?: { best_effort_timestamp_time?: string }[]; streams?: { start_time?: string }[] };
    const times = (j.frames ?? []).map((f) => seconds(f.best_effort_timestamp_time)).filter((t): t is number => t !== undefined);
    if (times.length) return Math.min(...times);
    // no frame decoded in the head (an exotic codec): the stream's stated start
    return seconds(j.streams?.[0]?.start_time);
  };
  const [video, audio, format] = await Promise.all([
    opts.only === 'audio' ? undefined : first('v:0'),
    opts.only === 'video' ? undefined : first(`a:${opts.audioStream ?? 0}`),
    runFfprobe(['-show_entries', 'format=start_time', '-of', 'json', '--', file], opts, ctx).then((t) => seconds((JSON.parse(t) as { format?: { start_time?: string } }).format?.start_time)),
  ]);
  const known = [video, audio].filter((t): t is number => t !== undefined);
  const formatStart = format ?? 0;
  return { video, audio, origin: known.length ? Math.min(...known) : formatStart, formatStart };
}

/** ffmpeg seconds with a sign (fixed-point). */
export function ffSignedTime(sec: number): string {
  if (!Number.isFinite(sec)) throw new RangeError(`invalid time ${sec}`);
  return sec.toFixed(6);
}

function seconds(v: string | undefined): number | undefined {
  if (v === undefined || v === 'N/A' || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** WAVE format tags of uncompressed samples: PCM, IEEE float, and the extensible header (whose sub-format must then be one of the first two). */
const PCM_TAGS = new Set([0x0001, 0x0003, 0xfffe]);

/**
 * Whether `file` is a RIFF/WAVE file of uncompressed samples (its `fmt ` chunk among the first 64
 * KiB): ffmpeg's wav demuxer starts such a stream at 0 and gives the container no start time.
 * Anything else (compressed audio in WAV, RF64, not a WAV) is left to ffprobe.
 */
export async function isPcmWav(file: string): Promise<boolean> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    if (bytesRead < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return false;
    for (let at = 12; at + 8 <= bytesRead; ) {
      const id = head.toString('latin1', at, at + 4);
      const size = head.readUInt32LE(at + 4);
      if (id === 'fmt ') {
        if (at + 10 > bytesRead) return false;
        const tag = head.readUInt16LE(at + 8);
        // the extensible header's sub-format GUID starts with the format tag it stands for
        if (tag === 0xfffe) return size >= 40 && at + 34 <= bytesRead && PCM_TAGS.has(head.readUInt16LE(at + 32)) && head.readUInt16LE(at + 32) !== 0xfffe;
        return PCM_TAGS.has(tag);
      }
      if (id === 'data') return false;
      at += 8 + size + (size % 2);
    }
    return false;
  } finally {
    await fh.close();
  }
}
