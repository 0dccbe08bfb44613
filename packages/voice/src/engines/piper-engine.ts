/**
 * Piper (VITS) voices on onnxruntime: espeak-ng phonemes -> ids -> model -> 16-bit-range float
 * audio at the voice's sample rate (22.05 kHz for "medium" voices), each sentence peak-normalised
 * as Piper itself does. Inputs: `input` int64[1,N],
 * `input_lengths` int64[1], `scales` float32[3] = (noise, length, noise_w), and `sid` int64[1]
 * for multi-speaker voices; output `output` float32[1,1,1,T] (read flat). Speed maps to
 * length_scale = base / speed; pitch is the voice's own. Signature: fixtures/piper-signature.json.
 */
import path from 'node:path';
import { getLocale, resolveModelFile, throwIfAborted, ValidationError, type DeviceChoice, type StageContext } from '@dub/core';
import { SessionCache, tensorF32, tensorI64, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import type { PlanarAudio } from '@dub/media';
import type { SynthesisRequest, TtsCapabilities, TtsEngine } from '../types.js';
import { joinPieces } from './pieces.js';
import { loadPiperConfig, type PiperVoiceConfig } from './piper-config.js';
import { phonemeIds, phonemize } from './piper-phonemes.js';

import { PIPER_DEFAULT_VOICES } from './piper-voices.js';
export { PIPER_DEFAULT_VOICES };

export interface PiperEngineOptions extends OnnxEngineOptions {
  /** Voice per contract locale (voice names, or absolute paths of .onnx files). */
  voices?: Record<string, string>;
  espeakPath?: string;
  /** Silence between sentences in seconds (default 0.2). */
  sentenceSilence?: number;
}

interface LoadedVoice {
  config: PiperVoiceConfig;
  model: OnnxModel;
}

export class PiperEngine implements TtsEngine {
  readonly id = 'piper';
  readonly label = 'Piper';
  readonly capabilities: TtsCapabilities = { rateControl: true, pitchControl: false, sampleRate: 22050 };
  private readonly sessions: SessionCache;
  private readonly ownSessions: boolean;
  private readonly voices: Record<string, string>;
  private readonly loaded = new Map<string, Promise<LoadedVoice>>();

  constructor(private readonly opts: PiperEngineOptions = {}) {
    this.ownSessions = !opts.sessions;
    this.sessions = opts.sessions ?? new SessionCache({ ...(opts.device ? { device: opts.device } : {}), ...(opts.threads ? { threads: opts.threads } : {}) });
    this.voices = { ...PIPER_DEFAULT_VOICES, ...opts.voices };
  }

  /** Absolute paths of a voice's model and config. */
  voiceFiles(voice: string): { model: string; config: string } {
    if (path.isAbsolute(voice)) return { model: voice, config: `${voice}.json` };
    const id = `piper-${voice}`;
    const r = { ...(this.opts.modelsDir ? { modelsDir: this.opts.modelsDir } : {}), ...(this.opts.searchDirs ? { searchDirs: this.opts.searchDirs } : {}) };
    return { model: resolveModelFile(id, `${voice}.onnx`, r), config: resolveModelFile(id, `${voice}.onnx.json`, r) };
  }

  modelFile(locale: string): string | undefined {
    const voice = this.voices[locale];
    if (!voice) return undefined;
    try {
      return this.voiceFiles(voice).model;
    } catch {
      return undefined;
    }
  }

  private voiceFor(request: SynthesisRequest): string {
    const v = request.voice.model ?? this.voices[request.locale];
    if (!v) throw new ValidationError(`no Piper voice configured for ${request.locale}`, { field: 'locale' });
    return v;
  }

  private load(voice: string, ctx: StageContext): Promise<LoadedVoice> {
    let p = this.loaded.get(voice);
    if (!p) {
      p = (async () => {
        const files = this.voiceFiles(voice);
        const config = await loadPiperConfig(files.config);
        const model = await this.sessions.get(files.model, { logger: ctx.logger });
        for (const name of ['input', 'input_lengths', 'scales']) {
          if (!model.inputNames.includes(name)) throw new ValidationError(`${files.model} is not a Piper voice: it has no input "${name}"`);
        }
        return { config, model };
      })();
      this.loaded.set(voice, p);
      p.catch(() => {
        if (this.loaded.get(voice) === p) this.loaded.delete(voice);
      });
    }
    return p;
  }

  async supportsLocale(locale: string): Promise<boolean> {
    const voice = this.voices[locale];
    if (!voice || !getLocale(locale)) return false;
    try {
      this.voiceFiles(voice);
      return true;
    } catch {
      return false;
    }
  }

  async synthesize(request: SynthesisRequest, ctx: StageContext): Promise<PlanarAudio> {
    throwIfAborted(ctx.signal);
    const voice = this.voiceFor(request);
    const { config, model } = await this.load(voice, ctx);
    const text = request.text.trim();
    if (text === '') return { sampleRate: config.sampleRate, channels: [new Float32Array(0)] };
    const sentences = await phonemize(text, config.espeakVoice, ctx, this.opts.espeakPath);
    const gap = new Float32Array(Math.round((this.opts.sentenceSilence ?? 0.2) * config.sampleRate));
    const speed = request.speed > 0 ? request.speed : 1;
    const scales = new Float32Array([config.noiseScale, config.lengthScale / speed, config.noiseW]);
    const pieces: Float32Array[] = [];
    for (const s of sentences) {
      const { ids, missing } = phonemeIds(s.phonemes, config);
      if (missing.length) ctx.logger.debug({ voice, missing }, 'phonemes without id skipped');
      const feeds: Record<string, ReturnType<typeof tensorF32>> = {
        input: tensorI64(BigInt64Array.from(ids, (x) => BigInt(x)), [1, ids.length]),
        input_lengths: tensorI64(BigInt64Array.from([BigInt(ids.length)]), [1]),
        scales: tensorF32(scales, [3]),
      };
      if (model.inputNames.includes('sid')) {
        const sid = request.voice.speakerId ?? 0;
        if (sid < 0 || sid >= Math.max(1, config.numSpeakers)) throw new ValidationError(`speaker id ${sid} out of range for ${voice} (${config.numSpeakers} speakers)`);
        feeds.sid = tensorI64(BigInt64Array.from([BigInt(sid)]), [1]);
      }
      const out = await model.run(feeds);
      const t = out[model.outputNames[0]!]!;
      if (pieces.length) pieces.push(gap);
      pieces.push(peakNormalize(Float32Array.from(t.data as Float32Array)));
    }
    return joinPieces(pieces, config.sampleRate, request.voice.timbre);
  }

  async dispose(): Promise<void> {
    const all = [...this.loaded.values()];
    this.loaded.clear();
    if (this.ownSessions) await this.sessions.disposeAll();
    else for (const p of all) await p.then((v) => this.sessions.release(v.model.path), () => undefined);
  }
}

export function createPiperEngine(opts: PiperEngineOptions = {}): PiperEngine {
  return new PiperEngine(opts);
}

/** Scale to a 0.9 peak (Piper scales every sentence to full range the same way). */
function peakNormalize(x: Float32Array): Float32Array {
  let peak = 0;
  for (const v of x) peak = Math.max(peak, Math.abs(v));
  const g = 0.9 / Math.max(0.01, peak);
  for (let i = 0; i < x.length; i++) x[i] = x[i]! * g;
  return x;
}
