/**
 * Interleaved little-endian samples <-> planar Float32Array channels.
 * Integer PCM maps to [-1, 1) by dividing by 2^(bits-1); writing multiplies by the same factor,
 * rounds and clamps, so a pcm16 -> float -> pcm16 round trip is bit-exact.
 */
import { bytesPerSample, type WavSampleFormat, type WavWriteFormat } from './wav-format.js';

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A typed-array view on `bytes` when the host is little-endian, copying if misaligned. */
function typedView<T>(bytes: Uint8Array, bps: number, make: (buf: ArrayBufferLike, off: number, len: number) => T): T {
  const len = Math.floor(bytes.byteLength / bps);
  if (bytes.byteOffset % bps === 0) return make(bytes.buffer, bytes.byteOffset, len);
  const copy = new Uint8Array(len * bps);
  copy.set(bytes.subarray(0, len * bps));
  return make(copy.buffer, 0, len);
}

/**
 * Decode `frames` frames of interleaved samples from `bytes` into `out[c][outOffset + i]`.
 * `out` must have `channels` arrays.
 */
export function decodeFrames(bytes: Uint8Array, format: WavSampleFormat, channels: number, frames: number, out: Float32Array[], outOffset = 0): void {
  const n = frames * channels;
  const bps = bytesPerSample(format);
  if (bytes.byteLength < n * bps) throw new RangeError(`need ${n * bps} bytes for ${frames} frames, got ${bytes.byteLength}`);
  if (format === 'pcm24') return decodePcm24(bytes, channels, frames, out, outOffset);
  if (!LITTLE_ENDIAN_HOST) return decodeSlow(bytes, format, channels, frames, out, outOffset);
  const src = bytes.subarray(0, n * bps);
  switch (format) {
    case 'pcm16':
      return deinterleave(typedView(src, 2, (b, o, l) => new Int16Array(b, o, l)), channels, frames, out, outOffset, 1 / 32768);
    case 'pcm32':
      return deinterleave(typedView(src, 4, (b, o, l) => new Int32Array(b, o, l)), channels, frames, out, outOffset, 1 / 2147483648);
    case 'float32':
      return deinterleave(typedView(src, 4, (b, o, l) => new Float32Array(b, o, l)), channels, frames, out, outOffset, 1);
    case 'float64':
      return deinterleave(typedView(src, 8, (b, o, l) => new Float64Array(b, o, l)), channels, frames, out, outOffset, 1);
    case 'pcm8': {
      for (let c = 0; c < channels; c++) {
        const dst = out[c]!;
        for (let i = 0, j = c; i < frames; i++, j += channels) dst[outOffset + i] = (src[j]! - 128) / 128;
      }
      return;
    }
  }
}

function deinterleave(src: ArrayLike<number>, channels: number, frames: number, out: Float32Array[], outOffset: number, scale: number): void {
  if (channels === 1) {
    const dst = out[0]!;
    if (scale === 1) {
      for (let i = 0; i < frames; i++) dst[outOffset + i] = src[i]!;
    } else {
      for (let i = 0; i < frames; i++) dst[outOffset + i] = src[i]! * scale;
    }
    return;
  }
  for (let c = 0; c < channels; c++) {
    const dst = out[c]!;
    for (let i = 0, j = c; i < frames; i++, j += channels) dst[outOffset + i] = src[j]! * scale;
  }
}

function decodePcm24(bytes: Uint8Array, channels: number, frames: number, out: Float32Array[], outOffset: number): void {
  const step = channels * 3;
  for (let c = 0; c < channels; c++) {
    const dst = out[c]!;
    for (let i = 0, p = c * 3; i < frames; i++, p += step) {
      const u = bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16);
      dst[outOffset + i] = ((u << 8) >> 8) / 8388608;
    }
  }
}

function decodeSlow(bytes: Uint8Array, format: WavSampleFormat, channels: number, frames: number, out: Float32Array[], outOffset: number): void {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bps = bytesPerSample(format);
  for (let c = 0; c < channels; c++) {
    const dst = out[c]!;
    let p = c * bps;
    const step = channels * bps;
    for (let i = 0; i < frames; i++, p += step) {
      let x: number;
      switch (format) {
        case 'pcm8':
          x = (bytes[p]! - 128) / 128;
          break;
        case 'pcm16':
          x = dv.getInt16(p, true) / 32768;
          break;
        case 'pcm24': {
          const u = bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16);
          x = ((u << 8) >> 8) / 8388608;
          break;
        }
        case 'pcm32':
          x = dv.getInt32(p, true) / 2147483648;
          break;
        case 'float32':
          x = dv.getFloat32(p, true);
          break;
        case 'float64':
          x = dv.getFloat64(p, true);
          break;
      }
      dst[outOffset + i] = x;
    }
  }
}

/** Frames [start, start + frames) of planar `channels` into `dst`, interleaved, scaled by `full` and clamped to [-full, full - 1] (NaN becomes 0). */
function interleaveInts<A extends Int16Array | Int32Array>(channels: readonly Float32Array[], dst: A, full: number, start: number, frames: number): A {
  const ch = channels.length;
  const max = full - 1;
  for (let c = 0; c < ch; c++) {
    const src = channels[c]!;
    for (let i = 0, j = c; i < frames; i++, j += ch) {
      const v = Math.round(src[start + i]! * full);
      dst[j] = v > max ? max : v < -full ? -full : v;
    }
  }
  return dst;
}

/** Encode frames [start, start + frames) of planar `channels` into interleaved bytes. */
export function encodeFrames(channels: readonly Float32Array[], format: WavWriteFormat, start = 0, frames = channels[0]?.length ?? 0): Buffer {
  const ch = channels.length;
  const n = frames * ch;
  switch (format) {
    case 'float32': {
      const dst = new Float32Array(n);
      for (let c = 0; c < ch; c++) {
        const src = channels[c]!;
        for (let i = 0, j = c; i < frames; i++, j += ch) dst[j] = src[start + i]!;
      }
      return toBuffer(dst);
    }
    case 'pcm16':
      return toBuffer(interleaveInts(channels, new Int16Array(n), 32768, start, frames));
    case 'pcm32':
      return toBuffer(interleaveInts(channels, new Int32Array(n), 2147483648, start, frames));
    case 'pcm24': {
      const dst = Buffer.alloc(n * 3);
      for (let c = 0; c < ch; c++) {
        const src = channels[c]!;
        for (let i = 0, p = c * 3; i < frames; i++, p += ch * 3) {
          let v = Math.round(src[start + i]! * 8388608);
          v = v > 8388607 ? 8388607 : v < -8388608 ? -8388608 : v | 0;
          dst[p] = v & 0xff;
          dst[p + 1] = (v >> 8) & 0xff;
          dst[p + 2] = (v >> 16) & 0xff;
        }
      }
      return dst;
    }
  }
}

function toBuffer(a: Int16Array | Int32Array | Float32Array): Buffer {
  if (!LITTLE_ENDIAN_HOST) {
    const b = Buffer.alloc(a.byteLength);
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const w = a.BYTES_PER_ELEMENT;
    for (let i = 0; i < a.length; i++) {
      if (a instanceof Float32Array) dv.setFloat32(i * w, a[i]!, true);
      else if (a instanceof Int16Array) dv.setInt16(i * w, a[i]!, true);
      else dv.setInt32(i * w, a[i]!, true);
    }
    return b;
  }
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}
