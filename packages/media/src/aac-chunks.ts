/**
 * AAC encoding in chunks cached by their content: a re-dub whose mix changed in one place
 * re-encodes only the chunks whose samples changed and splices AAC packets.
 *
 * How ffmpeg's native AAC encoder (ffmpeg 5.1) maps packets to samples, checked on real
 * encodes (aac-chunks.test.ts):
 * - every packet is one AAC-LC frame of 1024 samples per channel;
 * - the encoder puts 1024 samples of priming in front: an encode of the input window that starts
 *   at sample `s` emits packet k (0-based) decoding to the samples [s + (k-1)*1024, s + k*1024).
 *   Packet 0 decodes to priming only; the last packet holds the end of the input and padding.
 *   An encode of L samples emits ceil(L/1024) + 1 packets;
 * - packet k is the MDCT of the 2048 samples [s + (k-1)*1024, s + (k+1)*1024) (50% overlap):
 *   the decoder's output for packet k is the overlap-add of packets k-1 and k. Two packets from
 *   different encodes splice cleanly (aliasing cancels) when both encodes saw the same samples
 *   around the splice and chose compatible window shapes; hence the margins: every encode of a
 *   chunk starts `marginFrames` before the chunk and ends `marginFrames` after it, and the chunk's
 *   identity covers those samples too (a change in a neighbour's margin re-encodes the chunk).
 *
 * The file's samples are cut at k*chunkFrames. Chunk c owns the packets whose output starts in
 * [c*chunkFrames, (c+1)*chunkFrames): global packets [c*F + 1, (c+1)*F + 1) with F =
 * chunkFrames/1024; chunk 0 also owns packet 0 (the priming), the last chunk every packet to the
 * end. A chunk is stored as its packets in ADTS (7-byte headers carrying each frame's length).
 *
 * Window sequences (long, start, short, stop) must still chain across a splice; with the default
 * margins both encodes see the same samples long enough to decide alike (no mismatch over 118
 * splices of a click train), and every splice is checked anyway (`windowsJoin`): where one does not
 * join, the whole file is encoded instead and the result says so. With margins of 2 frames the
 * error at splices came out 1.2-2.5x a whole encode's there; with 8 it is the whole encode's.
 *
 * The concatenated ADTS is remuxed into the .m4a without re-encoding; the first packet's
 * timestamp is moved to -1024 samples (the mov muxer then writes the priming as an edit list)
 * and the last packet's duration is cut to the samples the input has left, so the .m4a starts at
 * 0, lasts exactly the input's length and decodes like a whole `encodeAudio` encode.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { faststartArgs } from './container.js';
import { runFfmpeg } from './ffmpeg.js';
import { resolveMediaTools, type MediaToolOptions } from './tools.js';
import { parseWavAsync, type WavLayout } from './wav-format.js';

/** Samples per channel in one AAC-LC frame (one packet). */
export const AAC_FRAME = 1024;
/** Samples of encoder delay (priming) ffmpeg's native AAC encoder puts in front. */
export const AAC_PRIMING = 1024;
/** Default chunk length in samples per channel (256 AAC frames: 5.5 s at 48 kHz). */
export const AAC_CHUNK_FRAMES = 256 * AAC_FRAME;
/** Default margin in samples on each side of a chunk that its encode and its identity cover. */
export const AAC_CHUNK_MARGIN = 8 * AAC_FRAME;

/** Where encoded chunks are kept between runs: ADTS files named by the chunk's identity. */
export interface AacChunkStore {
  /** A local file holding the chunk's ADTS packets, or undefined when not stored. */
  get(hash: string): Promise<string | undefined>;
  put(hash: string, file: string): Promise<void>;
}

export interface EncodeAudioChunkedOptions extends MediaToolOptions {
  store: AacChunkStore;
  /** Chunk length in samples per channel, a multiple of 1024 (default 262144). */
  chunkFrames?: number;
  /** Samples on each side of a chunk its encode and identity cover, a multiple of 1024, at least 2048 (default 8192). */
  marginFrames?: number;
  /** AAC bit rate (default "192k", as encodeAudio). */
  bitrate?: string;
  /**
   * When every chunk or more than this fraction of them is missing, the whole file is encoded in
   * one ffmpeg run and its packets split per chunk (default 0.5); else each missing chunk's window.
   */
  wholeEncodeFraction?: number;
  /** Folder for intermediate files (default: a temporary folder, removed afterwards). */
  tmpDir?: string;
  timeoutMs?: number;
  /**
   * An earlier input's chunk identities (`settings`, `frames` and `hashes` as its result gave
   * them) and the sample frames `changed` where this input may differ from it: a chunk whose
   * window misses every changed span takes its earlier hash without its samples being read. The
   * caller vouches that outside `changed` the two inputs hold the same sample bytes (e.g. a mix
   * updated in place: updateMixReplace's `updated`). Ignored when the settings or lengths differ.
   */
  previous?: { settings: string; frames: number; hashes: readonly string[]; changed: readonly { start: number; end: number }[] };
}

export interface EncodeAudioChunkedResult {
  file: string;
  chunks: { total: number; encoded: number; reused: number };
  /** 'whole': one encode of the file, split per chunk; 'windows': the missing chunks' windows; 'none': all reused. */
  encode: 'whole' | 'windows' | 'none';
  /** Why the whole file was encoded although chunks were stored (their windows did not join). */
  fallback?: string;
  /** The chunks' identities, for a later call's `previous`: a digest of the settings, the input's frames, each chunk's hash. */
  settings: string;
  frames: number;
  hashes: string[];
  /** Chunks whose hash came from `previous` (their samples were not read). */
  hashesReused: number;
}

interface ChunkPlan {
  index: number;
  /** First and end sample (per channel) of the chunk. */
  start: number;
  end: number;
  /** The window its encode covers (the chunk plus margins, clipped to the file). */
  windowStart: number;
  windowEnd: number;
  hash: string;
  /** Packets found in the store (ADTS frames), or undefined when missing. */
  packets?: Buffer[];
}

/**
 * Encode a WAV to AAC in an .m4a (like `encodeAudio` with .m4a), reusing the chunks `store` holds
 * for samples it has seen: see the file comment for the chunking and the splice.
 */
export async function encodeAudioChunked(input: string, output: string, opts: EncodeAudioChunkedOptions, context: PartialContext = {}): Promise<EncodeAudioChunkedResult> {
  const ctx = resolveContext(context);
  const chunkFrames = opts.chunkFrames ?? AAC_CHUNK_FRAMES;
  const margin = opts.marginFrames ?? AAC_CHUNK_MARGIN;
  if (!Number.isInteger(chunkFrames) || chunkFrames <= 0 || chunkFrames % AAC_FRAME !== 0) throw new DubError('invalid_input', `encodeAudioChunked: chunkFrames must be a positive multiple of ${AAC_FRAME}, got ${chunkFrames}`);
  if (!Number.isInteger(margin) || margin < 2 * AAC_FRAME || margin % AAC_FRAME !== 0) throw new DubError('invalid_input', `encodeAudioChunked: marginFrames must be a multiple of ${AAC_FRAME} of at least ${2 * AAC_FRAME}, got ${margin}`);
  if (path.extname(output).toLowerCase() !== '.m4a') throw new DubError('invalid_input', `encodeAudioChunked writes .m4a, not ${output}`);
  const bitrate = opts.bitrate ?? '192k';

  const tmp = opts.tmpDir ?? (await mkdtemp(path.join(os.tmpdir(), 'dub-aac-')));
  try {
    const wav = await readLayout(input);
    const total = wav.frames;
    if (total === 0) throw new DubError('invalid_input', `encodeAudioChunked: ${input} has no samples`);
    const settings = JSON.stringify({
      layout: 1,
      codec: 'aac',
      bitrate,
      rate: wav.format.sampleRate,
      channels: wav.format.channels,
      sampleFormat: wav.format.sampleFormat,
      chunkFrames,
      margin,
      ffmpeg: await ffmpegVersion(opts, ctx),
    });
    const settingsDigest = createHash('sha256').update(settings).digest('hex');
    const count = Math.ceil(total / chunkFrames);
    const prev = opts.previous;
    const reusable = prev && prev.settings === settingsDigest && prev.frames === total && prev.hashes.length === count ? prev : undefined;
    const known = (c: number, windowStart: number, windowEnd: number): string | undefined =>
      reusable && reusable.changed.every((s) => s.end <= windowStart || s.start >= windowEnd) ? reusable.hashes[c] : undefined;
    const plans = await planChunks(input, wav, chunkFrames, margin, settings, known);
    const hashesReused = reusable ? plans.filter((p) => p.hash === known(p.index, p.windowStart, p.windowEnd)).length : 0;
    for (const p of plans) {
      const file = await opts.store.get(p.hash);
      if (file === undefined) continue;
      const packets = splitAdts(await readFile(file));
      if (packets && packets.length === expectedPackets(p, plans.length, chunkFrames, total)) p.packets = packets;
      else ctx.logger.warn({ hash: p.hash, file }, 'encodeAudioChunked: stored chunk unreadable or of the wrong length; encoding it again');
    }
    const missing = plans.filter((p) => !p.packets);
    const wholeFraction = opts.wholeEncodeFraction ?? 0.5;
    let mode: EncodeAudioChunkedResult['encode'] = missing.length === 0 ? 'none' : missing.length === plans.length || missing.length > wholeFraction * plans.length ? 'whole' : 'windows';
    if (mode === 'whole') await encodeWhole(input, plans, { chunkFrames, total, rate: wav.format.sampleRate, bitrate, tmp }, opts, ctx);
    else if (mode === 'windows') await encodeWindows(input, missing, { chunkFrames, total, rate: wav.format.sampleRate, count: plans.length, bitrate, tmp }, opts, ctx);
    let toStore = missing;
    let fallback: string | undefined;
    const bad = mode === 'whole' ? [] : badSplices(plans);
    if (bad.length > 0) {
      // Windows that do not join: one encode of the whole file instead, stored for every chunk.
      fallback = `window sequences do not join at the start of chunk${bad.length > 1 ? 's' : ''} ${bad.join(', ')}; encoded the whole file`;
      ctx.logger.warn({ input, chunks: bad }, `encodeAudioChunked: ${fallback}`);
      await encodeWhole(input, plans, { chunkFrames, total, rate: wav.format.sampleRate, bitrate, tmp }, opts, ctx);
      mode = 'whole';
      toStore = plans;
    }
    for (const p of toStore) {
      const file = path.join(tmp, `chunk-${p.index}.adts`);
      await writeFile(file, Buffer.concat(p.packets!));
      await opts.store.put(p.hash, file);
    }
    await remux(plans, total, path.join(tmp, 'all.adts'), output, opts, ctx);
    // A whole encode replaces every chunk's packets (no splice in this file); the new ones are stored.
    const encoded = mode === 'whole' ? plans.length : missing.length;
    ctx.logger.debug({ total: plans.length, encoded, mode }, 'encodeAudioChunked');
    return { file: output, chunks: { total: plans.length, encoded, reused: plans.length - encoded }, encode: mode, ...(fallback ? { fallback } : {}), settings: settingsDigest, frames: total, hashes: plans.map((p) => p.hash), hashesReused };
  } finally {
    if (opts.tmpDir === undefined) await rm(tmp, { recursive: true, force: true });
  }
}

async function readLayout(file: string): Promise<WavLayout> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    return await parseWavAsync(size, async (pos, len) => {
      const b = Buffer.alloc(len);
      const { bytesRead } = await fh.read(b, 0, len, pos);
      return b.subarray(0, bytesRead);
    });
  } finally {
    await fh.close();
  }
}

const versions = new Map<string, string>();

/** The first line of `ffmpeg -version` (part of every chunk's identity). */
async function ffmpegVersion(opts: MediaToolOptions, ctx: ReturnType<typeof resolveContext>): Promise<string> {
  const bin = resolveMediaTools(opts).ffmpegPath;
  let v = versions.get(bin);
  if (v === undefined) {
    const res = await runFfmpeg(['-version'], { ...opts, progress: false }, ctx);
    v = res.stdout.toString('utf8').split('\n')[0]!.trim();
    versions.set(bin, v);
  }
  return v;
}

/** Cut the file at k*chunkFrames and hash each chunk's window (raw sample bytes) with the settings; `known` gives the hash of a chunk whose samples need not be read. */
async function planChunks(input: string, wav: WavLayout, chunkFrames: number, margin: number, settings: string, known: (c: number, windowStart: number, windowEnd: number) => string | undefined): Promise<ChunkPlan[]> {
  const count = Math.ceil(wav.frames / chunkFrames);
  const plans: ChunkPlan[] = [];
  const fh = await open(input, 'r');
  try {
    for (let c = 0; c < count; c++) {
      const start = c * chunkFrames;
      const end = Math.min(wav.frames, start + chunkFrames);
      const windowStart = Math.max(0, start - margin);
      const windowEnd = Math.min(wav.frames, end + margin);
      const hash = known(c, windowStart, windowEnd);
      if (hash !== undefined) {
        plans.push({ index: c, start, end, windowStart, windowEnd, hash });
        continue;
      }
      const h = createHash('sha256').update(settings).update(JSON.stringify({ first: c === 0, last: c === count - 1, before: start - windowStart, length: end - start }));
      const bytes = (windowEnd - windowStart) * wav.format.blockAlign;
      const buf = Buffer.allocUnsafe(Math.min(bytes, 1 << 22));
      for (let done = 0; done < bytes; ) {
        const n = Math.min(buf.length, bytes - done);
        const { bytesRead } = await fh.read(buf, 0, n, wav.dataOffset + windowStart * wav.format.blockAlign + done);
        if (bytesRead === 0) throw new DubError('invalid_input', `encodeAudioChunked: ${input} ended before its data chunk did`);
        h.update(buf.subarray(0, bytesRead));
        done += bytesRead;
      }
      plans.push({ index: c, start, end, windowStart, windowEnd, hash: h.digest('hex') });
    }
  } finally {
    await fh.close();
  }
  return plans;
}

/** Chunks whose first packet's window does not join the previous chunk's last packet's. */
function badSplices(plans: ChunkPlan[]): number[] {
  const bad: number[] = [];
  for (let c = 1; c < plans.length; c++) {
    const prev = plans[c - 1]!.packets!;
    if (!windowsJoin(prev[prev.length - 1]!, plans[c]!.packets![0]!)) bad.push(c);
  }
  return bad;
}

/** Packets in the whole file's encode: ceil(total/1024) + 1 (priming first). */
function packetCount(total: number): number {
  return Math.ceil(total / AAC_FRAME) + 1;
}

/** Global packet range [first, end) chunk `p` owns (see the file comment). */
function ownedPackets(p: ChunkPlan, count: number, chunkFrames: number, total: number): [number, number] {
  const f = chunkFrames / AAC_FRAME;
  const first = p.index === 0 ? 0 : p.index * f + 1;
  const end = p.index === count - 1 ? packetCount(total) : (p.index + 1) * f + 1;
  return [first, end];
}

function expectedPackets(p: ChunkPlan, count: number, chunkFrames: number, total: number): number {
  const [a, b] = ownedPackets(p, count, chunkFrames, total);
  return b - a;
}

interface EncodeJob {
  chunkFrames: number;
  total: number;
  rate: number;
  bitrate: string;
  tmp: string;
}

function aacArgs(bitrate: string): string[] {
  return ['-c:a', 'aac', '-b:a', bitrate, '-f', 'adts'];
}

/** One encode of the whole file; its packets are split per chunk (every chunk takes the new packets). */
async function encodeWhole(input: string, plans: ChunkPlan[], job: EncodeJob, opts: EncodeAudioChunkedOptions, ctx: ReturnType<typeof resolveContext>): Promise<void> {
  const file = path.join(job.tmp, 'whole.adts');
  await runFfmpeg(['-i', input, '-map', '0:a:0', '-vn', ...aacArgs(job.bitrate), file], { ...opts, stage: 'encode_audio', durationSec: job.total / job.rate }, ctx);
  const packets = splitAdts(await readFile(file));
  const want = packetCount(job.total);
  if (!packets || packets.length < want) throw new DubError('internal_error', `encodeAudioChunked: the encode of ${input} gave ${packets?.length ?? 'unreadable'} packets, expected ${want}`);
  for (const p of plans) {
    const [a, b] = ownedPackets(p, plans.length, job.chunkFrames, job.total);
    p.packets = packets.slice(a, b);
  }
}

/**
 * Encode each missing chunk's window (chunk plus margins) in one ffmpeg run (atrim per output)
 * and keep the packets whose output lies in the chunk: window packet k decodes to
 * [windowStart + (k-1)*1024, windowStart + k*1024).
 */
async function encodeWindows(input: string, missing: ChunkPlan[], job: EncodeJob & { count: number }, opts: EncodeAudioChunkedOptions, ctx: ReturnType<typeof resolveContext>): Promise<void> {
  const labels = missing.map((_, i) => `[w${i}]`);
  const graph = [`[0:a:0]asplit=${missing.length}${labels.join('')}`];
  const args = ['-i', input];
  const outs: string[] = [];
  missing.forEach((p, i) => {
    graph.push(`[w${i}]atrim=start_sample=${p.windowStart}:end_sample=${p.windowEnd},asetpts=PTS-STARTPTS[o${i}]`);
    outs.push(path.join(job.tmp, `window-${p.index}.adts`));
  });
  args.push('-filter_complex', graph.join(';'));
  missing.forEach((_, i) => args.push('-map', `[o${i}]`, ...aacArgs(job.bitrate), outs[i]!));
  await runFfmpeg(args, { ...opts, stage: 'encode_audio' }, ctx);
  for (let i = 0; i < missing.length; i++) {
    const p = missing[i]!;
    const packets = splitAdts(await readFile(outs[i]!));
    const [a, b] = ownedPackets(p, job.count, job.chunkFrames, job.total);
    // Global packet j is window packet j - windowStart/1024.
    const shift = p.windowStart / AAC_FRAME;
    if (!packets || packets.length < b - shift) throw new DubError('internal_error', `encodeAudioChunked: the encode of chunk ${p.index} gave ${packets?.length ?? 'unreadable'} packets, expected at least ${b - shift}`);
    p.packets = packets.slice(a - shift, b - shift);
  }
}

/**
 * Concatenate the chunks' ADTS and copy the packets into the .m4a: timestamps shifted by one
 * packet (priming: the first packet at -1024 samples, written as an edit list) and the last
 * packet's duration cut to the input's remaining samples. The expressions use each packet's own
 * DURATION so they hold in whatever time base the packets reach the filter.
 */
async function remux(plans: ChunkPlan[], total: number, adtsFile: string, output: string, opts: EncodeAudioChunkedOptions, ctx: ReturnType<typeof resolveContext>): Promise<void> {
  const packets = plans.flatMap((p) => p.packets!);
  const count = packetCount(total);
  if (packets.length !== count) throw new DubError('internal_error', `encodeAudioChunked: ${packets.length} packets for ${total} samples, expected ${count}`);
  await writeFile(adtsFile, Buffer.concat(packets));
  const lastSamples = total - (count - 2) * AAC_FRAME;
  const setts = `setts=ts=TS-DURATION:duration=if(eq(N\\,${count - 1})\\,DURATION*${lastSamples}/${AAC_FRAME}\\,DURATION)`;
  await runFfmpeg(['-f', 'aac', '-i', adtsFile, '-map', '0:a:0', '-c', 'copy', '-bsf:a', setts, ...faststartArgs(output), output], { ...opts, stage: 'encode_audio' }, ctx);
}

/** AAC window sequences (ISO/IEC 14496-3 ics_info). */
const LONG_START = 1;
const EIGHT_SHORT = 2;
const LONG_STOP = 3;

const ID_SCE = 0;
const ID_CPE = 1;
const ID_DSE = 4;
const ID_FIL = 6;

/**
 * The window_sequence of an ADTS frame's first channel (its first SCE or CPE, after any fill or
 * data elements such as the encoder's name ffmpeg writes now and then), or undefined when the
 * frame has none.
 */
export function adtsWindowSequence(frame: Buffer): number | undefined {
  let pos = (frame[1]! & 1) === 1 ? 7 * 8 : 9 * 8;
  const end = frame.length * 8;
  const bits = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++, pos++) v = (v << 1) | ((frame[pos >> 3]! >> (7 - (pos & 7))) & 1);
    return v;
  };
  while (pos + 16 <= end) {
    const id = bits(3);
    if (id === ID_FIL) {
      let count = bits(4);
      if (count === 15) count += bits(8) - 1;
      pos += 8 * count;
      continue;
    }
    if (id === ID_DSE) {
      bits(4); // element_instance_tag
      const align = bits(1);
      let count = bits(8);
      if (count === 255) count += bits(8);
      if (align) pos = Math.ceil(pos / 8) * 8;
      pos += 8 * count;
      continue;
    }
    if (id !== ID_SCE && id !== ID_CPE) return undefined;
    bits(4); // element_instance_tag
    // A CPE with a common window has its ics_info next; else the first channel's global_gain comes first.
    if (!(id === ID_CPE && bits(1) === 1)) bits(8);
    bits(1); // ics_reserved_bit
    return bits(2);
  }
  return undefined;
}

/**
 * Whether the packet `next` may follow `prev`: a window that ends short (LONG_START, EIGHT_SHORT)
 * must be followed by one that starts short (EIGHT_SHORT, LONG_STOP), a long one by a long one;
 * else the overlap-add at the splice does not cancel the aliasing.
 */
export function windowsJoin(prev: Buffer, next: Buffer): boolean {
  const a = adtsWindowSequence(prev);
  const b = adtsWindowSequence(next);
  if (a === undefined || b === undefined) return false;
  const endsShort = a === LONG_START || a === EIGHT_SHORT;
  const startsShort = b === EIGHT_SHORT || b === LONG_STOP;
  return endsShort === startsShort;
}

/** Split ADTS into its frames (headers kept); undefined when it is not a clean ADTS stream of one raw block per frame. */
export function splitAdts(buf: Buffer): Buffer[] | undefined {
  const out: Buffer[] = [];
  let p = 0;
  while (p < buf.length) {
    if (p + 7 > buf.length || buf[p] !== 0xff || (buf[p + 1]! & 0xf6) !== 0xf0) return undefined;
    const len = ((buf[p + 3]! & 3) << 11) | (buf[p + 4]! << 3) | (buf[p + 5]! >> 5);
    const blocks = (buf[p + 6]! & 3) + 1;
    if (len < 7 || p + len > buf.length || blocks !== 1) return undefined;
    out.push(buf.subarray(p, p + len));
    p += len;
  }
  return out;
}
