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
import { resolveContext, type PartialContext } from '@dub/core';
import { runFfprobe } from './ffmpeg.js';
import type { MediaToolOptions } from './tools.js';

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
