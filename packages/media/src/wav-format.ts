/**
 * RIFF/WAVE layout: walking chunks (fmt, data; LIST, fact and any other chunk skipped, odd
 * sizes padded), parsing the fmt chunk (PCM, IEEE float and WAVE_FORMAT_EXTENSIBLE) and building
 * the header we write. The walker is a generator of read requests so the same code serves an
 * in-memory buffer and a file read piece by piece.
 */
import { DubError } from '@dub/core';

/** Sample encodings we read. We write pcm16, pcm24, pcm32 and float32. */
export type WavSampleFormat = 'pcm8' | 'pcm16' | 'pcm24' | 'pcm32' | 'float32' | 'float64';
export type WavWriteFormat = 'pcm16' | 'pcm24' | 'pcm32' | 'float32';

export interface WavFormat {
  sampleFormat: WavSampleFormat;
  sampleRate: number;
  channels: number;
  /** Bytes per frame (all channels). */
  blockAlign: number;
  bitsPerSample: number;
  /** The fmt chunk used WAVE_FORMAT_EXTENSIBLE. */
  extensible: boolean;
  /** Speaker mask of an extensible fmt chunk (0 when absent). */
  channelMask: number;
}

export interface WavLayout {
  format: WavFormat;
  /** Byte offset of the first sample. */
  dataOffset: number;
  /** Bytes of sample data (whole frames). */
  dataBytes: number;
  frames: number;
}

/** A file that is not a WAV we can read: unsupported_media, never retryable. */
export class WavFormatError extends DubError {
  constructor(message: string, opts: { cause?: unknown; file?: string } = {}) {
    super('unsupported_media', opts.file ? `${opts.file}: ${message}` : message, {
      status: 400,
      retryable: false,
      ...(opts.cause !== undefined ? { cause: opts.cause } : {}),
      ...(opts.file ? { details: { file: opts.file } } : {}),
    });
    this.name = 'WavFormatError';
  }
}

/** RIFF sizes are 32-bit: a WAV holds at most this many bytes after the 8-byte RIFF header. */
export const WAV_MAX_RIFF_SIZE = 0xffffffff;

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_IEEE_FLOAT = 3;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** Declared data sizes at least this large that overrun the file are "unknown length" placeholders. */
const STREAMED_PLACEHOLDER_MIN = 0x7fff0000;
/** The KSDATAFORMAT_SUBTYPE GUID after its first two bytes (the format tag). */
const GUID_TAIL = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71];

/** A read request: [position, length]; the driver answers with the bytes (possibly fewer at EOF). */
export type ReadRequest = readonly [number, number];

function fourcc(b: Uint8Array, at: number): string {
  return String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** Walk the chunks of a RIFF/WAVE of `totalBytes` bytes, asking the driver for the bytes it needs. */
export function* walkWav(totalBytes: number): Generator<ReadRequest, WavLayout, Uint8Array> {
  if (totalBytes < 12) throw new WavFormatError(`too short for a WAV file (${totalBytes} bytes)`);
  const head = yield [0, 12];
  if (head.length < 12) throw new WavFormatError('too short for a WAV file');
  const riff = fourcc(head, 0);
  if (riff === 'RF64') throw new WavFormatError('RF64 (WAV over 4 GiB) is not supported');
  if (riff === 'RIFX') throw new WavFormatError('big-endian RIFX files are not supported');
  if (riff !== 'RIFF' || fourcc(head, 8) !== 'WAVE') throw new WavFormatError('not a RIFF/WAVE file');
  const riffSize = view(head).getUint32(4, true);
  if (riffSize < 4) throw new WavFormatError(`invalid RIFF size ${riffSize}`);
  // Writers that could not seek leave 0xFFFFFFFF; trust the file length then.
  const end = riffSize === 0xffffffff ? totalBytes : Math.min(totalBytes, 8 + riffSize);

  let format: WavFormat | undefined;
  let dataOffset = -1;
  let dataBytes = 0;
  let pos = 12;
  while (pos + 8 <= end && (format === undefined || dataOffset < 0)) {
    const ch = yield [pos, 8];
    if (ch.length < 8) break;
    const id = fourcc(ch, 0);
    const size = view(ch).getUint32(4, true);
    const body = pos + 8;
    if (id === 'fmt ') {
      if (size < 16) throw new WavFormatError(`fmt chunk too small (${size} bytes)`);
      if (body + size > totalBytes) throw new WavFormatError('fmt chunk runs past the end of the file');
      format = parseFmt(yield [body, Math.min(size, 64)], size);
    } else if (id === 'data') {
      // A writer streaming to a pipe cannot patch sizes: ffmpeg leaves 0xFFFFFFFF, espeak-ng
      // and others a placeholder near 2 GiB. Such a data chunk runs to the end of the file.
      if (size === 0xffffffff || (size >= STREAMED_PLACEHOLDER_MIN && body + size > totalBytes)) {
        dataOffset = body;
        dataBytes = totalBytes - body;
        break;
      }
      if (body + size > totalBytes) {
        throw new WavFormatError(`truncated: the data chunk declares ${size} bytes but only ${totalBytes - body} follow`);
      }
      dataOffset = body;
      dataBytes = size;
    }
    // Chunk bodies are padded to an even length.
    pos = body + size + (size & 1);
  }
  if (!format) throw new WavFormatError('no fmt chunk');
  if (dataOffset < 0) throw new WavFormatError('no data chunk');
  const frames = Math.floor(dataBytes / format.blockAlign);
  return { format, dataOffset, dataBytes: frames * format.blockAlign, frames };
}

function parseFmt(b: Uint8Array, size: number): WavFormat {
  if (b.length < 16) throw new WavFormatError('fmt chunk truncated');
  const v = view(b);
  let tag = v.getUint16(0, true);
  const channels = v.getUint16(2, true);
  const sampleRate = v.getUint32(4, true);
  const blockAlign = v.getUint16(12, true);
  const bitsPerSample = v.getUint16(14, true);
  let extensible = false;
  let channelMask = 0;
  if (tag === WAVE_FORMAT_EXTENSIBLE) {
    if (size < 40 || b.length < 40) throw new WavFormatError('WAVE_FORMAT_EXTENSIBLE fmt chunk shorter than 40 bytes');
    extensible = true;
    channelMask = v.getUint32(20, true);
    tag = v.getUint16(24, true);
    for (let i = 0; i < GUID_TAIL.length; i++) {
      if (b[26 + i] !== GUID_TAIL[i]) throw new WavFormatError('WAVE_FORMAT_EXTENSIBLE with an unknown sub-format GUID');
    }
  }
  if (channels < 1) throw new WavFormatError('fmt chunk declares 0 channels');
  if (sampleRate < 1) throw new WavFormatError('fmt chunk declares sample rate 0');
  let sampleFormat: WavSampleFormat;
  if (tag === WAVE_FORMAT_PCM) {
    const pcm: Record<number, WavSampleFormat> = { 8: 'pcm8', 16: 'pcm16', 24: 'pcm24', 32: 'pcm32' };
    const f = pcm[bitsPerSample];
    if (!f) throw new WavFormatError(`unsupported PCM bit depth ${bitsPerSample}`);
    sampleFormat = f;
  } else if (tag === WAVE_FORMAT_IEEE_FLOAT) {
    if (bitsPerSample === 32) sampleFormat = 'float32';
    else if (bitsPerSample === 64) sampleFormat = 'float64';
    else throw new WavFormatError(`unsupported float bit depth ${bitsPerSample}`);
  } else {
    throw new WavFormatError(`unsupported WAV encoding (format tag 0x${tag.toString(16)}); only PCM and IEEE float are read`);
  }
  const expected = channels * (bitsPerSample / 8);
  if (blockAlign !== expected) throw new WavFormatError(`block align ${blockAlign} does not match ${channels} channels of ${bitsPerSample} bits`);
  return { sampleFormat, sampleRate, channels, blockAlign, bitsPerSample, extensible, channelMask };
}

/** Drive the walker over an in-memory buffer. */
export function parseWavBuffer(buf: Uint8Array): WavLayout {
  const gen = walkWav(buf.length);
  let step = gen.next();
  while (!step.done) {
    const [pos, len] = step.value;
    step = gen.next(buf.subarray(pos, pos + len));
  }
  return step.value;
}

/** Drive the walker with an async reader (a file handle). */
export async function parseWavAsync(totalBytes: number, readAt: (pos: number, len: number) => Promise<Uint8Array>): Promise<WavLayout> {
  const gen = walkWav(totalBytes);
  let step = gen.next();
  while (!step.done) {
    const [pos, len] = step.value;
    step = gen.next(await readAt(pos, len));
  }
  return step.value;
}

export function bytesPerSample(f: WavWriteFormat | WavSampleFormat): number {
  switch (f) {
    case 'pcm8':
      return 1;
    case 'pcm16':
      return 2;
    case 'pcm24':
      return 3;
    case 'pcm32':
    case 'float32':
      return 4;
    case 'float64':
      return 8;
  }
}

/** The header we write: PCM with a 16-byte fmt chunk, float with an 18-byte fmt and a fact chunk. */
export function buildWavHeader(format: WavWriteFormat, sampleRate: number, channels: number, frames: number): Buffer {
  const isFloat = format === 'float32';
  const bps = bytesPerSample(format);
  const blockAlign = bps * channels;
  const dataBytes = frames * blockAlign;
  const fmtSize = isFloat ? 18 : 16;
  const factSize = isFloat ? 12 : 0;
  const headerSize = 12 + 8 + fmtSize + factSize + 8;
  const pad = dataBytes & 1;
  const riffSize = headerSize - 8 + dataBytes + pad;
  if (riffSize > WAV_MAX_RIFF_SIZE) {
    throw new DubError('payload_too_large', `a WAV file holds at most 4 GiB; ${dataBytes} bytes of samples do not fit`, { retryable: false });
  }
  const h = Buffer.alloc(headerSize);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(riffSize, 4);
  h.write('WAVE', 8, 'latin1');
  h.write('fmt ', 12, 'latin1');
  h.writeUInt32LE(fmtSize, 16);
  h.writeUInt16LE(isFloat ? WAVE_FORMAT_IEEE_FLOAT : WAVE_FORMAT_PCM, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(bps * 8, 34);
  let p = 36;
  if (isFloat) {
    h.writeUInt16LE(0, p); // cbSize
    p += 2;
    h.write('fact', p, 'latin1');
    h.writeUInt32LE(4, p + 4);
    h.writeUInt32LE(frames >>> 0, p + 8);
    p += 12;
  }
  h.write('data', p, 'latin1');
  h.writeUInt32LE(dataBytes, p + 4);
  return h;
}

/** Validate a write format, sample rate and channel count. */
export function checkWriteParams(format: string, sampleRate: number, channels: number): asserts format is WavWriteFormat {
  if (!['pcm16', 'pcm24', 'pcm32', 'float32'].includes(format)) throw new DubError('invalid_input', `unknown WAV write format "${format}"`);
  if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > 0xffffffff) throw new DubError('invalid_input', `invalid sample rate ${sampleRate}`);
  if (!Number.isInteger(channels) || channels < 1 || channels > 0xffff) throw new DubError('invalid_input', `invalid channel count ${channels}`);
}
