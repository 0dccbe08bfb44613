import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav, encodeWav, readWav, runProcess, WavFormatError, WavReader, WavWriter, writeWav, type WavWriteFormat } from './index.js';
import { ffmpeg, ffprobeJson, tempDir } from '../test-support/media-fixtures.js';

const exec = promisify(execFile);
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  await tmp.cleanup();
});

/** Deterministic pseudo-random integers in [-2^(bits-1), 2^(bits-1)). */
function ints(n: number, bits: number, seed: number): number[] {
  let s = seed >>> 0;
  const out: number[] = [];
  const range = 2 ** bits;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const r = (s / 2 ** 32) * range;
    out.push(Math.floor(r) - range / 2);
  }
  return out;
}

/** Samples exactly representable in `format`, planar. */
function exactSignal(format: WavWriteFormat, channels: number, frames: number): Float32Array[] {
  return Array.from({ length: channels }, (_, c) => {
    const a = new Float32Array(frames);
    if (format === 'float32') {
      for (let i = 0; i < frames; i++) a[i] = Math.fround(Math.sin(i * 0.01 * (c + 1)) * 1.7 - 0.3 + i * 1e-9);
      return a;
    }
    const bits = format === 'pcm16' ? 16 : format === 'pcm24' ? 24 : 32;
    // pcm32 decodes into float32 (24-bit mantissa): use values whose low 8 bits are zero.
    const v = ints(frames, bits === 32 ? 24 : bits, 7 + c);
    const scale = bits === 32 ? 256 / 2 ** 31 : 1 / 2 ** (bits - 1);
    for (let i = 0; i < frames; i++) a[i] = v[i]! * scale;
    a[0] = -1;
    return a;
  });
}

/** Raw interleaved float32 of a file as ffmpeg decodes it. */
async function ffmpegF32(file: string): Promise<Float32Array> {
  const { stdout } = await exec('ffmpeg', ['-v', 'error', '-i', file, '-f', 'f32le', '-c:a', 'pcm_f32le', '-'], { encoding: 'buffer', maxBuffer: 64 << 20 });
  const b = stdout as unknown as Buffer;
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

function interleave(ch: Float32Array[]): Float32Array {
  const n = ch[0]!.length;
  const out = new Float32Array(n * ch.length);
  for (let c = 0; c < ch.length; c++) for (let i = 0; i < n; i++) out[i * ch.length + c] = ch[c]![i]!;
  return out;
}

/** Build a WAV by hand from chunks. */
function riff(chunks: [string, Buffer][], riffId = 'RIFF'): Buffer {
  const parts: Buffer[] = [];
  for (const [id, body] of chunks) {
    const h = Buffer.alloc(8);
    h.write(id, 0, 'latin1');
    h.writeUInt32LE(body.length, 4);
    parts.push(h, body);
    if (body.length & 1) parts.push(Buffer.alloc(1));
  }
  const payload = Buffer.concat(parts);
  const head = Buffer.alloc(12);
  head.write(riffId, 0, 'latin1');
  head.writeUInt32LE(payload.length + 4, 4);
  head.write('WAVE', 8, 'latin1');
  return Buffer.concat([head, payload]);
}

function fmtChunk(tag: number, channels: number, rate: number, bits: number, extensibleSub?: number): Buffer {
  const ext = extensibleSub !== undefined;
  const b = Buffer.alloc(ext ? 40 : 16);
  const align = (channels * bits) / 8;
  b.writeUInt16LE(ext ? 0xfffe : tag, 0);
  b.writeUInt16LE(channels, 2);
  b.writeUInt32LE(rate, 4);
  b.writeUInt32LE(rate * align, 8);
  b.writeUInt16LE(align, 12);
  b.writeUInt16LE(bits, 14);
  if (ext) {
    b.writeUInt16LE(22, 16);
    b.writeUInt16LE(bits, 18);
    b.writeUInt32LE(3, 20);
    b.writeUInt16LE(extensibleSub, 24);
    Buffer.from([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]).copy(b, 26);
  }
  return b;
}

describe('WAV round trips', () => {
  for (const format of ['pcm16', 'pcm24', 'pcm32', 'float32'] as const) {
    for (const channels of [1, 2]) {
      it(`${format} ${channels} ch round-trips exactly (memory, file, streaming writer)`, async () => {
        const frames = 4801; // odd: exercises the pad byte for pcm24 mono
        const ch = exactSignal(format, channels, frames);
        const buf = encodeWav({ sampleRate: 22050, channels: ch }, { format });
        expect(buf.length % 2).toBe(0);
        const back = decodeWav(buf);
        expect(back.sampleRate).toBe(22050);
        expect(back.format).toBe(format);
        expect(back.channels).toHaveLength(channels);
        for (let c = 0; c < channels; c++) expect(back.channels[c]).toEqual(ch[c]);
        // Re-encoding decoded audio gives the same bytes (bit-exact).
        expect(encodeWav(back, { format }).equals(buf)).toBe(true);

        const file = tmp.file(`rt-${format}-${channels}.wav`);
        await writeWav(file, { sampleRate: 22050, channels: ch }, { format });
        expect((await readFile(file)).equals(buf)).toBe(true);

        const streamed = tmp.file(`rt-stream-${format}-${channels}.wav`);
        const w = await WavWriter.create(streamed, { sampleRate: 22050, channels, format });
        for (let s = 0; s < frames; s += 1000) await w.write(ch.map((a) => a.subarray(s, Math.min(frames, s + 1000))));
        await w.close();
        expect((await readFile(streamed)).equals(buf)).toBe(true);

        // ffmpeg agrees on every sample.
        const ff = await ffmpegF32(file);
        expect(ff).toEqual(interleave(ch));
      });
    }
  }

  it('clamps out-of-range samples when writing integers', () => {
    const ch = [new Float32Array([2, -2, 1, -1, 0.5, Number.NaN])];
    const back = decodeWav(encodeWav({ sampleRate: 8000, channels: ch }, { format: 'pcm16' })).channels[0]!;
    expect(Array.from(back)).toEqual([32767 / 32768, -1, 32767 / 32768, -1, 0.5, 0]);
  });
});

describe('reading WAVs written by ffmpeg', () => {
  const cases: [string, string, number][] = [
    ['pcm_u8', 'pcm8', 1],
    ['pcm_s16le', 'pcm16', 2],
    ['pcm_s24le', 'pcm24', 2],
    ['pcm_s32le', 'pcm32', 1],
    ['pcm_f32le', 'float32', 2],
    ['pcm_f64le', 'float64', 1],
    ['pcm_s16le', 'pcm16', 6],
  ];
  for (const [codec, format, channels] of cases) {
    it(`${codec} x${channels} (LIST/fact chunks, extensible where ffmpeg writes it)`, async () => {
      const file = tmp.file(`ff-${codec}-${channels}.wav`);
      await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=997:sample_rate=44100:duration=0.5', '-f', 'lavfi', '-i', 'anoisesrc=d=0.5:r=44100:a=0.3:seed=1',
        '-filter_complex', `[0:a][1:a]amix=inputs=2,pan=${channels}c|${Array.from({ length: channels }, (_, i) => `c${i}=${(i + 1) / channels}*c0`).join('|')}`,
        '-c:a', codec, file]);
      const wav = await readWav(file);
      expect(wav.format).toBe(format);
      expect(wav.sampleRate).toBe(44100);
      expect(wav.channels).toHaveLength(channels);
      expect(wav.channels[0]!.length).toBe(22050);
      const ff = await ffmpegF32(file);
      const ours = interleave(wav.channels);
      expect(ours.length).toBe(ff.length);
      let maxErr = 0;
      for (let i = 0; i < ff.length; i++) maxErr = Math.max(maxErr, Math.abs(ours[i]! - ff[i]!));
      expect(maxErr).toBeLessThanOrEqual(format === 'float64' ? 1e-7 : 0);
    });
  }

  it('reads a WAV ffmpeg streamed to a pipe (sizes 0xFFFFFFFF)', async () => {
    const { stdout } = await exec('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1:sample_rate=16000', '-f', 'wav', 'pipe:1'], { encoding: 'buffer' });
    const buf = stdout as unknown as Buffer;
    expect(buf.readUInt32LE(4)).toBe(0xffffffff);
    const wav = decodeWav(buf);
    expect(wav.channels[0]!.length).toBe(16000);
  });
});

it('reads the WAV espeak-ng streams to stdout (placeholder sizes), captured by runProcess', async () => {
  const res = await runProcess('espeak-ng', ['--stdout', 'testing one two three']);
  expect(res.stdout.readUInt32LE(40)).toBeGreaterThan(res.stdout.length);
  const wav = decodeWav(res.stdout);
  expect(wav.sampleRate).toBe(22050);
  expect(wav.channels[0]!.length).toBe((res.stdout.length - 44) / 2);
  expect(wav.channels[0]!.length / 22050).toBeGreaterThan(0.5);
});

describe('RIFF chunk walking', () => {
  const pcm = Buffer.alloc(8);
  [100, -100, 32767, -32768].forEach((v, i) => pcm.writeInt16LE(v, i * 2));
  const expected = [100 / 32768, -100 / 32768, 32767 / 32768, -1];

  it('skips unknown chunks, odd-sized chunks with their pad byte, and LIST before fmt', () => {
    const buf = riff([
      ['LIST', Buffer.from('INFOISFTabc\0', 'latin1')],
      ['junk', Buffer.from('odd', 'latin1')],
      ['fmt ', fmtChunk(1, 1, 8000, 16)],
      ['fact', Buffer.from([4, 0, 0, 0])],
      ['bext', Buffer.alloc(5)],
      ['data', pcm],
      ['id3 ', Buffer.alloc(3)],
    ]);
    const wav = decodeWav(buf);
    expect(Array.from(wav.channels[0]!)).toEqual(expected);
  });

  it('accepts data before fmt', () => {
    const wav = decodeWav(riff([['data', pcm], ['fmt ', fmtChunk(1, 1, 8000, 16)]]));
    expect(Array.from(wav.channels[0]!)).toEqual(expected);
  });

  it('reads WAVE_FORMAT_EXTENSIBLE PCM and float', () => {
    expect(Array.from(decodeWav(riff([['fmt ', fmtChunk(1, 2, 8000, 16, 1)], ['data', pcm]])).channels[1]!)).toEqual([expected[1], expected[3]]);
    const f = Buffer.alloc(8);
    f.writeFloatLE(0.25, 0);
    f.writeFloatLE(-0.75, 4);
    expect(Array.from(decodeWav(riff([['fmt ', fmtChunk(3, 1, 8000, 32, 3)], ['data', f]])).channels[0]!)).toEqual([0.25, -0.75]);
  });

  const malformed: [string, Buffer][] = [
    ['an empty file', Buffer.alloc(0)],
    ['text', Buffer.from('hello, this is definitely not a wav file at all')],
    ['RIFX', riff([['fmt ', fmtChunk(1, 1, 8000, 16)], ['data', pcm]], 'RIFX')],
    ['RF64', riff([['fmt ', fmtChunk(1, 1, 8000, 16)], ['data', pcm]], 'RF64')],
    ['no fmt chunk', riff([['data', pcm]])],
    ['no data chunk', riff([['fmt ', fmtChunk(1, 1, 8000, 16)]])],
    ['a short fmt chunk', riff([['fmt ', Buffer.alloc(10)], ['data', pcm]])],
    ['a compressed format tag', riff([['fmt ', fmtChunk(0x11, 1, 8000, 4)], ['data', pcm]])],
    ['12-bit PCM', riff([['fmt ', fmtChunk(1, 1, 8000, 12)], ['data', pcm]])],
    ['zero channels', riff([['fmt ', fmtChunk(1, 0, 8000, 16)], ['data', pcm]])],
    ['an unknown extensible GUID', (() => {
      const b = riff([['fmt ', fmtChunk(1, 1, 8000, 16, 1)], ['data', pcm]]);
      b[12 + 8 + 30] = 0x42;
      return b;
    })()],
    ['a block align mismatch', (() => {
      const f = fmtChunk(1, 1, 8000, 16);
      f.writeUInt16LE(3, 12);
      return riff([['fmt ', f], ['data', pcm]]);
    })()],
    ['a truncated data chunk', riff([['fmt ', fmtChunk(1, 1, 8000, 16)], ['data', pcm]]).subarray(0, 48)],
  ];
  for (const [what, buf] of malformed) {
    it(`rejects ${what} with WavFormatError`, async () => {
      expect(() => decodeWav(buf)).toThrow(WavFormatError);
      const file = tmp.file(`bad-${what.replace(/\W+/g, '-')}.wav`);
      await writeFile(file, buf);
      const err = await WavReader.open(file).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WavFormatError);
      expect((err as WavFormatError).code).toBe('unsupported_media');
      expect((err as Error).message).toContain(file);
    });
  }
});

describe('WavReader / WavWriter', () => {
  it('reads arbitrary windows equal to the whole-file decode', async () => {
    const file = tmp.file('windows.wav');
    const ch = exactSignal('pcm24', 2, 10007);
    await writeWav(file, { sampleRate: 16000, channels: ch }, { format: 'pcm24' });
    const r = await WavReader.open(file);
    try {
      expect(r.sampleRate).toBe(16000);
      expect(r.channelCount).toBe(2);
      expect(r.frames).toBe(10007);
      expect(r.sampleFormat).toBe('pcm24');
      expect(r.duration).toBeCloseTo(10007 / 16000, 9);
      for (const [s, n] of [[0, 1], [5, 1000], [9999, 8], [10000, 100], [10007, 10], [20000, 5]] as const) {
        const win = await r.read(s, n);
        const len = Math.max(0, Math.min(n, 10007 - s));
        expect(win).toHaveLength(2);
        expect(win[0]!.length).toBe(len);
        expect(win[1]).toEqual(ch[1]!.subarray(s, s + len));
      }
      let total = 0;
      for await (const w of r.windows(4096)) {
        expect(w.channels[0]).toEqual(ch[0]!.subarray(w.startFrame, w.startFrame + w.channels[0]!.length));
        total += w.channels[0]!.length;
      }
      expect(total).toBe(10007);
      await expect(r.read(-1, 5)).rejects.toThrow(RangeError);
    } finally {
      await r.close();
    }
  });

  it('writer patches the header so ffprobe sees the right duration', async () => {
    const file = tmp.file('writer.wav');
    const w = await WavWriter.create(file, { sampleRate: 8000, channels: 1, format: 'float32' });
    for (let i = 0; i < 10; i++) await w.write([new Float32Array(800).fill(i / 10)]);
    expect(w.frames).toBe(8000);
    await w.close();
    await w.close();
    const st = await stat(file);
    const b = await readFile(file);
    expect(b.readUInt32LE(4)).toBe(st.size - 8);
    const info = await ffprobeJson(file);
    expect(Number(info.format.duration)).toBeCloseTo(1, 3);
    await expect(w.write([new Float32Array(1)])).rejects.toThrow();
  });

  it('writer rejects mismatched channels', async () => {
    const w = await WavWriter.create(tmp.file('mismatch.wav'), { sampleRate: 8000, channels: 2 });
    await expect(w.write([new Float32Array(4)])).rejects.toThrow(RangeError);
    await expect(w.write([new Float32Array(4), new Float32Array(3)])).rejects.toThrow(RangeError);
    await w.close();
  });
});
