/**
 * OpenVoice V2's tone-colour converter through its ONNX export (MIT): the speaker's tone colour
 * (a 256-d vector from the linear spectrogram of their reference speech) and the conversion of
 * any synthesized line to it, so espeak-ng or Piper speak with the speaker's timbre.
 *
 * The export (manifest id `openvoice-v2-tone-clone`, the model folder season-studio's
 * MeloTTS-ONNX loads): `configuration.json` (data.sampling_rate, filter_length, hop_length,
 * win_length), `tone_color_extract_model.onnx` (input float32[1,T,bins] -> tone, 256 values) and
 * `tone_clone_model.onnx` (audio float32[1,bins,T], audio_length int64[1], src_tone and dest_tone
 * float32[1,256,1], tau float32[1] -> float32[1,1,samples]); see
 * fixtures/openvoice-signature.json for the source. The spectrogram is the export's own: reflect
 * padding of (n_fft - hop) / 2, periodic Hann window, magnitude sqrt(re^2 + im^2 + 1e-6).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ModelError, resolveModelFile, ValidationError, type DeviceChoice, type Engine, type StageContext } from '@dub/core';
import { Fft, readWav, resample, writeWav, type PlanarAudio } from '@dub/media';
import { SessionCache, tensorF32, tensorI64, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import type { SynthesisRequest, TtsEngine } from '../types.js';

export const OPENVOICE_MODEL_ID = 'openvoice-v2-tone-clone';
export const OPENVOICE_FILES = { extract: 'tone_color_extract_model.onnx', clone: 'tone_clone_model.onnx', config: 'configuration.json' } as const;
/** Length of a tone colour vector. */
export const TONE_SIZE = 256;

export interface OpenVoiceConfig {
  sampleRate: number;
  nFft: number;
  hop: number;
  win: number;
}

export interface OpenVoiceOptions extends OnnxEngineOptions {
  /** Folder holding the three files (default: resolved as manifest id openvoice-v2-tone-clone). */
  dir?: string;
  /** Conversion strength (the export's tau, default 0.3). */
  tau?: number;
  tmpDir?: string;
}

export function readOpenVoiceConfig(file: string): OpenVoiceConfig {
  const j = JSON.parse(fs.readFileSync(file, 'utf8')) as { data?: Record<string, unknown> };
  const d = j.data ?? {};
  const num = (k: string): number => {
    const v = d[k];
    if (typeof v !== 'number' || !(v > 0)) throw new ModelError(`${file}: data.${k} must be a positive number`);
    return v;
  };
  const c = { sampleRate: num('sampling_rate'), nFft: num('filter_length'), hop: num('hop_length'), win: num('win_length') };
  if (c.win > c.nFft) throw new ModelError(`${file}: win_length ${c.win} exceeds filter_length ${c.nFft}`);
  return c;
}

/**
 * The export's linear magnitude spectrogram of mono `y`: frames x (nFft/2 + 1), frame-major.
 * (The window is win samples long, centred in an nFft frame when shorter.)
 */
export function openVoiceSpectrogram(y: Float32Array, c: OpenVoiceConfig): { frames: number; bins: number; data: Float32Array } {
  const pad = Math.floor((c.nFft - c.hop) / 2);
  if (y.length <= pad) throw new ValidationError(`audio of ${y.length} samples is too short for the tone-colour spectrogram (needs more than ${pad})`);
  const n = y.length + 2 * pad;
  const at = (i: number): number => {
    // numpy's reflect padding (the edge sample is not repeated)
    const j = i - pad;
    if (j < 0) return y[-j]!;
    if (j >= y.length) return y[2 * (y.length - 1) - j]!;
    return y[j]!;
  };
  const frames = Math.floor((n - c.nFft) / c.hop) + 1;
  const bins = c.nFft / 2 + 1;
  const win = new Float64Array(c.nFft);
  const off = Math.floor((c.nFft - c.win) / 2);
  for (let i = 0; i < c.win; i++) win[off + i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / c.win);
  const fft = new Fft(c.nFft);
  const re = new Float64Array(c.nFft);
  const im = new Float64Array(c.nFft);
  const data = new Float32Array(frames * bins);
  for (let f = 0; f < frames; f++) {
    for (let i = 0; i < c.nFft; i++) {
      re[i] = at(f * c.hop + i) * win[i]!;
      im[i] = 0;
    }
    fft.forward(re, im);
    for (let k = 0; k < bins; k++) data[f * bins + k] = Math.sqrt(re[k]! * re[k]! + im[k]! * im[k]! + 1e-6);
  }
  return { frames, bins, data };
}

/** Seconds of speech per piece a speaker's tone colour is averaged over (se_extractor.py split_seconds). */
export const TONE_PIECE_SECONDS = 10;

/** numpy's round: a half goes to the even neighbour (2.5 -> 2, 3.5 -> 4). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : r;
}

/**
 * The pieces a speaker's speech is cut into for its tone colour, as OpenVoice's reference does
 * (myshell-ai/OpenVoice openvoice/se_extractor.py, get_se -> split_audio_vad): round(duration /
 * 10 s) pieces with numpy's round (halves to even: 25 s gives 2, 15 s gives 2, 35 s gives 4), of
 * equal length duration / pieces, one after the other, the last ending at the clip's end; the
 * tone colour is then the mean of the pieces' (api.py ToneColorConverter.extract_se). The
 * reference refuses speech under 5 s (no piece); here it is one piece. It cuts at whole
 * milliseconds, here at samples. Its VAD step (silero, silences of 1 s or more removed) is not
 * repeated: a speaker's reference clip is already their VAD-confident speech. Returns [start,
 * end) sample ranges that cover `samples` exactly.
 */
export function tonePieces(samples: number, sampleRate: number, pieceSeconds = TONE_PIECE_SECONDS): { start: number; end: number }[] {
  if (!(samples > 0) || !(sampleRate > 0) || !(pieceSeconds > 0)) throw new ValidationError(`tone pieces need samples, a rate and a piece length above 0 (got ${samples}, ${sampleRate}, ${pieceSeconds})`);
  const k = Math.max(1, roundHalfEven(samples / sampleRate / pieceSeconds));
  return Array.from({ length: k }, (_, i) => ({ start: Math.floor((i * samples) / k), end: i === k - 1 ? samples : Math.floor(((i + 1) * samples) / k) }));
}

function checkInputs(model: OnnxModel, names: readonly string[], what: string): void {
  for (const n of names) if (!model.inputNames.includes(n)) throw new ModelError(`${model.path} is not an OpenVoice ${what}: it has no input "${n}" (inputs: ${model.inputNames.join(', ')})`);
}

export class ToneColorConverter implements Engine {
  private constructor(
    readonly config: OpenVoiceConfig,
    private readonly extractModel: OnnxModel,
    private readonly cloneModel: OnnxModel,
    private readonly sessions: SessionCache,
    private readonly ownSessions: boolean,
    readonly files: { extract: string; clone: string; config: string },
  ) {}

  /** The three files of the export (from `dir`, else the model resolver). */
  static files(o: OpenVoiceOptions = {}): { extract: string; clone: string; config: string } {
    if (o.dir) return { extract: path.join(o.dir, OPENVOICE_FILES.extract), clone: path.join(o.dir, OPENVOICE_FILES.clone), config: path.join(o.dir, OPENVOICE_FILES.config) };
    const r = { ...(o.modelsDir ? { modelsDir: o.modelsDir } : {}), ...(o.searchDirs ? { searchDirs: o.searchDirs } : {}) };
    return {
      extract: resolveModelFile(OPENVOICE_MODEL_ID, OPENVOICE_FILES.extract, r),
      clone: resolveModelFile(OPENVOICE_MODEL_ID, OPENVOICE_FILES.clone, r),
      config: resolveModelFile(OPENVOICE_MODEL_ID, OPENVOICE_FILES.config, r),
    };
  }

  static async load(o: OpenVoiceOptions = {}): Promise<ToneColorConverter> {
    const files = ToneColorConverter.files(o);
    const config = readOpenVoiceConfig(files.config);
    const sessions = o.sessions ?? new SessionCache({ ...(o.device ? { device: o.device } : {}), ...(o.threads ? { threads: o.threads } : {}) });
    const extract = await sessions.get(files.extract);
    const clone = await sessions.get(files.clone);
    checkInputs(extract, ['input'], 'tone-colour extractor');
    checkInputs(clone, ['audio', 'audio_length', 'src_tone', 'dest_tone', 'tau'], 'tone-colour converter');
    return new ToneColorConverter(config, extract, clone, sessions, !o.sessions, files);
  }

  /** The tone colour (256 values) of mono audio at the converter's rate. */
  async extractTone(y: Float32Array): Promise<Float32Array> {
    const s = openVoiceSpectrogram(y, this.config);
    const out = await this.extractModel.run({ input: tensorF32(s.data, [1, s.frames, s.bins]) });
    const t = out[this.extractModel.outputNames[0]!]!.data as Float32Array;
    if (t.length !== TONE_SIZE) throw new ModelError(`${this.extractModel.path}: the tone colour has ${t.length} values, expected ${TONE_SIZE}`);
    return Float32Array.from(t);
  }

  /** The mean tone colour of several clips (OpenVoice averages a speaker's segments). */
  async speakerTone(clips: readonly Float32Array[]): Promise<Float32Array> {
    if (!clips.length) throw new ValidationError('no clip to take a tone colour from');
    const sum = new Float32Array(TONE_SIZE);
    for (const c of clips) {
      const t = await this.extractTone(c);
      for (let i = 0; i < TONE_SIZE; i++) sum[i] += t[i]! / clips.length;
    }
    return sum;
  }

  /** A speaker's tone colour from their reference speech `y` (mono, converter's rate): the mean over its ~10 s pieces (tonePieces). */
  async referenceTone(y: Float32Array): Promise<Float32Array> {
    return this.speakerTone(tonePieces(y.length, this.config.sampleRate).map((p) => y.subarray(p.start, p.end)));
  }

  /** `y` (mono, converter's rate) spoken with the tone colour `dest`. */
  async convert(y: Float32Array, dest: ArrayLike<number>, tau = 0.3): Promise<Float32Array> {
    if (dest.length !== TONE_SIZE) throw new ValidationError(`a tone colour has ${TONE_SIZE} values, got ${dest.length}`);
    const src = await this.extractTone(y);
    const s = openVoiceSpectrogram(y, this.config);
    // [1, frames, bins] -> [1, bins, frames]
    const t = new Float32Array(s.data.length);
    for (let f = 0; f < s.frames; f++) for (let k = 0; k < s.bins; k++) t[k * s.frames + f] = s.data[f * s.bins + k]!;
    const out = await this.cloneModel.run({
      audio: tensorF32(t, [1, s.bins, s.frames]),
      audio_length: tensorI64(BigInt64Array.from([BigInt(s.frames)]), [1]),
      src_tone: tensorF32(src, [1, TONE_SIZE, 1]),
      dest_tone: tensorF32(Float32Array.from(dest), [1, TONE_SIZE, 1]),
      tau: tensorF32(Float32Array.from([tau]), [1]),
    });
    const wave = out[this.cloneModel.outputNames[0]!]!;
    return Float32Array.from(wave.data as Float32Array);
  }

  get provider(): 'cpu' | 'cuda' {
    return this.cloneModel.provider;
  }

  readonly id = 'openvoice';
  readonly label = 'OpenVoice V2 tone colour';

  async dispose(): Promise<void> {
    if (this.ownSessions) await this.sessions.disposeAll();
  }
}

/** Mono audio at `rate` (ffmpeg resampling through temporary files when the rates differ). */
async function atRate(audio: PlanarAudio, rate: number, tmpDir: string): Promise<Float32Array> {
  const x = audio.channels[0]!;
  if (audio.sampleRate === rate) return x;
  const dir = await fsp.mkdtemp(path.join(tmpDir, 'dub-openvoice-'));
  try {
    await writeWav(path.join(dir, 'in.wav'), { sampleRate: audio.sampleRate, channels: [x] }, { format: 'float32' });
    await resample(path.join(dir, 'in.wav'), path.join(dir, 'out.wav'), { sampleRate: rate, channels: 1, format: 'float32' });
    return (await readWav(path.join(dir, 'out.wav'))).channels[0]!;
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/**
 * `engine` with voice conversion: a request whose voice carries a `toneColor` is synthesized by
 * `engine`, then converted to that tone colour at the converter's rate (the wrapped engine's
 * sample rate becomes the converter's). Requests without one are converted to nothing and only
 * resampled.
 */
export function withToneConversion(engine: TtsEngine, converter: ToneColorConverter, o: { tau?: number; tmpDir?: string } = {}): TtsEngine {
  const rate = converter.config.sampleRate;
  const tmpDir = o.tmpDir ?? os.tmpdir();
  return {
    id: engine.id,
    label: `${engine.label} + ${converter.label}`,
    capabilities: { ...engine.capabilities, sampleRate: rate },
    supportsLocale: (locale) => engine.supportsLocale(locale),
    ...(engine.modelFile ? { modelFile: (locale: string) => engine.modelFile!(locale) } : {}),
    // the conversion keeps the length (same frames at the converter's rate)
    ...(engine.lengthUnits ? { lengthUnits: (request: Pick<SynthesisRequest, 'text' | 'locale' | 'voice'>, ctx: StageContext) => engine.lengthUnits!(request, ctx) } : {}),
    async synthesize(request: SynthesisRequest, ctx: StageContext): Promise<PlanarAudio> {
      const audio = await engine.synthesize(request, ctx);
      const y = await atRate(audio, rate, tmpDir);
      const tone = request.voice.toneColor;
      if (!tone || y.length <= converter.config.nFft) return { sampleRate: rate, channels: [y] };
      return { sampleRate: rate, channels: [await converter.convert(y, tone, o.tau ?? 0.3)] };
    },
    async dispose() {
      await engine.dispose();
      await converter.dispose();
    },
  };
}
