/**
 * Loudness per EBU R128 / ITU-R BS.1770 as ffmpeg measures it: integrated loudness (LUFS),
 * loudness range (LU) and true peak (dBTP), read from the ebur128 filter's summary.
 */
import { Writable } from 'node:stream';
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg, type MediaToolOptions } from '@dub/media';
import { integratedFromHops, loudnessRangeFromHops, LoudnessMeter, meterHopFrames } from './bs1770.js';

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

/**
 * Loudness of a file with the true peak of each 100 ms frame ebur128 logs (frame k: [k/10, (k+1)/10)
 * s of what was read) and the K-weighted energy of each complete 100 ms hop. Integrated loudness
 * and range are computed from the hops' energies (integratedFromHops, loudnessRangeFromHops: within
 * 0.1 LU of ebur128's own figures), so an update of a part of the file recomputes them from the
 * hops it keeps and the few it measures again, without reading the whole file; the true peak is
 * ebur128's (the largest frame peak).
 */
export interface LoudnessFrames extends LoudnessMeasurement {
  /** Per 100 ms frame: the largest true peak over the channels, dBFS as ebur128 prints it (0.1 dB; -Infinity for silence). */
  framePeaks: number[];
  /** Per complete 100 ms hop: K-weighted energy summed over the channels (LoudnessMeter.hopEnergies). */
  hopEnergies: number[];
  /** Sample frames per hop (the file's rate / 10). */
  hop: number;
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
 * A Writable that reads a float32 WAV stream (as ffmpeg writes one to a pipe: sizes unknown, read
 * to the end) and feeds a BS.1770 meter; `meter` exists once the header has been read.
 */
export class WavStreamMeter extends Writable {
  meter: LoudnessMeter | undefined;
  private head: Buffer = Buffer.alloc(0);
  private rest: Buffer = Buffer.alloc(0);
  private channels = 0;

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    try {
      if (!this.meter) {
        this.head = Buffer.concat([this.head, chunk]);
        const body = this.readHeader();
        if (body === undefined) return done();
        chunk = body;
      }
      this.push32(chunk);
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  /** The bytes after the data chunk's header once the header is complete, else undefined. */
  private readHeader(): Buffer | undefined {
    const h = this.head;
    if (h.length < 12) return undefined;
    if (h.toString('ascii', 0, 4) !== 'RIFF' || h.toString('ascii', 8, 12) !== 'WAVE') throw new DubError('process_failed', 'ffmpeg wrote no WAV stream');
    let at = 12;
    let rate = 0;
    while (at + 8 <= h.length) {
      const id = h.toString('ascii', at, at + 4);
      const size = h.readUInt32LE(at + 4);
      if (id === 'data') {
        if (!rate) throw new DubError('process_failed', 'the WAV stream has no fmt chunk before its data');
        this.meter = new LoudnessMeter(rate, this.channels);
        this.head = Buffer.alloc(0);
        return h.subarray(at + 8);
      }
      if (at + 8 + size > h.length) return undefined;
      if (id === 'fmt ') {
        this.channels = h.readUInt16LE(at + 10);
        rate = h.readUInt32LE(at + 12);
        const bits = h.readUInt16LE(at + 22);
        if (bits !== 32 || this.channels < 1) throw new DubError('process_failed', `expected a 32-bit float WAV stream, got ${bits} bits, ${this.channels} channels`);
      }
      at += 8 + size + (size & 1);
    }
    return undefined;
  }

  private push32(chunk: Buffer): void {
    const data = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    const frameBytes = 4 * this.channels;
    const frames = Math.floor(data.length / frameBytes);
    this.rest = Buffer.from(data.subarray(frames * frameBytes));
    if (!frames) return;
    const planar = Array.from({ length: this.channels }, () => new Float32Array(frames));
    for (let i = 0, o = 0; i < frames; i++) for (let c = 0; c < this.channels; c++, o += 4) planar[c]![i] = data.readFloatLE(o);
    this.meter!.push(planar);
  }
}

/**
 * ebur128 (true peak on) over a file, or over `window` (seconds; `-ss`/`-t` on the input, so the
 * frames start at window.start), with every frame's true peak (framelog) and, from the same
 * decode (the filter passes the audio on to a pipe), every hop's K-weighted energy.
 */
export async function measureLoudnessFrames(file: string, media: MediaToolOptions = {}, context: PartialContext = {}, window?: { start: number; duration: number }): Promise<LoudnessFrames> {
  const ctx = resolveContext(context);
  const framePeaks: number[] = [];
  const pcm = new WavStreamMeter();
  const seek = window ? ['-ss', window.start.toFixed(3), '-t', window.duration.toFixed(3)] : [];
  await runFfmpeg(['-nostats', ...seek, '-i', file, '-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-c:a', 'pcm_f32le', '-f', 'wav', 'pipe:1'], {
    ...media,
    stage: 'loudness',
    logLevel: 'verbose',
    progress: false,
    stdout: pcm,
    onStderrLine: (line) => {
      const p = parseFramePeak(line);
      if (p !== undefined) framePeaks.push(p);
    },
  }, ctx);
  if (!pcm.meter) throw new DubError('process_failed', `ffmpeg decoded no audio from ${file}`);
  return fromHops(Array.from(pcm.meter.hopEnergies()), meterHopFrames(pcm.meter.sampleRate), framePeaks);
}

function fromHops(hopEnergies: number[], hop: number, framePeaks: number[]): LoudnessFrames {
  const truePeak = framePeaks.reduce((a, b) => (b > a ? b : a), Number.NEGATIVE_INFINITY);
  return { integrated: integratedFromHops(hopEnergies, hop).integrated, range: loudnessRangeFromHops(hopEnergies, hop), truePeak, framePeaks, hopEnergies, hop };
}

/**
 * The loudness of `file` where it differs from an earlier measured file only within `changed`
 * (seconds): the earlier frames' true peaks and hop energies are kept outside the changed spans,
 * and each changed span is measured again (from `margin` seconds before it, so the K-weighting
 * filters have settled: their memory decays far below float precision within it); integrated
 * loudness and range are then computed from the whole hop list. Frames are aligned to the file's
 * 100 ms grid (each window starts on it). Without the earlier hop energies, the whole file is
 * measured.
 */
export async function updateLoudnessFrames(file: string, previous: { framePeaks: readonly number[]; hopEnergies?: readonly number[]; hop?: number }, changed: readonly { start: number; end: number }[], media: MediaToolOptions = {}, context: PartialContext = {}, margin = 1): Promise<LoudnessFrames> {
  const ctx = resolveContext(context);
  if (!previous.hopEnergies || !previous.hop) return measureLoudnessFrames(file, media, ctx);
  const framePeaks = previous.framePeaks.slice();
  const hopEnergies = previous.hopEnergies.slice();
  const hop = previous.hop;
  await Promise.all(
    changed.map(async (s) => {
      const first = Math.max(0, Math.floor(s.start * 10));
      const last = Math.min(Math.max(framePeaks.length, hopEnergies.length), Math.ceil(s.end * 10));
      if (last <= first) return;
      const from = Math.max(0, first - Math.round(margin * 10));
      // one hop more than needed: the last one needed is complete even if the seek lands a few samples late
      const w = await measureLoudnessFrames(file, media, ctx, { start: from / 10, duration: (last + 1 - from) / 10 });
      if (w.hop !== hop) throw new DubError('process_failed', `the track's sample rate changed (${hop * 10} -> ${w.hop * 10} Hz) between measurements`);
      for (let k = first; k < Math.min(last, framePeaks.length); k++) framePeaks[k] = w.framePeaks[k - from] ?? Number.NEGATIVE_INFINITY;
      for (let k = first; k < Math.min(last, hopEnergies.length); k++) hopEnergies[k] = w.hopEnergies[k - from] ?? hopEnergies[k]!;
    }),
  );
  return fromHops(hopEnergies, hop, framePeaks);
}
