/**
 * Loudness per EBU R128 / ITU-R BS.1770 as ffmpeg measures it: integrated loudness (LUFS),
 * loudness range (LU) and true peak (dBTP), read from the ebur128 filter's summary.
 */
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg, type MediaToolOptions } from '@dub/media';

export interface LoudnessTarget {
  /** Integrated loudness, LUFS. */
  integrated: number;
  /** Maximum true peak, dBTP. */
  truePeak: number;
  /** Loudness range target, LU (used by loudnorm when it has to work dynamically). */
  range: number;
}

/**
 * The default: -16 LUFS integrated, -1.5 dBTP, LRA 11 LU: the level of web and streaming
 * delivery (the AES TD1004 recommendation for online streaming, what podcast and video platforms
 * normalise to), where dubbed videos are played. Broadcast deliveries set EBU_R128_BROADCAST.
 */
export const STREAMING_LOUDNESS: Readonly<LoudnessTarget> = Object.freeze({ integrated: -16, truePeak: -1.5, range: 11 });
/** EBU R128 broadcast: -23 LUFS, -1 dBTP. */
export const EBU_R128_BROADCAST: Readonly<LoudnessTarget> = Object.freeze({ integrated: -23, truePeak: -1, range: 18 });

export interface LoudnessMeasurement {
  /** LUFS; -Infinity for silence. */
  integrated: number;
  /** LU. */
  range: number;
  /** dBTP; -Infinity for silence. */
  truePeak: number;
}

function num(text: string, re: RegExp): number {
  const m = re.exec(text);
  if (!m) return Number.NaN;
  const v = m[1]!.trim().toLowerCase();
  return v === '-inf' || v === 'nan' ? Number.NEGATIVE_INFINITY : Number(v);
}

/** Parse the ebur128 summary ffmpeg logs at the end of a run. */
export function parseEbur128Summary(log: string): LoudnessMeasurement {
  const at = log.lastIndexOf('Summary:');
  if (at < 0) throw new DubError('process_failed', 'ffmpeg ebur128 printed no summary');
  const s = log.slice(at);
  const integrated = num(s, /I:\s+(-?[\d.]+|-inf|nan)\s+LUFS/i);
  const range = num(s, /LRA:\s+(-?[\d.]+|-inf|nan)\s+LU/i);
  const truePeak = num(s, /Peak:\s+(-?[\d.]+|-inf|nan)\s+dBFS/i);
  if (Number.isNaN(integrated)) throw new DubError('process_failed', 'cannot read the integrated loudness from the ebur128 summary');
  return { integrated, range: Number.isNaN(range) ? 0 : range, truePeak: Number.isNaN(truePeak) ? Number.NEGATIVE_INFINITY : truePeak };
}

/** Measure the loudness of an audio file (the first audio stream). */
export async function measureLoudness(file: string, media: MediaToolOptions = {}, context: PartialContext = {}): Promise<LoudnessMeasurement> {
  const ctx = resolveContext(context);
  const res = await runFfmpeg(['-nostats', '-i', file, '-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-f', 'null', '-'], { ...media, stage: 'loudness', logLevel: 'info', progress: false }, ctx);
  return parseEbur128Summary(res.stderrTail);
}

/** Loudness of a file with the true peak of each 100 ms frame ebur128 logs (frame k: [k/10, (k+1)/10) s of what was read). */
export interface LoudnessFrames extends LoudnessMeasurement {
  /** Per 100 ms frame: the largest true peak over the channels, dBFS as ebur128 prints it (0.1 dB; -Infinity for silence). */
  framePeaks: number[];
}

const FRAME_LINE = /\bt:\s*[\d.]+\s+TARGET:.*FTPK:\s*([-\d.\sinfa]+?)\s*dBFS/;

/** The largest FTPK value of an ebur128 frame log line, or undefined when the line is not one. */
export function parseFramePeak(line: string): number | undefined {
  const m = FRAME_LINE.exec(line);
  if (!m) return undefined;
  let top = Number.NEGATIVE_INFINITY;
  for (const v of m[1]!.trim().split(/\s+/)) {
    const x = v === '-inf' || v === 'nan' ? Number.NEGATIVE_INFINITY : Number(v);
    if (x > top) top = x;
  }
  return top;
}

/**
 * ebur128 (true peak on) over a file, or over `window` (seconds; `-ss`/`-t` on the input, so the
 * frames start at window.start), with every frame's true peak (framelog).
 */
export async function measureLoudnessFrames(file: string, media: MediaToolOptions = {}, context: PartialContext = {}, window?: { start: number; duration: number }): Promise<LoudnessFrames> {
  const ctx = resolveContext(context);
  const framePeaks: number[] = [];
  let summary: string | undefined;
  const seek = window ? ['-ss', window.start.toFixed(3), '-t', window.duration.toFixed(3)] : [];
  const res = await runFfmpeg(['-nostats', ...seek, '-i', file, '-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-f', 'null', '-'], {
    ...media,
    stage: 'loudness',
    logLevel: 'verbose',
    progress: false,
    onStderrLine: (line) => {
      if (summary !== undefined) summary += `${line}\n`;
      else if (line.includes('Summary:')) summary = `${line}\n`;
      else {
        const p = parseFramePeak(line);
        if (p !== undefined) framePeaks.push(p);
      }
    },
  }, ctx);
  return { ...parseEbur128Summary(summary ?? res.stderrTail), framePeaks };
}

/**
 * The loudness of `file` where it differs from an earlier measured file only within `changed`
 * (seconds): integrated loudness and range measured on the whole file (ebur128 without true peak,
 * half the work), the true peak from the earlier frames' peaks outside the changed spans and a
 * true-peak pass over each changed span (from `margin` seconds before it) inside. Frames are
 * aligned to the file's 100 ms grid (each window starts on it).
 */
export async function updateLoudnessFrames(file: string, previous: { framePeaks: readonly number[] }, changed: readonly { start: number; end: number }[], media: MediaToolOptions = {}, context: PartialContext = {}, margin = 1): Promise<LoudnessFrames> {
  const ctx = resolveContext(context);
  const whole = runFfmpeg(['-nostats', '-i', file, '-map', '0:a:0', '-af', 'ebur128=peak=none', '-f', 'null', '-'], { ...media, stage: 'loudness', logLevel: 'info', progress: false }, ctx);
  const framePeaks = previous.framePeaks.slice();
  await Promise.all(
    changed.map(async (s) => {
      const first = Math.max(0, Math.floor(s.start * 10));
      const last = Math.min(framePeaks.length, Math.ceil(s.end * 10));
      if (last <= first) return;
      const from = Math.max(0, first - Math.round(margin * 10));
      const w = await measureLoudnessFrames(file, media, ctx, { start: from / 10, duration: (last - from) / 10 });
      for (let k = first; k < last; k++) framePeaks[k] = w.framePeaks[k - from] ?? Number.NEGATIVE_INFINITY;
    }),
  );
  const summary = parseEbur128Summary((await whole).stderrTail);
  const truePeak = framePeaks.reduce((a, b) => (b > a ? b : a), Number.NEGATIVE_INFINITY);
  return { integrated: summary.integrated, range: summary.range, truePeak, framePeaks };
}
