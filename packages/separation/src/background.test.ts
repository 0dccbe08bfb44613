/**
 * planSeparation on real recordings (../shared/media), with the speech regions of the
 * two-speaker call's ground-truth RTTM (no VAD in this package): the clean call has no background,
 * the call over music-coffee at 10 dB speech-to-music has one (the model runs on spans around
 * the speech, the speech-free stretch is background as it is), music alone has no speech; with
 * no gaps to measure, the pauses between words decide (quiet: no model; music under them: the
 * model everywhere). The
 * thresholds were fitted on these and on jfk.wav; the pipeline test checks held-out recordings.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav, runFfmpeg, type PlanarAudio } from '@dub/media';
import { frameStats, mergeSpans, planSeparation, quietestShare, type TimeSpan } from './background.js';
import { planarSource } from './audio-io.js';
import { describeWithMedia, MEDIA_DIR } from '../../../test/support/media.js';

const MEDIA = MEDIA_DIR;

function rttmRegions(text: string): TimeSpan[] {
  return text.trim().split('\n').map((l) => l.split(/\s+/)).map((f) => ({ start: Number(f[3]), end: Number(f[3]) + Number(f[4]) }));
}

function rms(a: PlanarAudio): number {
  let s = 0;
  let n = 0;
  for (const c of a.channels) for (const v of c) (s += v * v), n++;
  return Math.sqrt(s / n);
}

describe('mergeSpans', () => {
  it('sorts, clips and joins spans closer than the join distance', () => {
    expect(mergeSpans([{ start: 5, end: 7 }, { start: -1, end: 1 }, { start: 7.5, end: 12 }], 1, 10)).toEqual([
      { start: 0, end: 1 },
      { start: 5, end: 10 },
    ]);
  });
});

describe('quietestShare', () => {
  it('the tenth percentile of the frames that overlap speech, the others left out', () => {
    // 30 frames of 0.1 s: speech over frames 5..24 (dB -1 .. -20), silence (-100) outside it
    const db = new Float32Array(30).fill(-100);
    for (let f = 5; f < 25; f++) db[f] = -(f - 4);
    // 20 speech frames: the quietest two are -20 and -19, the loudest of them -19
    expect(quietestShare(db, 0.1, [{ start: 0.5, end: 2.5 }])).toBe(-19);
    // a region reaching into a frame counts it; two regions, frames between them left out
    expect(quietestShare(db, 0.1, [{ start: 0.55, end: 0.65 }, { start: 2.45, end: 2.5 }])).toBe(-20);
    expect(quietestShare(db, 0.1, [])).toBeNull();
  });
});

/** Planar stereo: `pulse` seconds of a 150 Hz voiced buzz (harmonics to 3 kHz), then `pause` seconds of nothing, repeated for `seconds`. */
function syllables(seconds: number, pulse: number, pause: number, rate = 44100): PlanarAudio {
  const x = new Float32Array(Math.round(seconds * rate));
  const period = pulse + pause;
  for (let i = 0; i < x.length; i++) {
    const t = i / rate;
    const p = t % period;
    if (p >= pulse) continue;
    let v = 0;
    for (let h = 1; h <= 20; h++) v += Math.sin(2 * Math.PI * 150 * h * t) / h;
    x[i] = 0.1 * v * Math.sin((Math.PI * p) / pulse);
  }
  return { sampleRate: rate, channels: [x, x.slice()] };
}

describe('planSeparation: the pauses between words in short frames', () => {
  // 0.25 s syllables with 40 ms pauses between them: a 46 ms analysis frame always holds some
  // syllable, a ~12 ms frame fits inside a pause
  const everywhere = [{ start: 0, end: 8 }];
  it('clean speech without gaps: the short pauses rule a background out, no model runs', async () => {
    const audio = syllables(8, 0.25, 0.04);
    const plan = await planSeparation(audio, everywhere);
    expect(plan.measurement.gapSeconds).toBe(0);
    expect(plan.measurement.quietToSpeechDb!).toBeLessThan(-40);
    expect(plan.mode).toBe('none');
    // the 46 ms analysis frames alone would not have found the pauses
    const stats = await frameStats(planarSource(audio));
    expect(quietestShare(stats.db, stats.frameSeconds, everywhere)! - plan.measurement.speechLevelDb!).toBeGreaterThan(-30);
    expect(plan.reason).toMatch(/quietest 10% of the speech \(the pauses between words, in 11\.6 ms frames\)/);
  });
  it('a tone 25 dB under the speech fills the pauses: the model runs everywhere', async () => {
    const speech = syllables(8, 0.25, 0.04);
    const rate = speech.sampleRate;
    const power = speech.channels[0]!.reduce((s, v) => s + v * v, 0) / speech.channels[0]!.length;
    const a = Math.sqrt(2 * power * 10 ** (-25 / 10));
    const mixed = speech.channels.map((c) => c.map((v, i) => v + a * Math.sin((2 * Math.PI * 440 * i) / rate)));
    const plan = await planSeparation({ sampleRate: rate, channels: mixed }, everywhere);
    expect(plan.measurement.quietToSpeechDb!).toBeGreaterThan(-27);
    expect(plan.measurement.quietToSpeechDb!).toBeLessThan(-23);
    expect(plan.mode).toBe('full');
  });
});

describeWithMedia(['two-speakers-call.wav', 'music-coffee.wav'], 'planSeparation on real recordings', () => {
  let dir: string;
  let call: PlanarAudio;
  let music: PlanarAudio;
  let regions: TimeSpan[];

  const convert = async (name: string, seconds: number): Promise<PlanarAudio> => {
    const out = path.join(dir, `${name}.wav`);
    await runFfmpeg(['-i', path.join(MEDIA, `${name}.wav`), '-t', String(seconds), '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', out]);
    return readWav(out);
  };

  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'dub-background-'));
    call = await convert('two-speakers-call', 30);
    music = await convert('music-coffee', 60);
    regions = rttmRegions(await fsp.readFile(path.join(MEDIA, 'two-speakers-call.rttm'), 'utf8'));
  });
  afterAll(async () => {
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  });

  /** The call with `seconds` of speech-free music before it, music under it at `snrDb`. */
  const withMusic = (snrDb: number, leadSeconds: number): { audio: PlanarAudio; regions: TimeSpan[] } => {
    const lead = Math.round(leadSeconds * 44100);
    const n = call.channels[0]!.length + lead;
    const gain = rms(call) / rms(music) / 10 ** (snrDb / 20);
    const channels = [0, 1].map((c) => {
      const out = new Float32Array(n);
      const m = music.channels[c]!;
      const s = call.channels[c]!;
      for (let i = 0; i < n; i++) out[i] = gain * m[i % m.length]! + (i >= lead ? s[i - lead]! : 0);
      return out;
    });
    return { audio: { sampleRate: 44100, channels }, regions: regions.map((r) => ({ start: r.start + leadSeconds, end: r.end + leadSeconds })) };
  };

  it('clean speech: no background, no model, with the measurement that decided it', async () => {
    const plan = await planSeparation(call, regions);
    expect(plan.mode).toBe('none');
    expect(plan.background).toBe(false);
    expect(plan.spans).toEqual([]);
    expect(plan.modelSeconds).toBe(0);
    expect(plan.measurement.gapSeconds).toBeGreaterThan(1);
    expect(plan.measurement.gapToSpeechDb!).toBeLessThan(plan.thresholds.levelDb);
    expect(plan.reason).toMatch(/no background/);
  });

  it('speech over music: background, the model on the speech spans only', async () => {
    const { audio, regions: r } = withMusic(10, 20);
    const plan = await planSeparation(audio, r);
    expect(plan.background).toBe(true);
    expect(plan.mode).toBe('spans');
    expect(plan.measurement.gapToSpeechDb!).toBeGreaterThan(plan.thresholds.levelDb);
    // The 20 s music intro (less the padding) is left to the mix; the speech is all inside spans.
    expect(plan.spans[0]!.start).toBeGreaterThan(18);
    expect(plan.spans[0]!.start).toBeLessThan(r[0]!.start);
    for (const s of r) expect(plan.spans.some((p) => p.start <= s.start && p.end >= Math.min(s.end, audio.channels[0]!.length / 44100))).toBe(true);
    expect(plan.modelSeconds).toBeLessThan(35);
  });

  it('spanRegions (a more sensitive VAD) add spans; the measurement keeps the regions', async () => {
    const { audio, regions: r } = withMusic(10, 20);
    // The measured regions miss the last speaker turns; the sensitive ones have them.
    const heard = r.filter((x) => x.end < 40);
    const plain = await planSeparation(audio, heard);
    const sensitive = await planSeparation(audio, heard, { spanRegions: r });
    expect(sensitive.measurement).toEqual(plain.measurement);
    expect(plain.spans.at(-1)!.end).toBeLessThan(48);
    expect(sensitive.spans.at(-1)!.end).toBeCloseTo(50, 1);
    // plan.speech, what is replaced: the regions of both thresholds, merged (the missed turns included)
    expect(plain.speech).toEqual(mergeSpans(heard, 0, 50).map((x) => ({ start: Math.round(x.start * 1000) / 1000, end: Math.round(x.end * 1000) / 1000 })));
    expect(sensitive.speech.at(-1)!.end).toBeCloseTo(r.at(-1)!.end, 2);
    expect(sensitive.speech.length).toBeGreaterThan(plain.speech.length);
  });

  it('speech over music throughout: the model runs everywhere', async () => {
    const { audio, regions: r } = withMusic(10, 0);
    const plan = await planSeparation(audio, r);
    expect(plan.background).toBe(true);
    expect(plan.mode).toBe('full');
    expect(plan.spans).toEqual([{ start: 0, end: 30 }]);
  });

  it('too few gaps to measure: quiet pauses between words rule a background out, music under them does not', async () => {
    // speech everywhere as far as the regions say: no gap frames, the quietest tenth of the speech frames decides
    const everywhere = [{ start: 0, end: 30 }];
    const clean = await planSeparation(call, everywhere);
    expect(clean.measurement.gapSeconds).toBe(0);
    expect(clean.mode).toBe('none');
    expect(clean.background).toBe(false);
    expect(clean.measurement.quietToSpeechDb!).toBeLessThan(clean.thresholds.levelDb);
    expect(clean.reason).toMatch(/quietest 10% of the speech/);
    const { audio } = withMusic(10, 0);
    const music = await planSeparation(audio, everywhere);
    expect(music.measurement.gapSeconds).toBe(0);
    expect(music.mode).toBe('full');
    expect(music.measurement.quietToSpeechDb!).toBeGreaterThan(music.thresholds.levelDb);
    expect(music.reason).toMatch(/does not rule a background out: the model runs everywhere/);
  });

  it('music only: no speech, the mix is the background', async () => {
    const plan = await planSeparation(music, []);
    expect(plan.mode).toBe('none');
    expect(plan.background).toBe(true);
    expect(plan.measurement.speechLevelDb).toBeNull();
    expect(plan.measurement.gapLevelDb!).toBeGreaterThan(-40);
    expect(plan.speech).toEqual([]);
  });

  it('rejects a region that is not a time span', async () => {
    await expect(planSeparation(call, [{ start: 3, end: 1 }])).rejects.toMatchObject({ code: 'validation_error' });
  });
});
