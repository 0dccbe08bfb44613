/**
 * Spleeter 2-stems (Deezer; code and pretrained models MIT) as k2-fsa/sherpa-onnx exported it to
 * ONNX (scripts/spleeter/export_onnx.py): two U-Nets, `vocals.onnx` and `accompaniment.onnx`, each
 * taking the magnitude spectrogram x f32[2 (channels), splits, 512 (frames), 1024 (bins)] of a
 * stereo 44.1 kHz mix and returning its estimate of that stem's magnitudes y of the same shape
 * (sigmoid mask times x). The STFT, the masks and the iSTFT run here (dsp/spleeter-spectrogram.ts),
 * as sherpa-onnx's runtime does them (offline-source-separation-spleeter-impl.h):
 *
 *   mask_vocals = (y_vocals^2 + eps/2) / (y_vocals^2 + y_accompaniment^2 + eps),  eps = 1e-10
 *
 * applied to the mix's complex STFT (bins 0..1023; the bins above, up to 22 kHz, get 0 as in
 * Spleeter's "zeros" mask extension), then the iSTFT: that is the speech track. The background is
 * the mix minus the speech: below 11 kHz that is exactly Spleeter's accompaniment (its mask is 1 -
 * mask_vocals), and above 11 kHz, where Spleeter's two stems both drop everything, the background
 * keeps the mix, so speech + background = mix and nothing of the source is lost under the dub.
 *
 * One split of 512 frames per run (11.82 s of audio, the segment zero-padded by 3072 samples each
 * side); long audio goes through the same streaming overlap-add as HTDemucs (SegmentRunner, overlap
 * 0.1 by default), where sherpa-onnx cuts the whole spectrogram into consecutive 512-frame splits.
 * Weights: models/manifest.json entry `spleeter-2stems`; sessions through @dub/onnx (onnxruntime's
 * `run` works off the event loop), outputs written into pre-allocated tensors.
 */
import { ModelError, resolveModelFile, type StageContext } from '@dub/core';
import { SessionCache, tensorF32, type OnnxModel } from '@dub/onnx';
import { SpleeterSpectrogram } from '../dsp/spleeter-spectrogram.js';
import type { ResolvedEngineOptions } from '../options.js';
import { SegmentedSeparationEngine } from '../segmented-engine.js';
import { StereoSegmentModel } from '../segment-runner.js';
import type { SeparationEngine } from '../types.js';

export const SPLEETER_MODEL_ID = 'spleeter-2stems';
export const SPLEETER_VOCALS_FILE = 'vocals.onnx';
export const SPLEETER_ACCOMPANIMENT_FILE = 'accompaniment.onnx';
export const SPLEETER_SAMPLE_RATE = 44100;
/** sherpa-onnx's (and Spleeter's) EPSILON of the ratio masks. */
export const SPLEETER_EPS = 1e-10;

type Tensor = ReturnType<typeof tensorF32>;

/** One stem's graph: its single 4-D float input and output, checked against the export (x, y). */
export interface SpleeterStemGraph {
  readonly path: string;
  readonly provider: string;
  readonly input: string;
  readonly output: string;
  run(feeds: Record<string, Tensor>, fetches: Record<string, Tensor>): Promise<void>;
}

/** The stem graph of a session, refused with a clear error when it is not a Spleeter export (one 4-D float input, one 4-D float output). */
export function stemGraph(model: OnnxModel, stem: string): SpleeterStemGraph {
  const meta = (list: readonly unknown[] | undefined, name: string) => (list as { name: string; isTensor: boolean; type?: string; shape?: readonly unknown[] }[] | undefined)?.find((m) => m.name === name);
  const ins = model.inputNames;
  const outs = model.outputNames;
  const i = ins.length === 1 ? meta(model.session.inputMetadata, ins[0]!) : undefined;
  const o = outs.length === 1 ? meta(model.session.outputMetadata, outs[0]!) : undefined;
  const ok = (m: typeof i) => m !== undefined && m.isTensor && m.type === 'float32' && (m.shape?.length ?? 0) === 4;
  if (!ok(i) || !ok(o)) {
    throw new ModelError(`${model.path} is not a Spleeter ${stem} graph (sherpa-onnx export): expected one float32 input x [2, splits, 512, 1024] and one float32 output y of that shape, got inputs [${ins.join(', ')}] and outputs [${outs.join(', ')}]`);
  }
  return {
    path: model.path,
    provider: model.provider,
    input: ins[0]!,
    output: outs[0]!,
    run: async (feeds, fetches) => {
      await model.session.run(feeds, fetches);
    },
  };
}

export class SpleeterModel extends StereoSegmentModel {
  private readonly stft: SpleeterSpectrogram;
  private readonly magnitude: Float32Array;
  private readonly vocalsOut: Float32Array;
  private readonly accompanimentOut: Float32Array;
  private readonly mask: Float32Array;
  /** The two stem graphs in the order they run, each with its feeds (the shared magnitude) and fetches. */
  private readonly stems: readonly { graph: SpleeterStemGraph; feeds: Record<string, Tensor>; fetches: Record<string, Tensor> }[];

  constructor(vocals: SpleeterStemGraph, accompaniment: SpleeterStemGraph, stft = new SpleeterSpectrogram()) {
    super(stft.length, SPLEETER_SAMPLE_RATE);
    this.stft = stft;
    this.magnitude = new Float32Array(stft.size);
    this.vocalsOut = new Float32Array(stft.size);
    this.accompanimentOut = new Float32Array(stft.size);
    this.mask = new Float32Array(stft.size);
    const dims = [2, 1, stft.frames, stft.bins];
    const x = tensorF32(this.magnitude, dims);
    this.stems = [
      { graph: vocals, feeds: { [vocals.input]: x }, fetches: { [vocals.output]: tensorF32(this.vocalsOut, dims) } },
      { graph: accompaniment, feeds: { [accompaniment.input]: x }, fetches: { [accompaniment.output]: tensorF32(this.accompanimentOut, dims) } },
    ];
  }

  async run(): Promise<void> {
    const [in0, in1] = this.input;
    this.stft.forward(in0, in1, this.magnitude);
    // One after the other: each run already uses every intra-op thread.
    for (const { graph, feeds, fetches } of this.stems) {
      try {
        await graph.run(feeds, fetches);
      } catch (e) {
        throw new ModelError(`Spleeter inference failed (${graph.path}, provider ${graph.provider}): ${(e as Error).message}`, { cause: e, retryable: true });
      }
    }
    spleeterMask(this.vocalsOut, this.accompanimentOut, this.mask);
    const [sp0, sp1] = this.speech;
    this.stft.inverse(this.mask, 0, sp0, sp1);
    const [bg0, bg1] = this.background;
    for (let j = 0; j < this.segment; j++) {
      bg0[j] = in0[j]! - sp0[j]!;
      bg1[j] = in1[j]! - sp1[j]!;
    }
  }
}

/** sherpa-onnx's ratio mask of the vocals from both stems' magnitude estimates, element by element, into `out`. */
export function spleeterMask(vocals: Float32Array, accompaniment: Float32Array, out: Float32Array): void {
  for (let i = 0; i < out.length; i++) {
    const v = vocals[i]! * vocals[i]!;
    const a = accompaniment[i]! * accompaniment[i]!;
    out[i] = (v + SPLEETER_EPS / 2) / (v + a + SPLEETER_EPS);
  }
}

/** An engine over the two stem graphs of `spleeter-2stems` (both files resolved from the manifest entry). */
export async function createEngine(options: ResolvedEngineOptions, ctx: StageContext): Promise<SeparationEngine> {
  const models = options.modelsDir ? { modelsDir: options.modelsDir } : {};
  const vocalsFile = resolveModelFile(SPLEETER_MODEL_ID, SPLEETER_VOCALS_FILE, models);
  const accompanimentFile = resolveModelFile(SPLEETER_MODEL_ID, SPLEETER_ACCOMPANIMENT_FILE, models);
  const owned = options.sessions === undefined;
  const sessions = options.sessions ?? new SessionCache({ logger: ctx.logger });
  const sessionOptions = { device: options.device, threads: options.threads, cpuMemArena: options.cpuMemArena, memPattern: options.memPattern, logger: ctx.logger };
  let model: SpleeterModel;
  try {
    const vocals = stemGraph(await sessions.get(vocalsFile, sessionOptions), 'vocals');
    const accompaniment = stemGraph(await sessions.get(accompanimentFile, sessionOptions), 'accompaniment');
    model = new SpleeterModel(vocals, accompaniment);
    ctx.logger.info({ engine: SPLEETER_MODEL_ID, vocals: vocalsFile, accompaniment: accompanimentFile, provider: vocals.provider, threads: options.threads, segment: model.segment }, 'spleeter separation engine ready');
  } catch (e) {
    if (owned) await sessions.disposeAll();
    throw e;
  }
  return new SegmentedSeparationEngine(SPLEETER_MODEL_ID, model, options, owned ? () => sessions.disposeAll() : () => Promise.resolve(), 'Spleeter 2-stems');
}
