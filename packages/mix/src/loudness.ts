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
