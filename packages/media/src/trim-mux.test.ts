import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { encodeAudio, extractAudio, mux, probe, readWav, startsOnKeyframe, thumbnail, trim, writeWav } from './index.js';
import { copiesAudio } from './trim.js';
import { ffmpeg, ffprobeJson, makeSpeech, makeVideo, tempDir } from '../test-support/media-fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
  // 6 s, 25 fps, a keyframe every second.
  await makeVideo(tmp.file('src.mp4'), { duration: 6, width: 320, height: 240, fps: 25, gop: 25, freq: 440 });
  await ffmpeg(['-i', tmp.file('src.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', tmp.file('rotated.mp4')]);
});
afterAll(async () => {
  await tmp.cleanup();
});

async function streamDurations(file: string): Promise<{ video: number; audio: number; videoCodec: string }> {
  const info = await ffprobeJson(file);
  const v = info.streams.find((s) => s.codec_type === 'video')!;
  const a = info.streams.find((s) => s.codec_type === 'audio')!;
  return { video: Number(v.duration), audio: Number(a.duration), videoCodec: String(v.codec_name) };
}

describe('trim', () => {
  it('finds keyframes', async () => {
    expect(await startsOnKeyframe(tmp.file('src.mp4'), 2, 25)).toBe(true);
    expect(await startsOnKeyframe(tmp.file('src.mp4'), 2.3, 25)).toBe(false);
  });

  it('copies the video for a keyframe-aligned cut', async () => {
    const res = await trim(tmp.file('src.mp4'), tmp.file('cut-copy.mp4'), { start: 1, end: 3 });
    expect(res.reencoded).toBe(false);
    const d = await streamDurations(tmp.file('cut-copy.mp4'));
    expect(d.video).toBeCloseTo(2, 1);
    expect(d.audio).toBeGreaterThan(1.95);
    expect(d.audio).toBeLessThan(2.1);
  });

  it('re-encodes for a cut between keyframes, accurate to a frame', async () => {
    const res = await trim(tmp.file('src.mp4'), tmp.file('cut-enc.mp4'), { start: 1.3, end: 3.5 });
    expect(res.reencoded).toBe(true);
    const d = await streamDurations(tmp.file('cut-enc.mp4'));
    expect(Math.abs(d.video - 2.2)).toBeLessThanOrEqual(0.04 + 1e-6);
    expect(Math.abs(d.audio - 2.2)).toBeLessThan(0.06);
    const info = await probe(tmp.file('cut-enc.mp4'));
    // 55 frames start in [1.3, 3.5); the muxer may repeat the first one to start at 0.
    expect(info.video?.frames).toBeGreaterThanOrEqual(55);
    expect(info.video?.frames).toBeLessThanOrEqual(56);
  });

  it('copies AAC audio when the window cuts nothing, and encodes it otherwise', async () => {
    /** md5 of a file's first audio stream's packets (what a copy keeps and an encode changes). */
    const audioPackets = async (file: string): Promise<string> => (await promisify(execFile)('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:a:0', '-c', 'copy', '-f', 'md5', '-'])).stdout.trim();
    const info = await probe(tmp.file('src.mp4'));
    const whole = await trim(tmp.file('src.mp4'), tmp.file('whole.mp4'), { start: 0, end: info.duration, info });
    expect(whole.audioCopied).toBe(true);
    expect(await audioPackets(tmp.file('whole.mp4'))).toBe(await audioPackets(tmp.file('src.mp4')));
    const encoded = await trim(tmp.file('src.mp4'), tmp.file('whole-enc.mp4'), { start: 0, end: info.duration, info, audio: 'encode' });
    expect(encoded.audioCopied).toBe(false);
    expect(await audioPackets(tmp.file('whole-enc.mp4'))).not.toBe(await audioPackets(tmp.file('src.mp4')));
    // a cut window encodes (sample-accurate end)
    expect((await trim(tmp.file('src.mp4'), tmp.file('head.mp4'), { start: 0, end: 3, info })).audioCopied).toBe(false);
  });

  it('copiesAudio: only an uncut window over AAC in MP4/MOV', () => {
    const aac = { index: 1, codec: 'aac', channels: 2, sampleRate: 44100, channelLayout: 'stereo', duration: 6, language: undefined };
    const mp4 = { format: 'mov,mp4,m4a,3gp,3g2,mj2', duration: 6, audio: [aac] };
    expect(copiesAudio(mp4, 0, 6)).toBe(true);
    expect(copiesAudio(mp4, 0, 7)).toBe(true);
    expect(copiesAudio(mp4, 0, 5.9)).toBe(false);
    expect(copiesAudio(mp4, 0.5, 6)).toBe(false);
    expect(copiesAudio({ ...mp4, audio: [aac, { ...aac, index: 2, codec: 'opus' }] }, 0, 6)).toBe(false);
    expect(copiesAudio({ ...mp4, audio: [] }, 0, 6)).toBe(false);
    expect(copiesAudio({ ...mp4, format: 'matroska,webm' }, 0, 6)).toBe(false);
  });
});

describe('mux', () => {
  it('copies the video and carries the new audio (padded to the video length)', async () => {
    // A 4 s, 1 kHz stereo dub for a 6 s video.
    await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000:duration=4', '-ac', '2', tmp.file('dub.wav')]);
    await makeSpeech(tmp.file('speech.wav'), 'Hola, esto es una prueba.', 'es');
    const out = tmp.file('muxed.mp4');
    await mux({ video: tmp.file('src.mp4'), audioTracks: [{ file: tmp.file('dub.wav'), language: 'spa', title: 'Spanish dub' }, { file: tmp.file('speech.wav'), language: 'eng' }], output: out, copyVideo: true });
    const src = await ffprobeJson(tmp.file('src.mp4'));
    const info = await ffprobeJson(out);
    const v = info.streams.filter((s) => s.codec_type === 'video');
    const a = info.streams.filter((s) => s.codec_type === 'audio');
    expect(v).toHaveLength(1);
    expect(v[0]!.codec_name).toBe('h264');
    // Copied: same frame count and bit rate as the source stream.
    const srcV = src.streams.find((s) => s.codec_type === 'video')!;
    expect(v[0]!.nb_frames).toBe(srcV.nb_frames);
    expect(v[0]!.bit_rate).toBe(srcV.bit_rate);
    expect(a).toHaveLength(2);
    expect(a[0]!.codec_name).toBe('aac');
    expect((a[0]!.tags as Record<string, string>).language).toBe('spa');
    expect((a[0]!.tags as Record<string, string>).handler_name).toBe('Spanish dub');
    expect((a[1]!.tags as Record<string, string>).language).toBe('eng');
    expect(Number(a[0]!.duration)).toBeCloseTo(6, 1);
    // The output's audio is the new 1 kHz tone, then silence, not the 440 Hz original.
    const back = await extractAudio(out, tmp.file('muxed-audio.wav'), { sampleRate: 16000, channels: 1 });
    const x = (await readWav(back.file)).channels[0]!;
    let z = 0;
    for (let i = 16000; i < 48000; i++) if ((x[i - 1]! < 0) !== (x[i]! < 0)) z++;
    expect(z / 2 / 2).toBeCloseTo(1000, -1);
    let tailEnergy = 0;
    for (let i = 80000; i < x.length; i++) tailEnergy += x[i]! * x[i]!;
    expect(tailEnergy).toBeLessThan(1e-3);
    // faststart: the moov atom comes before mdat.
    const { readFile } = await import('node:fs/promises');
    const head = (await readFile(out)).subarray(0, 64 * 1024).toString('latin1');
    expect(head.indexOf('moov')).toBeGreaterThan(0);
    expect(head.indexOf('moov')).toBeLessThan(head.indexOf('mdat') === -1 ? Infinity : head.indexOf('mdat'));
  });

  it('cuts longer audio to the video, or stops at the shortest stream', async () => {
    await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=300:duration=9', tmp.file('long.wav')]);
    await mux({ video: tmp.file('src.mp4'), audioTracks: [{ file: tmp.file('long.wav') }], output: tmp.file('long.mp4') });
    expect((await probe(tmp.file('long.mp4'))).duration).toBeLessThan(6.1);
    await mux({ video: tmp.file('src.mp4'), audioTracks: [{ file: tmp.file('dub.wav'), title: 'Dub' }], output: tmp.file('short.mkv'), length: 'shortest' });
    expect((await probe(tmp.file('short.mkv'))).duration).toBeLessThan(4.3);
    const mkv = await ffprobeJson(tmp.file('short.mkv'));
    expect((mkv.streams.find((s) => s.codec_type === 'audio')!.tags as Record<string, string>).title).toBe('Dub');
  });

  it('encodes audio to m4a and mp3', async () => {
    const samples = new Float32Array(44100 * 2).map((_, i) => Math.sin((2 * Math.PI * 440 * i) / 44100) * 0.3);
    await writeWav(tmp.file('tone.wav'), { sampleRate: 44100, channels: [samples, samples] });
    await encodeAudio(tmp.file('tone.wav'), tmp.file('tone.m4a'));
    await encodeAudio(tmp.file('tone.wav'), tmp.file('tone.mp3'), { bitrate: '128k' });
    const m4a = await probe(tmp.file('tone.m4a'));
    expect(m4a.audio[0]).toMatchObject({ codec: 'aac', channels: 2, sampleRate: 44100 });
    expect(m4a.duration).toBeCloseTo(2, 1);
    expect((await probe(tmp.file('tone.mp3'))).audio[0]!.codec).toBe('mp3');
    await expect(encodeAudio(tmp.file('tone.wav'), tmp.file('tone.xyz'))).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('thumbnail', () => {
  it('extracts a JPEG poster frame resized with sharp', async () => {
    const res = await thumbnail(tmp.file('src.mp4'), tmp.file('thumb.jpg'), { width: 160 });
    expect(res).toMatchObject({ width: 160, height: 120 });
    expect(res.time).toBeCloseTo(0.6, 2);
    const meta = await sharp(tmp.file('thumb.jpg')).metadata();
    expect(meta).toMatchObject({ format: 'jpeg', width: 160, height: 120 });
  });

  it('applies the rotation and never enlarges', async () => {
    const res = await thumbnail(tmp.file('rotated.mp4'), tmp.file('rot.jpg'), { time: 1, width: 1000 });
    expect(res).toMatchObject({ width: 240, height: 320, time: 1 });
  });

  it('falls back to the first frame past the end', async () => {
    const res = await thumbnail(tmp.file('src.mp4'), tmp.file('late.jpg'), { time: 100 });
    expect(res).toMatchObject({ width: 320, height: 240, time: 0 });
  });
});
