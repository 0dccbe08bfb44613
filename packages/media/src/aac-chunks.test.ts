/**
 * encodeAudioChunked on real ffmpeg: the .m4a lines up with the input to the sample and lasts as
 * long; a change re-encodes only the chunks it touches and the splices add no error of their own.
 */
import { execFile } from 'node:child_process';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adtsWindowSequence, encodeAudio, encodeAudioChunked, readWav, splitAdts, windowsJoin, writeWav, type AacChunkStore } from './index.js';
import { tempDir } from '../test-support/media-fixtures.js';
import { itWithMedia, media } from '../../../test/support/media.js';

const exec = promisify(execFile);
const RATE = 48000;
/** Small chunks so that a few seconds of audio make several of them. */
const CHUNK = 32 * 1024;

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir('dub-aac-chunks-');
});
afterAll(async () => {
  await tmp.cleanup();
});

/** A chunk store in a folder, counting its reads and writes. */
function folderStore(dir: string): AacChunkStore & { puts: number; entries: Map<string, string> } {
  const files = new Map<string, string>();
  const store = {
    puts: 0,
    entries: files,
    get: async (hash: string) => files.get(hash),
    put: async (hash: string, file: string) => {
      const dest = path.join(dir, `${hash}.adts`);
      await copyFile(file, dest);
      files.set(hash, dest);
      store.puts++;
    },
  };
  return store;
}

/** Interleaved float samples of an audio file as ffmpeg decodes it (priming removed by the edit list). */
async function decode(file: string, channels: number): Promise<Float32Array> {
  const { stdout } = await exec('ffmpeg', ['-v', 'error', '-i', file, '-f', 'f32le', '-ac', String(channels), 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 30 });
  return new Float32Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

async function streamInfo(file: string): Promise<{ start_time: string; duration_ts: number; codec_name: string }> {
  const { stdout } = await exec('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=start_time,duration_ts,codec_name', '-of', 'json', file]);
  return (JSON.parse(stdout) as { streams: { start_time: string; duration_ts: number; codec_name: string }[] }).streams[0]!;
}

function interleave(ch: Float32Array[]): Float32Array {
  const n = ch[0]!.length;
  const out = new Float32Array(n * ch.length);
  for (let i = 0; i < n; i++) for (let c = 0; c < ch.length; c++) out[i * ch.length + c] = ch[c]![i]!;
  return out;
}

/** Per-frame max |decoded - reference| over the channels, for the reference's frames. */
function errors(dec: Float32Array, ref: Float32Array, channels: number): Float32Array {
  const n = ref.length / channels;
  const e = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let m = 0;
    for (let c = 0; c < channels; c++) m = Math.max(m, Math.abs(dec[i * channels + c]! - ref[i * channels + c]!));
    e[i] = m;
  }
  return e;
}

function snrDb(dec: Float32Array, ref: Float32Array): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    s += ref[i]! ** 2;
    n += (dec[i]! - ref[i]!) ** 2;
  }
  return 10 * Math.log10(s / n);
}

/** Lag (in frames) of `dec` against `ref` with the highest correlation around `at`, first channel. */
function bestLag(dec: Float32Array, ref: Float32Array, channels: number, at: number, span = 8192, maxLag = 1536): number {
  let best = 0;
  let bestV = -Infinity;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let v = 0;
    for (let i = at; i < at + span; i++) v += (dec[(i + lag) * channels] ?? 0) * ref[i * channels]!;
    if (v > bestV) {
      bestV = v;
      best = lag;
    }
  }
  return best;
}

/**
 * A speech-like signal: voiced syllables (a glottal pulse train with a moving pitch through two
 * resonances, 4 per second), noise bursts like fricatives and plosives, and pauses. The second
 * channel is the first with another pitch, so the channels differ.
 */
function speechLike(seconds: number, channels: number, seed = 1): Float32Array[] {
  const n = Math.round(seconds * RATE);
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: channels }, (_, ch) => {
    const x = new Float32Array(n);
    let phase = 0;
    let y1 = 0;
    let y2 = 0;
    let z1 = 0;
    let z2 = 0;
    for (let i = 0; i < n; i++) {
      const t = i / RATE;
      const syl = (t * 4) % 1;
      const voiced = syl < 0.6 && Math.floor(t * 4) % 7 !== 6;
      const f0 = (120 + 40 * Math.sin(2 * Math.PI * 0.7 * t)) * (ch === 0 ? 1 : 1.3);
      phase += f0 / RATE;
      let e = 0;
      if (voiced) {
        if (phase >= 1) {
          phase -= 1;
          e = 1;
        }
        e *= Math.sin(Math.PI * (syl / 0.6));
      } else if (syl > 0.7 && syl < 0.85 && Math.floor(t * 4) % 3 === 0) e = 0.08 * rnd();
      else if (syl > 0.9 && syl < 0.91) e = 0.5 * rnd();
      // Two resonances (700 Hz and 1800 Hz) as in a vowel.
      const a = 0.6 * e + 1.96 * Math.cos((2 * Math.PI * 700) / RATE) * y1 - 0.9604 * y2;
      y2 = y1;
      y1 = a;
      const b = 0.4 * e + 1.9 * Math.cos((2 * Math.PI * 1800) / RATE) * z1 - 0.9025 * z2;
      z2 = z1;
      z1 = b;
      x[i] = 0.05 * (a + b);
    }
    return x;
  });
}

/** Replace `seconds` from `at` with another speech-like signal (an edited line). */
function edit(ch: Float32Array[], at: number, frames: number): Float32Array[] {
  const other = speechLike(frames / RATE, ch.length, 99);
  return ch.map((x, c) => {
    const y = x.slice();
    y.set(other[c]!, at);
    return y;
  });
}

interface Case {
  name: string;
  input: string;
  channels: number;
  frames: number;
}

async function wavCase(name: string, ch: Float32Array[]): Promise<Case> {
  const input = tmp.file(`${name}.wav`);
  await writeWav(input, { sampleRate: RATE, channels: ch }, { format: 'float32' });
  return { name, input, channels: ch.length, frames: ch[0]!.length };
}

/**
 * A first encode equals encodeAudio's .m4a sample for sample and lasts the input's length; after
 * `change` only the chunks whose windows it touches are encoded, and the splices are clean.
 */
async function checkChunked(first: Case, changed: Case, expectEncoded: number[]): Promise<void> {
  const dir = tmp.file(`${first.name}-store`);
  await exec('mkdir', ['-p', dir]);
  const store = folderStore(dir);
  const total = Math.ceil(first.frames / CHUNK);

  // (a) First encode: every chunk missing, one whole encode split per chunk.
  const out1 = tmp.file(`${first.name}-1.m4a`);
  const r1 = await encodeAudioChunked(first.input, out1, { store, chunkFrames: CHUNK });
  expect(r1).toMatchObject({ chunks: { total, encoded: total, reused: 0 }, encode: 'whole' });
  expect(store.puts).toBe(total);
  const info = await streamInfo(out1);
  expect(info.codec_name).toBe('aac');
  expect(Number(info.start_time)).toBe(0);
  expect(info.duration_ts).toBe(first.frames);
  const plain = tmp.file(`${first.name}-plain.m4a`);
  await encodeAudio(first.input, plain);
  expect((await streamInfo(plain)).duration_ts).toBe(first.frames);
  const dec1 = await decode(out1, first.channels);
  const decPlain = await decode(plain, first.channels);
  expect(dec1.length).toBe(decPlain.length);
  expect(Buffer.from(dec1.buffer).equals(Buffer.from(decPlain.buffer))).toBe(true);
  const ref1 = interleave((await readWav(first.input)).channels);
  expect(dec1.length).toBeGreaterThanOrEqual(ref1.length);
  expect(bestLag(dec1, ref1, first.channels, Math.floor(first.frames / 2))).toBe(0);

  // Again unchanged: nothing encoded, the same packets.
  const out1b = tmp.file(`${first.name}-1b.m4a`);
  const r1b = await encodeAudioChunked(first.input, out1b, { store, chunkFrames: CHUNK });
  expect(r1b).toMatchObject({ chunks: { total, encoded: 0, reused: total }, encode: 'none' });
  expect(Buffer.from((await decode(out1b, first.channels)).buffer).equals(Buffer.from(dec1.buffer))).toBe(true);

  // (b) The edited input: only the touched chunks are encoded (their windows), the rest reused.
  const out2 = tmp.file(`${changed.name}-2.m4a`);
  const r2 = await encodeAudioChunked(changed.input, out2, { store, chunkFrames: CHUNK });
  expect(r2).toMatchObject({ chunks: { total, encoded: expectEncoded.length, reused: total - expectEncoded.length }, encode: 'windows' });
  expect((await streamInfo(out2)).duration_ts).toBe(changed.frames);
  const ref2 = interleave((await readWav(changed.input)).channels);
  const dec2 = await decode(out2, changed.channels);
  const e2 = errors(dec2, ref2, changed.channels);
  // The splices: both ends of every re-encoded chunk.
  const splices = [...new Set(expectEncoded.flatMap((c) => [c * CHUNK, (c + 1) * CHUNK]))].filter((p) => p > 0 && p < changed.frames);
  const near = new Uint8Array(changed.frames);
  for (const p of splices) near.fill(1, Math.max(0, p - 2048), Math.min(changed.frames, p + 2048));
  let maxNear = 0;
  let maxElse = 0;
  for (let i = 0; i < changed.frames; i++) {
    if (near[i]) maxNear = Math.max(maxNear, e2[i]!);
    else maxElse = Math.max(maxElse, e2[i]!);
  }
  for (const p of splices) expect(bestLag(dec2, ref2, changed.channels, Math.max(0, p - 4096))).toBe(0);
  // No click: the error at the splices is of the codec's size elsewhere in the file.
  expect(maxNear).toBeLessThanOrEqual(1.5 * maxElse);
  // The whole file against a whole encode of the edited input.
  const plain2 = tmp.file(`${changed.name}-plain2.m4a`);
  await encodeAudio(changed.input, plain2);
  const decPlain2 = await decode(plain2, changed.channels);
  const snrChunked = snrDb(dec2, ref2);
  const snrWhole = snrDb(decPlain2, ref2);
  // Around each splice, the error energy against a whole encode's there.
  const ePlain2 = errors(decPlain2, ref2, changed.channels);
  const rms = (e: Float32Array, a: number, b: number) => Math.sqrt(e.subarray(a, b).reduce((s, v) => s + v * v, 0) / (b - a));
  const local = splices.map((p) => [rms(e2, p - 2048, p + 2048), rms(ePlain2, p - 2048, p + 2048)] as const);
  for (const [chunked, whole] of local) expect(chunked).toBeLessThanOrEqual(1.5 * whole + 1e-4);
  expect(snrChunked).toBeGreaterThan(snrWhole - 3);

  // (c) The same, told where the input changed (an earlier result's identities and the changed
  // frames): the chunks away from the change take their earlier hashes unread, and the file is
  // the same bytes as (b)'s.
  const a = (await readWav(first.input)).channels;
  const b = (await readWav(changed.input)).channels;
  let lo = -1;
  let hi = -1;
  for (let i = 0; i < changed.frames; i++) if (a.some((x, c) => x[i] !== b[c]![i])) [lo, hi] = [lo < 0 ? i : lo, i + 1];
  expect(lo).toBeGreaterThanOrEqual(0);
  const out3 = tmp.file(`${changed.name}-3.m4a`);
  const prev = { settings: r1.settings, frames: r1.frames, hashes: r1.hashes };
  const r3 = await encodeAudioChunked(changed.input, out3, { store, chunkFrames: CHUNK, previous: { ...prev, changed: [{ start: lo, end: hi }] } });
  expect(r3.hashes).toEqual(r2.hashes);
  expect(r3.hashesReused).toBe(total - expectEncoded.length);
  expect((await readFile(out3)).equals(await readFile(out2))).toBe(true);
  expect(r2.hashesReused).toBe(0);
  // other settings (here another chunk length's digest) or another length: the earlier hashes are not used
  const r4 = await encodeAudioChunked(changed.input, tmp.file(`${changed.name}-4.m4a`), { store, chunkFrames: CHUNK, previous: { ...prev, settings: r2.settings.replace(/^./, (c) => (c === '0' ? '1' : '0')), changed: [] } });
  expect(r4.hashesReused).toBe(0);
  expect(r4.hashes).toEqual(r2.hashes);
  const r5 = await encodeAudioChunked(changed.input, tmp.file(`${changed.name}-5.m4a`), { store, chunkFrames: CHUNK, previous: { ...prev, frames: prev.frames + 1, changed: [] } });
  expect(r5.hashesReused).toBe(0);
  console.log(`${changed.name}: ${expectEncoded.length}/${total} chunks encoded; max |err| at splices ${maxNear.toFixed(5)}, elsewhere ${maxElse.toFixed(5)}; SNR chunked ${snrChunked.toFixed(1)} dB, whole ${snrWhole.toFixed(1)} dB; RMS error at the splices ${local.map(([a, b]) => `${a.toExponential(2)} (whole ${b.toExponential(2)})`).join(', ')}`);
}

describe('encodeAudioChunked', () => {
  it('stereo speech-like signal: aligned, exact length, one edited chunk re-encoded, clean splices', async () => {
    const x = speechLike(8, 2);
    // 8 s = 375 AAC frames: 12 chunks of 32 frames; the edit lies inside chunk 5.
    // Chunk 5's samples beyond both margins (8192) of its neighbours' windows: [5*CHUNK + 8192, 6*CHUNK - 8192).
    const at = 5 * CHUNK + 9000;
    await checkChunked(await wavCase('stereo', x), await wavCase('stereo-edited', edit(x, at, 7000)), [5]);
  }, 120_000);

  it('mono: an edit in the margin of the next chunk re-encodes both', async () => {
    const x = speechLike(6, 1, 7);
    // Ends 1000 samples before chunk 4 starts: inside chunk 4's pre-roll margin (8192).
    const at = 4 * CHUNK - 9000;
    await checkChunked(await wavCase('mono', x), await wavCase('mono-edited', edit(x, at, 8000)), [3, 4]);
  }, 120_000);

  it('a file shorter than one chunk: one chunk, exact length, reused the second time', async () => {
    const c = await wavCase('short', speechLike(0.3, 2, 3));
    const store = folderStore(tmp.dir);
    const out = tmp.file('short.m4a');
    expect(await encodeAudioChunked(c.input, out, { store })).toMatchObject({ chunks: { total: 1, encoded: 1, reused: 0 }, encode: 'whole' });
    expect((await streamInfo(out)).duration_ts).toBe(c.frames);
    const plain = tmp.file('short-plain.m4a');
    await encodeAudio(c.input, plain);
    const dec = await decode(out, 2);
    expect(Buffer.from(dec.buffer).equals(Buffer.from((await decode(plain, 2)).buffer))).toBe(true);
    const again = tmp.file('short-again.m4a');
    expect(await encodeAudioChunked(c.input, again, { store })).toMatchObject({ chunks: { total: 1, encoded: 0, reused: 1 }, encode: 'none' });
    expect(Buffer.from((await decode(again, 2)).buffer).equals(Buffer.from(dec.buffer))).toBe(true);
  }, 60_000);

  it('the stored chunks are ADTS: chunk 0 has the priming packet, one packet per 1024 samples, the last the end; one encode\'s windows all join', async () => {
    const c = await wavCase('frames', speechLike(3, 1, 5));
    const stored: Buffer[][] = [];
    const store: AacChunkStore = { get: async () => undefined, put: async (_h, f) => void stored.push(splitAdts(await readFile(f))!) };
    await encodeAudioChunked(c.input, tmp.file('frames.m4a'), { store, chunkFrames: CHUNK });
    // 144000 samples: 4 whole chunks of 32 packets (+1 priming in chunk 0), then the rest.
    expect(stored.map((p) => p.length)).toEqual([33, 32, 32, 32, Math.ceil(c.frames / 1024) + 1 - 129]);
    const all = stored.flat();
    for (let i = 1; i < all.length; i++) expect(windowsJoin(all[i - 1]!, all[i]!)).toBe(true);
    // The noise bursts make the encoder switch to short windows: the check sees them.
    expect(all.map((p) => adtsWindowSequence(p))).toContain(2);
  }, 60_000);

  it('stored chunks whose windows do not join: the whole file is encoded instead, said in the result, and the store repaired', async () => {
    const c = await wavCase('join', speechLike(3, 1, 5));
    const dir = tmp.file('join-store');
    await exec('mkdir', ['-p', dir]);
    const store = folderStore(dir);
    const out = tmp.file('join.m4a');
    await encodeAudioChunked(c.input, out, { store, chunkFrames: CHUNK });
    const files = [...store.entries.values()];
    const chunks = await Promise.all(files.map(async (f) => splitAdts(await readFile(f))!));
    const all = chunks.flat();
    const startsShort = (p: Buffer) => [2, 3].includes(adtsWindowSequence(p)!);
    // A chunk after one that ends with a long window, given packets that start with a short one.
    const target = [1, 2, 3].find((k) => !startsShort(chunks[k]![0]!) && windowsJoin(chunks[k - 1]!.at(-1)!, chunks[k]![0]!))!;
    const from = all.findIndex((p, i) => i > 0 && startsShort(p) && i + CHUNK / 1024 <= all.length);
    expect(target).toBeDefined();
    expect(from).toBeGreaterThan(0);
    await writeFile(files[target]!, Buffer.concat(all.slice(from, from + CHUNK / 1024)));
    const r = await encodeAudioChunked(c.input, tmp.file('join-2.m4a'), { store, chunkFrames: CHUNK });
    expect(r).toMatchObject({ chunks: { total: 5, encoded: 5, reused: 0 }, encode: 'whole' });
    expect(r.fallback).toMatch(new RegExp(`do not join at the start of chunks? (\\d+, )*${target}\\b`));
    const plain = tmp.file('join-plain.m4a');
    await encodeAudio(c.input, plain);
    expect(Buffer.from((await decode(tmp.file('join-2.m4a'), 1)).buffer).equals(Buffer.from((await decode(plain, 1)).buffer))).toBe(true);
    const again = await encodeAudioChunked(c.input, tmp.file('join-3.m4a'), { store, chunkFrames: CHUNK });
    expect(again).toMatchObject({ file: tmp.file('join-3.m4a'), chunks: { total: 5, encoded: 0, reused: 5 }, encode: 'none', hashesReused: 0 });
    expect(again.fallback).toBeUndefined();
  }, 60_000);

  itWithMedia(['chinese-news.wav'], 'chinese-news.wav (48 kHz stereo speech): aligned, one edited chunk re-encoded, clean splices', async () => {
    const src = await readWav(media('chinese-news.wav'));
    expect(src.sampleRate).toBe(RATE);
    const x = src.channels;
    const first = await wavCase('news', x);
    // Another stretch of the same recording pasted into chunk 6: a re-spoken line.
    const at = 6 * CHUNK + 9000;
    const y = x.map((c) => {
      const d = c.slice();
      d.set(c.subarray(20000, 27000), at);
      return d;
    });
    await checkChunked(first, await wavCase('news-edited', y), [6]);
  }, 120_000);
});
