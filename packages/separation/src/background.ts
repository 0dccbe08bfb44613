/**
 * Does the source have a background worth separating, and where? Measured before the model runs,
 * from the mix and the speech regions a VAD found in it:
 *
 * - frames (about 46 ms, Hann window) of the mono downmix give an energy (dBFS) and a spectral
 *   flatness (geometric over arithmetic mean of the power spectrum, 100 Hz - 8 kHz: near 1 for
 *   white noise, near 0 for tones and music);
 * - "gap" frames are those more than `margin` seconds from any speech region: what the recording
 *   holds when nobody speaks;
 * - the background is present when the gaps' median energy is within `levelDb` of the speech
 *   level (mean power of the speech frames) and above the absolute floor `floorDb`; broadband
 *   noise (median flatness >= `noiseFlatness`) must be louder (`noiseLevelDb`) than tonal content
 *   (music, effects) to count: a steady hiss or room tone under clean speech is not kept.
 *
 * The plan says where the model runs: nowhere when there is no background to separate (speech =
 * the mix, background = silence under speech) or no speech (speech = silence, background = the
 * mix), else on the speech
 * regions padded by `padding` and merged across speech-free stretches shorter than
 * `minPassthrough` (the model works in 7.8 s segments; a shorter gap saves little; half that at
 * the ends of the input), everywhere
 * when those spans cover nearly all of it. Outside the spans the mix is the background as it is.
 * Whatever the mode, `plan.speech` says where speech is: `separate` keeps the mix as the
 * background outside it (only speech is replaced; see keep-outside-speech.ts).
 */
import { ValidationError } from '@dub/core';
import { Fft, hannWindow, nextPow2, WavReader, type AudioSource, type PlanarAudio } from '@dub/media';
import { planarSource } from './audio-io.js';

export interface TimeSpan {
  /** Seconds. */
  start: number;
  end: number;
}

export interface BackgroundThresholds {
  /** Gap energy (median, dB) over the speech level above which the background counts (default -30). */
  levelDb: number;
  /** The same for broadband noise (flatness >= noiseFlatness; default -22). */
  noiseLevelDb: number;
  /** Median gap flatness from which the gaps are noise rather than music or effects (default 0.35). */
  noiseFlatness: number;
  /** Gap energy (median, dBFS) below which there is no background whatever the speech level (default -60). */
  floorDb: number;
  /** Seconds of gap frames needed to measure; less means "cannot tell" and the model runs everywhere (default 1). */
  minGapSeconds: number;
}

export interface BackgroundOptions extends Partial<BackgroundThresholds> {
  /**
   * Speech regions the spans are built from (default: the regions measured with). Give regions
   * of a more sensitive VAD threshold here: speech that the VAD barely hears under loud music
   * must still go through the model, or it would be lost from the speech track.
   */
  spanRegions?: readonly TimeSpan[];
  /** Seconds around each speech region left out of the gaps (default 0.3). */
  margin?: number;
  /** Seconds of context added on each side of a speech region the model runs on (default 1). */
  padding?: number;
  /** Speech-free stretches at least this long are background as-is, without the model (default 12). */
  minPassthrough?: number;
  /** When the spans cover at least this share of the input the model simply runs everywhere (default 0.85). */
  fullCoverage?: number;
}

export const DEFAULT_BACKGROUND_THRESHOLDS: BackgroundThresholds = {
  levelDb: -30,
  noiseLevelDb: -22,
  noiseFlatness: 0.35,
  floorDb: -60,
  minGapSeconds: 1,
};

export interface BackgroundMeasurement {
  /** Seconds of audio analysed. */
  duration: number;
  /** Seconds covered by the speech regions given. */
  speechSeconds: number;
  /** Seconds of gap frames (farther than `margin` from speech). */
  gapSeconds: number;
  /** Mean power of the speech frames, dBFS (null without speech). */
  speechLevelDb: number | null;
  /** Median energy of the gap frames, dBFS (null without gaps). */
  gapLevelDb: number | null;
  /** gapLevelDb - speechLevelDb (null when either is missing). */
  gapToSpeechDb: number | null;
  /** Median spectral flatness of the gap frames above the floor (null when none are). */
  gapFlatness: number | null;
  /** Median change of the band energies between consecutive gap frames, dB (null with fewer than two). */
  gapFlux: number | null;
  /**
   * The energy (dBFS) under which the quietest tenth of the speech frames lie (their 10th
   * percentile), in short frames (about 10 ms: QUIET_FRAME_SECONDS) that fit inside the pauses
   * between words and syllables. A background that runs under the speech
   * is at most this loud there. Decides when the gaps are too short to measure (`minGapSeconds`).
   */
  quietLevelDb: number | null;
  /** quietLevelDb - speechLevelDb (null when either is missing). */
  quietToSpeechDb: number | null;
  /** Median spectral flatness of the quietest tenth of the speech frames above the floor (null when none are). */
  quietFlatness: number | null;
}

/** Where the model runs: `none` (no background, or no speech), `spans`, or `full`. */
export type SeparationMode = 'none' | 'spans' | 'full';

export interface SeparationPlan {
  mode: SeparationMode;
  /** Whether the source has a background worth separating (decides `none`'s tracks: true = no speech, the mix is background; false = the mix is the speech track, and the background the mix outside speech). */
  background: boolean;
  /** `music` (tonal), `noise` (broadband), or null when there is none or it could not be told. */
  backgroundKind: 'music' | 'noise' | null;
  /** Why, in words. */
  reason: string;
  /** Where the model runs, seconds, sorted and disjoint; empty for `none`, the whole input for `full`. */
  spans: TimeSpan[];
  /** Seconds the model runs on (sum of spans). */
  modelSeconds: number;
  /**
   * The speech regions (seconds, sorted and disjoint: the VAD's regions and `spanRegions`
   * merged): only there is the source's audio replaced; outside them the background track is the
   * mix itself, whatever the mode (`separate` with this plan, `keepOutsideSpeech`).
   */
  speech: TimeSpan[];
  measurement: BackgroundMeasurement;
  thresholds: BackgroundThresholds;
}

interface FrameStats {
  frameSeconds: number;
  db: Float32Array;
  /** Seconds of the short frames (`shortDb`): the largest power-of-two sample count within QUIET_FRAME_SECONDS. */
  shortFrameSeconds: number;
  /** Energy (dBFS) of consecutive short frames of the mono downmix (no window), the frames above cut into equal parts. */
  shortDb: Float32Array;
  flatness: Float32Array;
  /** Mean absolute change (dB) of 12 band energies from the previous frame (0 for the first). */
  flux: Float32Array;
}

const BANDS = 12;
/** The share of the quietest frames whose loudest bounds a background running through the audio (`quietLevelDb`). */
const QUIET_SHARE = 0.1;
/**
 * At most this long, the frames the pauses between words are measured in (`quietLevelDb`): the
 * closures of stops and the pauses between words in connected speech last about 30-100 ms, so a
 * 46 ms analysis frame straddles them and is filled by the sounds on either side, where a frame
 * of ~10 ms fits inside one. A background that runs under the speech is as loud in short frames
 * as in long ones (only its level matters to the limits), so the limits stay as they are.
 */
const QUIET_FRAME_SECONDS = 0.0125;

const EPS = 1e-12;
const DIGITAL_SILENCE_DB = -100;

/** Energy (dBFS) and spectral flatness of consecutive frames of the mono downmix, read in windows. */
export async function frameStats(source: AudioSource): Promise<FrameStats> {
  const rate = source.sampleRate;
  const n = nextPow2(Math.round(rate * 0.046));
  const fft = new Fft(n);
  const win = hannWindow(n);
  const frames = Math.floor(source.frames / n);
  const db = new Float32Array(frames);
  let sub = 1;
  while (sub * 2 <= rate * QUIET_FRAME_SECONDS && sub * 2 <= n) sub *= 2;
  const parts = n / sub;
  const shortDb = new Float32Array(frames * parts);
  const toDb = (ms: number) => (ms > 0 ? Math.max(DIGITAL_SILENCE_DB, 10 * Math.log10(ms)) : DIGITAL_SILENCE_DB);
  const flatness = new Float32Array(frames);
  const flux = new Float32Array(frames);
  const edges = Array.from({ length: BANDS + 1 }, (_, b) => Math.round(((100 * (80 ** (b / BANDS))) * n) / rate));
  const bandDb = new Float64Array(BANDS);
  const prevDb = new Float64Array(BANDS);
  const lo = Math.max(1, Math.round((100 * n) / rate));
  const hi = Math.min(n >> 1, Math.round((8000 * n) / rate));
  const frame = new Float64Array(n);
  const power = new Float64Array((n >> 1) + 1);
  const perRead = Math.max(1, Math.floor((rate * 10) / n)); // ~10 s per read
  for (let f0 = 0; f0 < frames; f0 += perRead) {
    const count = Math.min(perRead, frames - f0);
    const block = await source.read(f0 * n, count * n);
    const chans = block.length;
    for (let f = 0; f < count; f++) {
      let sq = 0;
      let part = 0;
      for (let i = 0; i < n; i++) {
        let v = 0;
        for (let c = 0; c < chans; c++) v += block[c]![f * n + i]!;
        v /= chans;
        sq += v * v;
        part += v * v;
        frame[i] = v * win[i]!;
        if ((i + 1) % sub === 0) {
          shortDb[(f0 + f) * parts + (i + 1) / sub - 1] = toDb(part / sub);
          part = 0;
        }
      }
      db[f0 + f] = toDb(sq / n);
      fft.powerSpectrum(frame, power);
      let logSum = 0;
      let sum = 0;
      for (let k = lo; k < hi; k++) {
        const p = power[k]! + EPS;
        logSum += Math.log(p);
        sum += p;
      }
      const m = hi - lo;
      flatness[f0 + f] = m > 0 ? Math.exp(logSum / m) / (sum / m) : 0;
      let change = 0;
      for (let b = 0; b < BANDS; b++) {
        let e = 0;
        for (let k = Math.max(1, edges[b]!); k < Math.max(edges[b]! + 1, edges[b + 1]!) && k <= n >> 1; k++) e += power[k]!;
        bandDb[b] = 10 * Math.log10(e + EPS);
        change += Math.abs(bandDb[b]! - prevDb[b]!);
      }
      flux[f0 + f] = f0 + f === 0 ? 0 : change / BANDS;
      prevDb.set(bandDb);
    }
  }
  return { frameSeconds: n / rate, db, flatness, flux, shortFrameSeconds: sub / rate, shortDb };
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = values.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const r2 = (x: number | null) => (x === null ? null : Math.round(x * 100) / 100);
const r3 = (x: number) => Math.round(x * 1000) / 1000;

function checkRegions(regions: readonly TimeSpan[]): TimeSpan[] {
  const out: TimeSpan[] = [];
  for (const r of regions) {
    if (!Number.isFinite(r.start) || !Number.isFinite(r.end) || r.end < r.start) throw new ValidationError(`speech region [${r.start}, ${r.end}] is not a time span`, { field: 'speech' });
    if (r.end > r.start) out.push({ start: Math.max(0, r.start), end: r.end });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** Sorted spans, overlapping or closer than `join` merged, clipped to [0, duration]. */
export function mergeSpans(spans: readonly TimeSpan[], join: number, duration: number): TimeSpan[] {
  const out: TimeSpan[] = [];
  for (const s of spans.slice().sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, s.start);
    const end = Math.min(duration, s.end);
    if (end <= start) continue;
    const last = out[out.length - 1];
    if (last && start - last.end < join) last.end = Math.max(last.end, end);
    else out.push({ start, end });
  }
  return out;
}

/**
 * The energy (dB) under which the quietest QUIET_SHARE of the frames (`frameSeconds` long, from
 * 0) that overlap a speech region lie: their QUIET_SHARE percentile, the loudest of the quietest.
 * Null when no frame overlaps speech. `speech` sorted by start.
 */
export function quietestShare(db: Float32Array, frameSeconds: number, speech: readonly TimeSpan[]): number | null {
  const inSpeech: number[] = [];
  let r = 0;
  for (let f = 0; f < db.length; f++) {
    const a = f * frameSeconds;
    const b = a + frameSeconds;
    while (r < speech.length && speech[r]!.end <= a) r++;
    for (let k = r; k < speech.length && speech[k]!.start < b; k++) {
      if (speech[k]!.end > a) {
        inSpeech.push(db[f]!);
        break;
      }
    }
  }
  if (!inSpeech.length) return null;
  inSpeech.sort((x, y) => x - y);
  return inSpeech[Math.ceil(inSpeech.length * QUIET_SHARE) - 1]!;
}

/**
 * Measure the background of `input` (a WAV file, or planar audio) outside the speech `regions`
 * (seconds, from a VAD on the same audio) and plan where the model runs.
 */
export async function planSeparation(input: string | PlanarAudio, regions: readonly TimeSpan[], options: BackgroundOptions = {}): Promise<SeparationPlan> {
  const t: BackgroundThresholds = {
    levelDb: options.levelDb ?? DEFAULT_BACKGROUND_THRESHOLDS.levelDb,
    noiseLevelDb: options.noiseLevelDb ?? DEFAULT_BACKGROUND_THRESHOLDS.noiseLevelDb,
    noiseFlatness: options.noiseFlatness ?? DEFAULT_BACKGROUND_THRESHOLDS.noiseFlatness,
    floorDb: options.floorDb ?? DEFAULT_BACKGROUND_THRESHOLDS.floorDb,
    minGapSeconds: options.minGapSeconds ?? DEFAULT_BACKGROUND_THRESHOLDS.minGapSeconds,
  };
  const margin = options.margin ?? 0.3;
  const padding = options.padding ?? 1;
  const minPassthrough = options.minPassthrough ?? 12;
  const fullCoverage = options.fullCoverage ?? 0.85;
  for (const [k, v] of Object.entries({ margin, padding, minPassthrough, fullCoverage })) {
    if (!(Number.isFinite(v) && v >= 0)) throw new ValidationError(`${k} must be a non-negative number, got ${v}`, { field: k });
  }
  const speech = checkRegions(regions);

  let source: AudioSource;
  let reader: WavReader | undefined;
  if (typeof input === 'string') source = reader = await WavReader.open(input);
  else source = planarSource(input);
  let stats: FrameStats;
  try {
    stats = await frameStats(source);
  } finally {
    await reader?.close();
  }
  const duration = source.frames / source.sampleRate;

  // Frame classes: speech (overlaps a region), gap (farther than margin from every region), neither.
  const { frameSeconds, db, flatness } = stats;
  const speechDb: number[] = [];
  const speechFrames: number[] = [];
  const gapDb: number[] = [];
  const gapFlat: number[] = [];
  const gapFluxes: number[] = [];
  let prevGap = -2;
  let r = 0;
  for (let f = 0; f < db.length; f++) {
    const a = f * frameSeconds;
    const b = a + frameSeconds;
    while (r < speech.length && speech[r]!.end + margin <= a) r++;
    // regions r.. end after a - margin; the first of them decides both classes.
    let inSpeech = false;
    let nearSpeech = false;
    for (let k = r; k < speech.length && speech[k]!.start - margin < b; k++) {
      nearSpeech = true;
      if (speech[k]!.start < b && speech[k]!.end > a) inSpeech = true;
    }
    if (inSpeech) {
      speechDb.push(db[f]!);
      speechFrames.push(f);
    }
    else if (!nearSpeech) {
      gapDb.push(db[f]!);
      if (db[f]! > t.floorDb) {
        gapFlat.push(flatness[f]!);
        if (prevGap === f - 1) gapFluxes.push(stats.flux[f]!);
        prevGap = f;
      }
    }
  }
  const speechSeconds = speech.reduce((s, x) => s + (Math.min(duration, x.end) - Math.min(duration, x.start)), 0);
  const speechLevelDb = speechDb.length ? 10 * Math.log10(speechDb.reduce((s, d) => s + 10 ** (d / 10), 0) / speechDb.length + EPS) : null;
  const gapLevelDb = median(gapDb);
  const gapFlatness = median(gapFlat);
  const gapFlux = median(gapFluxes);
  const gapToSpeechDb = speechLevelDb !== null && gapLevelDb !== null ? gapLevelDb - speechLevelDb : null;
  const gapSeconds = gapDb.length * frameSeconds;
  // The quietest tenth of the speech frames (the pauses between words and syllables): a background
  // that runs under the speech is at most as loud as they are. Frames outside speech are left
  // out, so that a silent lead-in cannot pass for quiet pauses. The level is read in the short
  // frames (QUIET_FRAME_SECONDS) that fit inside a pause, the flatness (tonal or broadband) in
  // the quietest tenth of the analysis frames, whose spectrum resolves harmonics.
  const quietLevelDb = quietestShare(stats.shortDb, stats.shortFrameSeconds, speech);
  const order = speechFrames.slice().sort((x, y) => db[x]! - db[y]!);
  const quiet = order.slice(0, Math.ceil(order.length * QUIET_SHARE));
  const quietFlatness = median(quiet.filter((f) => db[f]! > t.floorDb).map((f) => flatness[f]!));
  const quietToSpeechDb = speechLevelDb !== null && quietLevelDb !== null ? quietLevelDb - speechLevelDb : null;
  const measurement: BackgroundMeasurement = {
    duration: r3(duration),
    speechSeconds: r3(speechSeconds),
    gapSeconds: r3(gapSeconds),
    speechLevelDb: r2(speechLevelDb),
    gapLevelDb: r2(gapLevelDb),
    gapToSpeechDb: r2(gapToSpeechDb),
    gapFlatness: gapFlatness === null ? null : Math.round(gapFlatness * 1e4) / 1e4,
    gapFlux: r2(gapFlux),
    quietLevelDb: r2(quietLevelDb),
    quietToSpeechDb: r2(quietToSpeechDb),
    quietFlatness: quietFlatness === null ? null : Math.round(quietFlatness * 1e4) / 1e4,
  };
  const spanSource = options.spanRegions ? checkRegions(options.spanRegions) : speech;
  const speechRegions = mergeSpans([...speech, ...spanSource], 0, duration).map((s) => ({ start: r3(s.start), end: r3(s.end) }));
  const plan = (mode: SeparationMode, background: boolean, kind: SeparationPlan['backgroundKind'], reason: string, spans: TimeSpan[]): SeparationPlan => ({
    mode,
    background,
    backgroundKind: kind,
    reason,
    spans: spans.map((s) => ({ start: r3(s.start), end: r3(s.end) })),
    modelSeconds: r3(spans.reduce((s, x) => s + x.end - x.start, 0)),
    speech: speechRegions,
    measurement,
    thresholds: t,
  });
  const all = duration > 0 ? [{ start: 0, end: duration }] : [];

  if (speech.length === 0 || speechLevelDb === null) {
    return plan('none', true, null, 'no speech was detected: the whole mix is background, the speech track is silence', []);
  }
  if (gapSeconds < t.minGapSeconds || gapLevelDb === null) {
    // Too little without speech to measure the gaps: the pauses between words decide when they
    // are quiet enough to rule a background out; else the model runs everywhere, as it would.
    const few = `only ${gapSeconds.toFixed(1)} s without speech (< ${t.minGapSeconds} s) to measure the background in`;
    if (quietLevelDb !== null && quietToSpeechDb !== null) {
      const quietKind = quietFlatness !== null && quietFlatness >= t.noiseFlatness ? 'noise' : 'music';
      const quietLimit = quietKind === 'noise' ? t.noiseLevelDb : t.levelDb;
      const measured = `the quietest ${100 * QUIET_SHARE}% of the speech (the pauses between words, in ${(1000 * stats.shortFrameSeconds).toFixed(1)} ms frames) ${quietLevelDb <= t.floorDb ? `at ${quietLevelDb.toFixed(1)} dBFS (floor ${t.floorDb})` : `${quietToSpeechDb.toFixed(1)} dB under the speech (${quietKind === 'noise' ? 'broadband' : 'tonal'}, flatness ${quietFlatness?.toFixed(2) ?? 'n/a'}; limit ${quietLimit} dB)`}`;
      if (quietLevelDb <= t.floorDb || quietToSpeechDb <= quietLimit) {
        return plan('none', false, null, `no background to separate: ${few}, ${measured}, so any background running under the speech is under the limit; no model runs, the speech track is the source, the background is the source outside speech`, []);
      }
      return plan('full', true, null, `${few}, and ${measured} does not rule a background out: the model runs everywhere`, all);
    }
    return plan('full', true, null, `${few}: the background cannot be measured, the model runs everywhere`, all);
  }
  const kind: 'music' | 'noise' = gapFlatness !== null && gapFlatness >= t.noiseFlatness ? 'noise' : 'music';
  const limit = kind === 'noise' ? t.noiseLevelDb : t.levelDb;
  const rel = gapToSpeechDb!;
  if (gapLevelDb <= t.floorDb || rel <= limit) {
    const why = gapLevelDb <= t.floorDb ? `gaps at ${gapLevelDb.toFixed(1)} dBFS (floor ${t.floorDb})` : `gaps ${rel.toFixed(1)} dB under the speech (${kind === 'noise' ? 'broadband' : 'tonal'}, flatness ${gapFlatness?.toFixed(2) ?? 'n/a'}; limit ${limit} dB)`;
    return plan('none', false, null, `no background to separate: ${why}; no model runs, the speech track is the source, the background is the source outside speech`, []);
  }
  const spans = mergeSpans(
    [...speech, ...spanSource].map((s) => ({ start: s.start - padding, end: s.end + padding })),
    minPassthrough,
    duration,
  );
  // A stretch at either end has one edge where an inner one has two: it is kept from the model from half the length.
  if (spans.length > 0) {
    if (spans[0]!.start < minPassthrough / 2) spans[0]!.start = 0;
    if (duration - spans[spans.length - 1]!.end < minPassthrough / 2) spans[spans.length - 1]!.end = duration;
  }
  const covered = spans.reduce((s, x) => s + x.end - x.start, 0);
  const what = `${kind === 'noise' ? 'noise' : 'music or effects'} ${rel.toFixed(1)} dB relative to the speech (flatness ${gapFlatness?.toFixed(2) ?? 'n/a'}; limit ${limit} dB)`;
  if (covered >= fullCoverage * duration) return plan('full', true, kind, `background: ${what}; speech spans cover ${((100 * covered) / duration).toFixed(0)}% of it, the model runs everywhere`, all);
  return plan('spans', true, kind, `background: ${what}; the model runs on ${spans.length} span(s) with speech (${covered.toFixed(1)} of ${duration.toFixed(1)} s), the rest is background as it is`, spans);
}
