/**
 * Audio segments placed at exact sample offsets, summed where they overlap.
 * `renderTimeline` writes a WAV window by window (memory bounded by the window and the
 * placements the caller holds; a long placement can be an AudioSource such as a WavReader, read
 * window by window too). `renderTimelineBuffer` does the same in memory for short outputs.
 *
 * Channel mapping when a placement's channel count differs from the output's: mono is copied to
 * every output channel; into a mono output every placement channel is averaged; otherwise output
 * channel c takes placement channel c modulo its count.
 */
import { DubError, reportProgress, resolveContext, type PartialContext } from '@dub/core';
import { frameCount } from './audio.js';
import type { AudioSource } from './wav-reader.js';
import type { WavWriteFormat } from './wav-format.js';
import { WavWriter } from './wav-writer.js';

export interface Placement {
  /** Output frame of the placement's first frame (an integer; negative clips the head). */
  atFrame: number;
  /** Planar samples in memory, or a source read window by window (same sample rate). */
  audio: Float32Array[] | AudioSource;
  /** Linear gain (default 1). */
  gain?: number;
}

export interface TimelineSpec {
  sampleRate: number;
  channels: number;
  /** Length of the output in frames. */
  frames: number;
}

export interface RenderTimelineOptions extends TimelineSpec {
  /** Output encoding (default float32, which keeps peaks above 1 for a later limiter). */
  format?: WavWriteFormat;
  /** Frames rendered per window (default 65536). */
  windowFrames?: number;
}

export interface TimelineResult {
  frames: number;
  /** Largest absolute sample value of the mix. */
  peak: number;
}

interface Prepared {
  start: number;
  end: number;
  gain: number;
  channels: number;
  memory: Float32Array[] | undefined;
  source: AudioSource | undefined;
}

function prepare(placements: readonly Placement[], spec: TimelineSpec): Prepared[] {
  const out: Prepared[] = [];
  placements.forEach((p, i) => {
    if (!Number.isInteger(p.atFrame)) throw new DubError('invalid_input', `placement ${i}: atFrame must be an integer, got ${p.atFrame}`);
    const gain = p.gain ?? 1;
    if (!Number.isFinite(gain)) throw new DubError('invalid_input', `placement ${i}: gain must be finite`);
    let frames: number;
    let channels: number;
    let memory: Float32Array[] | undefined;
    let source: AudioSource | undefined;
    if (Array.isArray(p.audio)) {
      memory = p.audio;
      channels = memory.length;
      frames = frameCount(memory);
    } else {
      source = p.audio as AudioSource;
      if (source.sampleRate !== spec.sampleRate) {
        throw new DubError('invalid_input', `placement ${i}: sample rate ${source.sampleRate} differs from the timeline's ${spec.sampleRate}`);
      }
      channels = source.channelCount;
      frames = source.frames;
    }
    if (channels < 1) throw new DubError('invalid_input', `placement ${i} has no channels`);
    const end = p.atFrame + frames;
    if (frames === 0 || gain === 0 || end <= 0 || p.atFrame >= spec.frames) return;
    out.push({ start: p.atFrame, end, gain, channels, memory, source });
  });
  return out.sort((a, b) => a.start - b.start);
}

/** Add `src[srcOff ..]` times gain into `dst[dstOff ..]` for `n` frames, mapping channels. */
function addInto(dst: Float32Array[], dstOff: number, src: Float32Array[], srcOff: number, n: number, gain: number): void {
  const outCh = dst.length;
  const inCh = src.length;
  for (let c = 0; c < outCh; c++) {
    const d = dst[c]!;
    if (outCh === 1 && inCh > 1) {
      const g = gain / inCh;
      for (const s of src) for (let i = 0; i < n; i++) d[dstOff + i]! += s[srcOff + i]! * g;
      continue;
    }
    const s = src[inCh === 1 ? 0 : c % inCh]!;
    if (gain === 1) for (let i = 0; i < n; i++) d[dstOff + i]! += s[srcOff + i]!;
    else for (let i = 0; i < n; i++) d[dstOff + i]! += s[srcOff + i]! * gain;
  }
}

function checkSpec(spec: TimelineSpec): void {
  if (!Number.isInteger(spec.frames) || spec.frames < 0) throw new DubError('invalid_input', `timeline frames must be a non-negative integer, got ${spec.frames}`);
  if (!Number.isInteger(spec.channels) || spec.channels < 1) throw new DubError('invalid_input', `timeline channels must be a positive integer, got ${spec.channels}`);
}

/** Mix the placements overlapping output window [w0, w0 + win[0].length) into `win` (zeroed by the caller). */
async function mixWindow(win: Float32Array[], w0: number, active: readonly Prepared[]): Promise<void> {
  const w1 = w0 + win[0]!.length;
  for (const p of active) {
    const a = Math.max(w0, p.start);
    const b = Math.min(w1, p.end);
    if (b <= a) continue;
    if (p.memory) addInto(win, a - w0, p.memory, a - p.start, b - a, p.gain);
    else {
      const chunk = await p.source!.read(a - p.start, b - a);
      addInto(win, a - w0, chunk, 0, Math.min(b - a, chunk[0]?.length ?? 0), p.gain);
    }
  }
}

/** Render the placements into the WAV `output`, window by window. */
export async function renderTimeline(output: string, opts: RenderTimelineOptions, placements: readonly Placement[], context: PartialContext = {}): Promise<TimelineResult> {
  const ctx = resolveContext(context);
  checkSpec(opts);
  const windowFrames = opts.windowFrames ?? 65536;
  if (!Number.isInteger(windowFrames) || windowFrames < 1) throw new DubError('invalid_input', 'windowFrames must be a positive integer');
  const items = prepare(placements, opts);
  const writer = await WavWriter.create(output, { sampleRate: opts.sampleRate, channels: opts.channels, format: opts.format ?? 'float32' });
  let peak = 0;
  try {
    const win = Array.from({ length: opts.channels }, () => new Float32Array(windowFrames));
    let next = 0;
    let active: Prepared[] = [];
    for (let w0 = 0; w0 < opts.frames; w0 += windowFrames) {
      reportProgress(ctx, 'timeline', w0 / Math.max(1, opts.frames));
      const n = Math.min(windowFrames, opts.frames - w0);
      const view = n === windowFrames ? win : win.map((c) => c.subarray(0, n));
      for (const c of view) c.fill(0);
      while (next < items.length && items[next]!.start < w0 + n) active.push(items[next++]!);
      active = active.filter((p) => p.end > w0);
      await mixWindow(view, w0, active);
      for (const c of view) for (let i = 0; i < n; i++) {
        const v = Math.abs(c[i]!);
        if (v > peak) peak = v;
      }
      await writer.write(view);
    }
    await writer.close();
    reportProgress(ctx, 'timeline', 1);
    return { frames: writer.frames, peak };
  } catch (e) {
    await writer.close().catch(() => undefined);
    throw e;
  }
}

/** Render in memory (placements must be in memory too): for short outputs. */
export function renderTimelineBuffer(spec: Omit<TimelineSpec, 'sampleRate'> & { sampleRate?: number }, placements: readonly Placement[]): Float32Array[] {
  checkSpec({ sampleRate: spec.sampleRate ?? 1, ...spec });
  if (placements.some((p) => !Array.isArray(p.audio))) {
    throw new DubError('invalid_input', 'renderTimelineBuffer takes in-memory placements only; use renderTimeline for sources');
  }
  const items = prepare(placements, { sampleRate: spec.sampleRate ?? 1, ...spec });
  const out = Array.from({ length: spec.channels }, () => new Float32Array(spec.frames));
  for (const p of items) {
    const a = Math.max(0, p.start);
    const b = Math.min(spec.frames, p.end);
    addInto(out, a, p.memory!, a - p.start, b - a, p.gain);
  }
  return out;
}
