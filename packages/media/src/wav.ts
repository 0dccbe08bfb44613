/** In-memory WAV: decode a whole file or buffer, encode and write one. */
import { readFile, writeFile } from 'node:fs/promises';
import { frameCount, type PlanarAudio } from './audio.js';
import { decodeFrames, encodeFrames } from './wav-codec.js';
import { buildWavHeader, checkWriteParams, parseWavBuffer, WavFormatError, type WavSampleFormat, type WavWriteFormat } from './wav-format.js';

export interface DecodedWav extends PlanarAudio {
  /** Sample encoding of the source. */
  format: WavSampleFormat;
}

export interface WavWriteOptions {
  /** Sample encoding (default pcm16). */
  format?: WavWriteFormat;
}

/** Decode a WAV held in memory into planar float channels. */
export function decodeWav(buf: Uint8Array): DecodedWav {
  const layout = parseWavBuffer(buf);
  const { channels, sampleRate, sampleFormat } = layout.format;
  const out = Array.from({ length: channels }, () => new Float32Array(layout.frames));
  decodeFrames(buf.subarray(layout.dataOffset, layout.dataOffset + layout.dataBytes), sampleFormat, channels, layout.frames, out);
  return { sampleRate, channels: out, format: sampleFormat };
}

/** Read a whole WAV (a path or bytes). For long files use WavReader, which reads windows. */
export async function readWav(source: string | Uint8Array): Promise<DecodedWav> {
  if (typeof source !== 'string') return decodeWav(source);
  const buf = await readFile(source);
  try {
    return decodeWav(buf);
  } catch (e) {
    if (e instanceof WavFormatError) throw new WavFormatError(e.message, { file: source, cause: e });
    throw e;
  }
}

/** Encode planar audio as a complete WAV file in memory. */
export function encodeWav(audio: PlanarAudio, opts: WavWriteOptions = {}): Buffer {
  const format = opts.format ?? 'pcm16';
  checkWriteParams(format, audio.sampleRate, audio.channels.length);
  const frames = frameCount(audio.channels);
  const header = buildWavHeader(format, audio.sampleRate, audio.channels.length, frames);
  const data = encodeFrames(audio.channels, format, 0, frames);
  return Buffer.concat(data.length & 1 ? [header, data, Buffer.alloc(1)] : [header, data]);
}

/** Write planar audio to `file` as WAV. */
export async function writeWav(file: string, audio: PlanarAudio, opts: WavWriteOptions = {}): Promise<void> {
  await writeFile(file, encodeWav(audio, opts));
}
