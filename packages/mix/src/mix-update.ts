/**
 * A replace mix updated in place: after a re-dub changed a few lines of the speech timeline, the
 * new mix is the previous mix with only the frames near the changed speech computed again,
 * byte for byte what mixReplace writes for the new speech with the previous gain.
 *
 * Why that holds: the premix (background + speech resampled to the mix rate) differs only within
 * the changed speech plus the resampler's reach (RESAMPLER_REACH input samples, far more than
 * ffmpeg's default 32-tap filter needs); the limiter's output at a frame depends only on the
 * premix within limiterReachFrames of it; and the gain is the previous one. The gain must stay:
 * the integrated loudness of the new premix is recomputed from the previous premix's K-weighted
 * 100 ms hop energies, with the hops near the change measured again (the K-weighting filters
 * settle within METER_SETTLE_SECONDS, so each recomputed stretch starts that far earlier from a
 * zero state), and when the exact gain moves past the tolerance the caller mixes in full.
 *
 * Returns `{ fallback }` (and writes nothing) when it cannot apply: another length, rate,
 * channel count or sample format, or a gain that is not kept.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { resolveContext, subContext, type PartialContext } from '@dub/core';
import { encodeFrames, renderTimelineBuffer, runFfmpeg, WavReader, type MediaToolOptions } from '@dub/media';
import type { StageContext } from '@dub/core';
import { integratedFromHops, LoudnessMeter, meterHopFrames } from './bs1770.js';
import { limiterHoldFrames, limiterReachFrames, PeakLimiter } from './limiter.js';
import { chooseGain, DEFAULT_GAIN_TOLERANCE_DB, INTER_SAMPLE_MARGIN_DB } from './normalize.js';
import { dbToGain, mixInput, resolveMixOutput } from './options.js';
import type { MixReplaceOptions } from './mix-replace.js';
import type { MixResult } from './mix-result.js';

/** Input samples of the speech timeline either side of a change that the resampler can carry it (ffmpeg's default filter reaches 16). */
export const RESAMPLER_REACH = 256;
/** Seconds the K-weighting filters need to forget their state (their impulse responses decay far below float precision). */
export const METER_SETTLE_SECONDS = 0.5;
/** Changed stretches of the speech closer than this (seconds) are updated as one. */
const MERGE_SECONDS = 1;

export interface MixPrevious {
  /** The previous mix (mixReplace's or this function's output WAV). */
  output: string;
  /** The speech timeline it was made from. */
  speech: string;
  /** The gain it applied (dB, as MixResult.gainDb). */
  gainDb: number;
  /** K-weighted energies of its premix per 100 ms hop (MixResult.hops). */
  hops: Float64Array;
}

export interface MixUpdateOptions extends MixReplaceOptions {
  previous: MixPrevious;
}

export type MixUpdateResult = (MixResult & { hops: Float64Array; updated: { start: number; end: number }[] }) | { fallback: string };

/** Stretches [start, end) of frames where two planar signals differ, merged when closer than `gap`. */
export function changedStretches(a: readonly Float32Array[], b: readonly Float32Array[], gap: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  addChanged(out, a, b, 0, a[0]?.length ?? 0, gap);
  return out;
}

/** Seconds of audio in each window changedStretchesOfFiles reads by default. */
const COMPARE_WINDOW_SECONDS = 4;

/**
 * changedStretches of two WAV files, read in windows of `windowFrames` frames (default 4 s of
 * the first file's rate) so that memory stays bounded whatever their length: the same stretches
 * as changedStretches over both files decoded whole, merged across window boundaries.
 */
export async function changedStretchesOfFiles(a: string, b: string, gap: number, windowFrames?: number): Promise<{ start: number; end: number }[]> {
  const ra = await WavReader.open(a);
  try {
    const rb = await WavReader.open(b);
    try {
      const w = windowFrames ?? Math.max(1, Math.round(COMPARE_WINDOW_SECONDS * ra.sampleRate));
      if (!Number.isInteger(w) || w < 1) throw new RangeError(`windowFrames must be a positive integer, got ${windowFrames}`);
      const out: { start: number; end: number }[] = [];
      for (let s = 0; s < ra.frames; s += w) {
        const n = Math.min(w, ra.frames - s);
        addChanged(out, await ra.read(s, n), await rb.read(s, n), s, n, gap);
      }
      return out;
    } finally {
      await rb.close();
    }
  } finally {
    await ra.close();
  }
}

/** Adds to `out` the frames [offset, offset + n) where the windows `a` and `b` (starting at frame `offset`) differ; NaN equals NaN. */
function addChanged(out: { start: number; end: number }[], a: readonly Float32Array[], b: readonly Float32Array[], offset: number, n: number, gap: number): void {
  for (let i = 0; i < n; i++) {
    let differs = false;
    for (let c = 0; c < a.length; c++) if (a[c]![i] !== b[c]![i] && !(Number.isNaN(a[c]![i]) && Number.isNaN(b[c]![i]))) differs = true;
    if (!differs) continue;
    const f = offset + i;
    const last = out[out.length - 1];
    if (last && f - last.end < gap) last.end = f + 1;
    else out.push({ start: f, end: f + 1 });
  }
}

export async function updateMixReplace(options: MixUpdateOptions, context: PartialContext = {}): Promise<MixUpdateResult> {
  const ctx = resolveContext(context);
  const o = resolveMixOutput(options);
  const prev = options.previous;
  // only the headers here; the comparison below reads both timelines in windows
  const [now, before] = [await speechHeader(options.speech), await speechHeader(prev.speech)];
  if (now.sampleRate !== before.sampleRate || now.channelCount !== before.channelCount || now.frames !== before.frames) {
    return { fallback: 'the speech timeline changed its length, rate or channels' };
  }
  const frames = Math.round((o.durationSeconds ?? now.frames / now.sampleRate) * o.sampleRate);
  const old = await WavReader.open(prev.output);
  try {
    const wantFormat = o.format === 'float32' ? 'float32' : 'pcm16';
    if (old.sampleRate !== o.sampleRate || old.channelCount !== o.channels || old.frames !== frames || old.sampleFormat !== wantFormat) {
      return { fallback: 'the previous mix has another rate, channel count, length or sample format' };
    }
  } finally {
    await old.close();
  }
  if (prev.hops.length !== Math.floor(frames / meterHopFrames(o.sampleRate))) return { fallback: 'the previous loudness hops do not match the mix length' };

  const ratio = o.sampleRate / now.sampleRate;
  const speechChanged = await changedStretchesOfFiles(options.speech, prev.speech, Math.round(MERGE_SECONDS * now.sampleRate));
  // premix frames that can differ
  const premixChanged = speechChanged
    .map((s) => ({ start: Math.max(0, Math.floor((s.start - RESAMPLER_REACH) * ratio)), end: Math.min(frames, Math.ceil((s.end + RESAMPLER_REACH) * ratio)) }))
    .filter((s) => s.end > s.start);

  const dir = await fsp.mkdtemp(path.join(o.tmpDir, 'dub-mix-update-'));
  try {
    const fmt = { ...o.media, sampleRate: o.sampleRate, channels: o.channels, format: 'float32' as const };
    const bgFile = path.join(dir, 'background.wav');
    const bgInput = await mixInput(options.background, fmt, bgFile, subContext(ctx, 'mix_prepare', 0, 0.3));
    const bg = await WavReader.open(bgInput);
    const hop = meterHopFrames(o.sampleRate);
    const settle = Math.ceil((METER_SETTLE_SECONDS * o.sampleRate) / hop);
    const limiterReach = limiterReachFrames(limiterHoldFrames(o.sampleRate));
    // the output frames each change makes the update read: the meter's hops from `settle` before it, the limiter's input around it
    const needed = premixChanged.map((c) => ({
      start: Math.min(Math.max(0, Math.floor(c.start / hop) - settle) * hop, Math.max(0, c.start - 2 * limiterReach)),
      end: Math.max(Math.min(prev.hops.length, Math.ceil(c.end / hop) + settle) * hop, Math.min(frames, c.end + 2 * limiterReach)),
    }));
    let sp: SpeechWindows | undefined;
    try {
      sp = await SpeechWindows.open(options.speech, now.sampleRate, now.frames, needed, fmt, dir, subContext(ctx, 'mix_prepare', 0.3, 0.6));
      const speech = sp;
      const gains = { bg: dbToGain(options.backgroundGainDb ?? 0), speech: dbToGain(o.speechGainDb) };
      /** The premix over [from, to), as mixReplace's renderTimeline sums it (background first, then speech). */
      const premix = async (from: number, to: number): Promise<Float32Array[]> => {
        const take = async (r: WavReader): Promise<Float32Array[]> => {
          const end = Math.min(to, r.frames);
          return end > from ? r.read(from, end - from) : Array.from({ length: r.channelCount }, () => new Float32Array(0));
        };
        return renderTimelineBuffer({ channels: o.channels, frames: to - from }, [
          { atFrame: 0, audio: await take(bg), gain: gains.bg },
          { atFrame: 0, audio: await speech.read(from, to), gain: gains.speech },
        ]);
      };

      // Loudness: the hops near each change measured again, the others as before.
      const hops = Float64Array.from(prev.hops);
      for (const s of premixChanged) {
        const h0 = Math.floor(s.start / hop);
        const h1 = Math.min(hops.length, Math.ceil(s.end / hop) + settle);
        if (h1 <= h0) continue;
        const start = Math.max(0, h0 - settle);
        const meter = new LoudnessMeter(o.sampleRate, o.channels);
        meter.push(await premix(start * hop, h1 * hop));
        const e = meter.hopEnergies();
        for (let h = h0; h < h1; h++) hops[h] = e[h - start]!;
      }
      const inputIntegrated = integratedFromHops(hops, hop).integrated;
      const gain = chooseGain(inputIntegrated, o.loudness.integrated, prev.gainDb, o.gainToleranceDb ?? DEFAULT_GAIN_TOLERANCE_DB);
      if (!gain.gainKept) return { fallback: `the exact gain ${gain.exactGainDb.toFixed(2)} dB is not within the tolerance of the previous ${prev.gainDb} dB` };

      // Output: the previous mix, with the frames the change reaches limited again.
      const limiter = new PeakLimiter(o.channels, { gain: dbToGain(gain.gainDb), ceiling: dbToGain(o.loudness.truePeak - INTER_SAMPLE_MARGIN_DB), hold: limiterHoldFrames(o.sampleRate) });
      const reach = limiter.reach;
      if (reach > limiterReach) throw new Error(`the limiter reaches ${reach} frames, more than the ${limiterReach} the speech windows were cut for`);
      await fsp.copyFile(prev.output, o.output);
      const out = await WavReader.open(o.output);
      const { dataOffset, blockAlign } = out;
      await out.close();
      const fh = await fsp.open(o.output, 'r+');
      const updated: { start: number; end: number }[] = [];
      try {
        for (const s of premixChanged) {
          const from = Math.max(0, s.start - reach);
          const to = Math.min(frames, s.end + reach);
          const inStart = Math.max(0, from - reach);
          const inEnd = Math.min(frames, to + reach);
          const y = limiter.process(await premix(inStart, inEnd), inStart, frames, from, to);
          const bytes = encodeFrames(y, o.format === 'float32' ? 'float32' : 'pcm16');
          await fh.write(bytes, 0, bytes.length, dataOffset + from * blockAlign);
          updated.push({ start: from, end: to });
        }
      } finally {
        await fh.close();
      }
      return { output: o.output, sampleRate: o.sampleRate, channels: o.channels, frames, durationSeconds: frames / o.sampleRate, inputIntegrated, ...gain, hops, updated };
    } finally {
      await bg.close();
      await sp?.close();
    }
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** Rate, channel count and length of a WAV from its header. */
async function speechHeader(file: string): Promise<{ sampleRate: number; channelCount: number; frames: number }> {
  const r = await WavReader.open(file);
  const { sampleRate, channelCount, frames } = r;
  await r.close();
  return { sampleRate, channelCount, frames };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The speech timeline resampled to the mix's rate and channels only where an update reads it, as
 * mixReplace's whole-file resample gives it there. Each window of the input starts on the
 * resampler's period (a multiple of inRate / gcd(inRate, outRate) input samples, so its output
 * samples fall on the same filter phases as the whole run's) and carries RESAMPLER_REACH input
 * samples of margin on each side, and as much again (ffmpeg's default filter reaches 16); inside the margins ffmpeg
 * gives the whole run's values (byte identity with mixReplace is tested). A window that comes
 * within the margin of either end of the input runs to that end, where it ends as the whole run does.
 */
class SpeechWindows {
  private constructor(private readonly windows: { outStart: number; frames: number; validStart: number; validEnd: number; reader: WavReader }[]) {}

  static async open(speech: string, inRate: number, inFrames: number, needed: readonly { start: number; end: number }[], fmt: MediaToolOptions & { sampleRate: number; channels: number }, dir: string, ctx: StageContext): Promise<SpeechWindows> {
    const period = inRate / gcd(inRate, fmt.sampleRate);
    const outPerPeriod = fmt.sampleRate / gcd(inRate, fmt.sampleRate);
    const windows: SpeechWindows['windows'] = [];
    try {
      for (const [i, n] of needed.entries()) {
        // twice the margin on each side: the frames read stay inside the valid part whatever way ffmpeg rounds the window's output length
        let inStart = Math.floor((Math.floor((n.start * inRate) / fmt.sampleRate) - 2 * RESAMPLER_REACH) / period) * period;
        let inEnd = Math.ceil((n.end * inRate) / fmt.sampleRate) + 2 * RESAMPLER_REACH;
        if (inStart < 2 * RESAMPLER_REACH) inStart = 0;
        if (inEnd > inFrames - 2 * RESAMPLER_REACH) inEnd = inFrames;
        const file = path.join(dir, `speech-${i}.wav`);
        await runFfmpeg(['-i', speech, '-map', '0:a:0', '-vn', '-af', `atrim=start_sample=${inStart}:end_sample=${inEnd}`, '-ac', String(fmt.channels), '-ar', String(fmt.sampleRate), '-c:a', 'pcm_f32le', '-f', 'wav', file], { ...fmt, stage: 'resample' }, ctx);
        const reader = await WavReader.open(file);
        const outStart = (inStart / period) * outPerPeriod;
        const margin = Math.ceil((RESAMPLER_REACH * fmt.sampleRate) / inRate);
        windows.push({
          outStart,
          frames: reader.frames,
          validStart: inStart === 0 ? 0 : outStart + margin,
          validEnd: inEnd === inFrames ? Number.POSITIVE_INFINITY : outStart + reader.frames - margin,
          reader,
        });
      }
    } catch (e) {
      for (const w of windows) await w.reader.close();
      throw e;
    }
    return new SpeechWindows(windows);
  }

  /** Output frames [from, to) of the resampled speech (shorter where the speech ends before `to`). */
  async read(from: number, to: number): Promise<Float32Array[]> {
    const w = this.windows.find((x) => x.validStart <= from && to <= x.validEnd);
    if (!w) throw new Error(`updateMixReplace: frames ${from}-${to} of the speech lie outside every resampled window`);
    const end = Math.min(to, w.outStart + w.frames);
    return end > from ? w.reader.read(from - w.outStart, end - from) : Array.from({ length: w.reader.channelCount }, () => new Float32Array(0));
  }

  async close(): Promise<void> {
    for (const w of this.windows) await w.reader.close();
  }
}
