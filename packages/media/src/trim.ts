/**
 * Cut [start, end) out of a video. The video stream is copied (no quality loss, fast) when the
 * cut starts at 0 or exactly on a keyframe, since a stream copy can only start on one; otherwise it
 * is re-encoded (H.264) so the cut is frame-accurate. Audio is re-encoded to AAC, which makes its
 * cut sample-accurate, except where nothing is cut: a window from 0 to the input's end over an MP4/MOV
 * whose every audio stream is AAC copies them as they are (`copiesAudio`; the same samples and
 * places, without ~2.4 CPU s of AAC encoding per minute of stereo on a 2-core machine, which ran
 * beside the transcription).
 *
 * Times are on the input's presentation timeline (timing.ts): 0 is its presentation origin. The
 * output keeps every stream where it was against the others: its time 0 is the origin + `start`,
 * a video that starts 0.3 s after the sound still does, an audio stream that starts after the
 * picture still does, and nothing is shifted to make room for the AAC encoder's priming (the MP4
 * edit list carries it). No stream gets an empty edit the input did not have.
 */
import { AssetError, resolveContext, type PartialContext } from '@dub/core';
import { faststartArgs } from './container.js';
import { runFfmpeg, runFfprobe } from './ffmpeg.js';
import { probe, type MediaInfo } from './probe.js';
import { ffTime } from './seconds.js';
import { ffSignedTime, streamStarts } from './timing.js';
import { tools, type MediaToolOptions } from './tools.js';

export interface TrimOptions extends MediaToolOptions {
  /** Seconds from the beginning. */
  start: number;
  /** Seconds from the beginning, exclusive. */
  end: number;
  /** 'auto' (default): copy the video when the cut is keyframe-aligned; 'copy' / 'reencode' force one. */
  video?: 'auto' | 'copy' | 'reencode';
  /** x264 CRF when re-encoding (default 18). */
  crf?: number;
  /** x264 preset when re-encoding (default "veryfast"). */
  preset?: string;
  /** 'auto' (default): copy the audio where `copiesAudio` allows, else encode AAC; 'encode' always encodes. */
  audio?: 'auto' | 'encode';
  /** AAC bit rate when encoding (default "192k"). */
  audioBitrate?: string;
  /** A probe of the input, when the caller already has one. */
  info?: MediaInfo;
  timeoutMs?: number;
}

export interface TrimResult {
  file: string;
  /** Whether the video stream was re-encoded. */
  reencoded: boolean;
  /** Whether the audio streams were copied (not re-encoded). */
  audioCopied: boolean;
}

/**
 * Whether a trim of [start, end) can copy the audio of a file probed as `info`: the window cuts
 * nothing (from 0 to at least the container's end), and the file is an MP4/MOV whose audio
 * streams are all AAC (what the output holds; other codecs, or AAC in other containers, are encoded).
 */
export function copiesAudio(info: Pick<MediaInfo, 'format' | 'duration' | 'audio'>, start: number, end: number): boolean {
  return start === 0 && end >= info.duration && info.audio.length > 0 && info.audio.every((a) => a.codec === 'aac') && info.format.split(',').includes('mp4');
}

export async function trim(input: string, output: string, opts: TrimOptions, context: PartialContext = {}): Promise<TrimResult> {
  const ctx = resolveContext(context);
  const { start, end } = opts;
  if (!(start >= 0) || !(end > start)) throw new AssetError('invalid_input', `invalid trim window [${start}, ${end})`);
  const info = opts.info ?? (await probe(input, opts, ctx));
  // The cut's start in the input's timestamps: its presentation origin + start.
  const starts = await streamStarts(input, tools(opts), ctx);
  const at = starts.origin + start;
  let copy: boolean;
  if (opts.video === 'copy') copy = true;
  else if (opts.video === 'reencode' || !info.video) copy = false;
  else copy = start === 0 || (await startsOnKeyframe(input, at, info.video.fps, opts, ctx));

  // Timestamps kept (-copyts) and shifted by `at` (-output_ts_offset); -ss counts from the
  // container's start (formatStart), and so does -t where there is no -ss.
  const seek = at - starts.formatStart;
  const seeked = start > 0 && seek > 0;
  const args = ['-copyts'];
  if (seeked) args.push('-ss', ffTime(seek));
  args.push('-t', ffTime(at + (end - start) - (seeked ? at : starts.formatStart)));
  args.push('-i', input, '-map', '0:v:0?', '-map', '0:a?', '-sn', '-dn', '-map_metadata', '0');
  // Decoded streams end at the window's end exactly (the input -t counts a stream that starts
  // inside the window from its own first frame); copied video stops at the first packet past it.
  const stop = ffTime(at + (end - start));
  if (copy) args.push('-c:v', 'copy');
  else args.push('-vf', `trim=end=${stop}`, '-c:v', 'libx264', '-preset', opts.preset ?? 'veryfast', '-crf', String(opts.crf ?? 18), '-fps_mode', 'passthrough');
  const audioCopied = (opts.audio ?? 'auto') === 'auto' && copiesAudio(info, start, end);
  if (audioCopied) args.push('-c:a', 'copy');
  else args.push('-af', `atrim=end=${stop}`, '-c:a', 'aac', '-b:a', opts.audioBitrate ?? '192k');
  args.push('-output_ts_offset', ffSignedTime(-at), ...faststartArgs(output), output);
  ctx.logger.debug({ input, start, end, copy, audioCopied }, 'trim');
  await runFfmpeg(args, { ...opts, stage: 'trim', durationSec: end - start }, ctx);
  return { file: output, reencoded: !copy, audioCopied };
}

/** Whether a video packet flagged as a keyframe sits at `time` (within half a frame). */
export async function startsOnKeyframe(input: string, time: number, fps: number, opts: MediaToolOptions = {}, context: PartialContext = {}): Promise<boolean> {
  const half = fps > 0 ? 0.5 / fps : 0.02;
  const from = Math.max(0, time - 1);
  const text = await runFfprobe(
    ['-select_streams', 'v:0', '-read_intervals', `${ffTime(from)}%${ffTime(time + half + 0.5)}`, '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', '--', input],
    opts,
    context,
  );
  for (const line of text.split('\n')) {
    const [pts, flags] = line.trim().split(',');
    if (!pts || pts === 'N/A' || !flags?.includes('K')) continue;
    if (Math.abs(Number(pts) - time) <= half) return true;
  }
  return false;
}
