/**
 * ONNX session cache. Sessions are created once per (model file, provider, threads), memoized as
 * promises (a failed load is evicted so the next call retries), released idempotently, and all
 * disposed by `disposeAll()`. Execution providers: `cuda` first when asked for and loadable, then
 * `cpu`. Feeds are checked against the model's input names, and a failed run reports the shapes.
 *
 * onnxruntime-node's run() does its work in native code; the worker daemon calls stages from a
 * worker thread so its event loop keeps talking to NATS.
 */
import type * as ortTypes from 'onnxruntime-node';
import { createRequire } from 'node:module';
import { convIntegerModelFile, derivedModelsDir } from './conv-integer.js';
import { graphOutputsModelFile, graphOutputsTrimmed } from './graph-outputs.js';
import { dequantizedMatMulDynamic, dequantizedMatMulModelFile, dequantizedMatMulNote } from './dequant-matmul.js';
import { createThroughOptimizedGraph, optimizedGraphsOn } from './optimized-graph.js';
import { ModelError, retryingOnce, silentLogger, ValidationError, type DeviceChoice, type Logger, type SessionStore, type StageContext } from '@dub/core';

const require_ = createRequire(import.meta.url);
type Ort = typeof ortTypes;
let ortModule: Ort | undefined;
/** onnxruntime-node, loaded on first use so importing a stage does not load the native binding. */
export function ort(): Ort {
  ortModule ??= require_('onnxruntime-node') as Ort;
  return ortModule;
}

export type Provider = 'cpu' | 'cuda';

export interface SessionOptions {
  device?: DeviceChoice;
  /** Intra-op threads (0 = onnxruntime's default). */
  threads?: number;
  /**
   * onnxruntime's CPU memory arena (default true). Large models with big activations (HTDemucs)
   * keep several GB in the arena; without it memory goes back after each run.
   */
  cpuMemArena?: boolean;
  /**
   * onnxruntime's memory pattern (default true): one block planned for all of a run's activations.
   * Off, each activation is allocated when produced and freed after its last use: HTDemucs on CPU
   * then peaks ~0.3 GB lower in about the same time, but the freed blocks stay in the C heap.
   */
  memPattern?: boolean;
  /**
   * On the CPU, load the model with its 1-D ConvInteger nodes rewritten as MatMulInteger with
   * int8 weights packed once (conv-integer.ts): the same integer sums, bit-identical output, and
   * Kokoro-82M int8 in 43% of the CPU time.
   */
  convIntegerAsMatMul?: boolean;
  /**
   * Load the model with only these graph outputs (graph-outputs.ts): onnxruntime keeps every graph
   * output of a run until it returns, read or not; dropped from the list, such a tensor is an
   * intermediate, freed after its last use. The kept outputs are computed as before, bit for bit.
   * `DUB_ONNX_GRAPH_OUTPUTS=all` loads every model as shipped instead.
   */
  outputs?: readonly string[];
  /**
   * Load the model with each MatMul on a DequantizeLinear of 8-bit weights as DynamicQuantizeMatMul
   * (dequant-matmul.ts): the weights are packed once instead of dequantized on every run (Whisper's
   * decoder step 13-15 ms -> 6 ms here); the activations are quantized as the export's other MatMuls.
   * `DUB_ONNX_DEQUANT_MATMUL=float` loads the model as shipped.
   */
  dequantizedMatMul?: boolean;
  logger?: Logger;
}

export interface OnnxModel {
  readonly path: string;
  readonly provider: Provider;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly session: ortTypes.InferenceSession;
  /**
   * How the model runs other than as shipped, where that changes its numbers (a rewrite that is not
   * bit for bit the same: SessionOptions.dequantizedMatMul), one line each; absent when it runs as shipped.
   */
  readonly runAs?: readonly string[];
  /**
   * Run the model. `outputs`: the outputs to return (default every one). Exports that also output
   * what the caller never reads (Whisper's encoder: six [1, 8, 1500, 1500] attention maps, 432 MB
   * copied into JS per 30 s window; its decoder: the encoder keys and values on every step) should
   * name the ones they read.
   */
  run(feeds: Record<string, ortTypes.Tensor>, outputs?: readonly string[]): Promise<Record<string, ortTypes.Tensor>>;
}

/** A fixed size the model declares for dimension `i` of its input or output `name` (its session's metadata); undefined where symbolic or not declared. */
export function declaredDim(model: OnnxModel, io: 'input' | 'output', name: string, i: number): number | undefined {
  const all = (model.session as unknown as Record<string, unknown>)[io === 'input' ? 'inputMetadata' : 'outputMetadata'];
  const meta = Array.isArray(all) ? (all as { name: string; shape?: readonly unknown[] }[]).find((m) => m.name === name) : undefined;
  const d = meta?.shape?.[i];
  return typeof d === 'number' && d > 0 ? d : undefined;
}

/**
 * The KV cache of a merged decoder (Hugging Face optimum exports: Whisper, M2M100): its layers
 * (the past_key_values.N.decoder.key inputs) and the heads and head size its first key declares
 * (undefined where symbolic: the caller falls back to what it knows of the model).
 */
export function kvCacheLayout(decoder: OnnxModel): { layers: number; heads: number | undefined; headDim: number | undefined } {
  const layers = decoder.inputNames.filter((n) => /^past_key_values\.\d+\.decoder\.key$/.test(n)).length;
  const key = 'past_key_values.0.decoder.key';
  return { layers, heads: declaredDim(decoder, 'input', key, 1), headDim: declaredDim(decoder, 'input', key, 3) };
}

/**
 * The next step's past_key_values of a merged decoder from its outputs: every layer's present
 * decoder keys and values, and the encoder ones from `encoderPast` where given (the cache branch
 * passes them through; the caller keeps those it fed), else from the outputs (the first step).
 */
export function nextKvCache(out: Record<string, ortTypes.Tensor>, layers: number, encoderPast?: Record<string, ortTypes.Tensor>): Record<string, ortTypes.Tensor> {
  const next: Record<string, ortTypes.Tensor> = {};
  for (let l = 0; l < layers; l++) {
    for (const kind of ['key', 'value'] as const) {
      const dec = out[`present.${l}.decoder.${kind}`];
      if (!dec) throw new ModelError(`decoder returned no present.${l}.decoder.${kind}`);
      next[`past_key_values.${l}.decoder.${kind}`] = dec;
      const enc = encoderPast?.[`past_key_values.${l}.encoder.${kind}`] ?? out[`present.${l}.encoder.${kind}`];
      if (!enc) throw new ModelError(`decoder returned no present.${l}.encoder.${kind}`);
      next[`past_key_values.${l}.encoder.${kind}`] = enc;
    }
  }
  return next;
}

function describeFeeds(feeds: Record<string, ortTypes.Tensor>): string {
  return Object.entries(feeds).map(([k, t]) => `${k}: ${t.type}[${t.dims.join(',')}]`).join(', ');
}

class Model implements OnnxModel {
  readonly runAs?: readonly string[];
  constructor(readonly path: string, readonly provider: Provider, readonly session: ortTypes.InferenceSession, runAs: readonly string[] = []) {
    if (runAs.length) this.runAs = runAs;
  }
  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }
  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }
  async run(feeds: Record<string, ortTypes.Tensor>, outputs?: readonly string[]): Promise<Record<string, ortTypes.Tensor>> {
    const missing = this.inputNames.filter((n) => !(n in feeds));
    const extra = Object.keys(feeds).filter((n) => !this.inputNames.includes(n));
    if (missing.length || extra.length) {
      throw new ModelError(
        `feeds do not match model ${this.path}: expected inputs [${this.inputNames.join(', ')}]` +
          (missing.length ? `, missing [${missing.join(', ')}]` : '') +
          (extra.length ? `, unexpected [${extra.join(', ')}]` : '') +
          `; given ${describeFeeds(feeds)}`,
        { details: { missing, extra } },
      );
    }
    try {
      return (await (outputs ? this.session.run(feeds, outputs) : this.session.run(feeds))) as Record<string, ortTypes.Tensor>;
    } catch (e) {
      throw new ModelError(`inference failed for ${this.path} with feeds ${describeFeeds(feeds)}: ${(e as Error).message}`, { cause: e });
    }
  }
}

/**
 * ONNX Runtime's own log threshold for new sessions: errors only (3), unless the process logs at
 * debug or trace (`DUB_LOG_LEVEL`, `--verbose`), where its warnings (2) are shown too.
 */
export function onnxLogSeverity(env: NodeJS.ProcessEnv = process.env): 0 | 1 | 2 | 3 | 4 {
  const level = (env.DUB_LOG_LEVEL ?? '').toLowerCase();
  return level === 'debug' || level === 'trace' ? 2 : 3;
}

const SPINNING_DEFAULT = true;

/**
 * Whether onnxruntime's intra-op and inter-op thread pools spin while waiting for work
 * (`session.intra_op.allow_spinning`, `session.inter_op.allow_spinning`): `DUB_ONNX_SPINNING`,
 * `1`/`on` (the default, onnxruntime's own) spin, `0`/`off` park the threads instead. Spinning
 * threads busy-wait between ops for the next one; on a small machine shared with ffmpeg, espeak-ng
 * and the other stages that could take CPU time from them, but parking them measured no lower CPU
 * time here (packages/onnx/README.md has the figures), so the default stays onnxruntime's.
 */
export function onnxSpinning(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.DUB_ONNX_SPINNING ?? '').trim().toLowerCase();
  if (v === '') return SPINNING_DEFAULT;
  if (v === '1' || v === 'on' || v === 'true' || v === 'yes') return true;
  if (v === '0' || v === 'off' || v === 'false' || v === 'no') return false;
  throw new RangeError(`DUB_ONNX_SPINNING must be 1/on or 0/off, got "${env.DUB_ONNX_SPINNING}"`);
}

/**
 * Check the DUB_ONNX_* settings read when a model loads (DUB_ONNX_SPINNING,
 * DUB_ONNX_OPTIMIZED_GRAPHS, DUB_ONNX_GRAPH_OUTPUTS, DUB_ONNX_DEQUANT_MATMUL), so that a command
 * refuses a bad value at start (ValidationError: `dub` exits 2 with one line) rather than fail
 * each job at its first model. DUB_ONNX_THREADS is @dub/core's loadConfig's.
 */
export function checkOnnxEnv(env: NodeJS.ProcessEnv = process.env): void {
  const checks: [string, (e: NodeJS.ProcessEnv) => unknown][] = [
    ['DUB_ONNX_SPINNING', onnxSpinning],
    ['DUB_ONNX_OPTIMIZED_GRAPHS', optimizedGraphsOn],
    ['DUB_ONNX_GRAPH_OUTPUTS', graphOutputsTrimmed],
    ['DUB_ONNX_DEQUANT_MATMUL', dequantizedMatMulDynamic],
  ];
  for (const [field, check] of checks) {
    try {
      check(env);
    } catch (e) {
      throw new ValidationError((e as Error).message, { field });
    }
  }
}

export class SessionCache implements SessionStore {
  private readonly entries = new Map<string, Promise<OnnxModel>>();
  /** Provider each model got, for the worker's start-up log. */
  readonly providers = new Map<string, Provider>();
  /** How each model runs other than as shipped, where it does (OnnxModel.runAs), for its engine record. */
  readonly runAs = new Map<string, readonly string[]>();

  constructor(private readonly defaults: SessionOptions = {}) {}

  private key(file: string, device: DeviceChoice, threads: number, arena: boolean, pattern: boolean, convAsMatMul = false, outputs?: readonly string[], dqmm = false): string {
    return `${file}|${device}|${threads}${arena ? '' : '|no-arena'}${pattern ? '' : '|no-mem-pattern'}${convAsMatMul ? '|conv-as-matmul' : ''}${outputs ? `|outputs=${outputs.join(',')}` : ''}${dqmm ? '|dqmm' : ''}`;
  }

  /** The session for `file`, created on first use. Concurrent calls share one load. */
  get(file: string, opts: SessionOptions = {}): Promise<OnnxModel> {
    const device = opts.device ?? this.defaults.device ?? 'cpu';
    const threads = opts.threads ?? this.defaults.threads ?? 0;
    const logger = opts.logger ?? this.defaults.logger ?? silentLogger;
    const arena = opts.cpuMemArena ?? this.defaults.cpuMemArena ?? true;
    const pattern = opts.memPattern ?? this.defaults.memPattern ?? true;
    const convAsMatMul = opts.convIntegerAsMatMul ?? this.defaults.convIntegerAsMatMul ?? false;
    const outputs = graphOutputsTrimmed() ? opts.outputs : undefined;
    // a CPU rewrite: on CUDA the float MatMul stays
    const dqmm = (opts.dequantizedMatMul ?? false) && device === 'cpu' && dequantizedMatMulDynamic();
    const k = this.key(file, device, threads, arena, pattern, convAsMatMul, outputs, dqmm);
    let p = this.entries.get(k);
    if (!p) {
      p = this.create(file, device, threads, logger, arena, pattern, convAsMatMul, outputs, dqmm);
      this.entries.set(k, p);
      p.then(
        (m) => {
          this.providers.set(file, m.provider);
          if (m.runAs) this.runAs.set(file, m.runAs);
          else this.runAs.delete(file);
        },
        () => {
          if (this.entries.get(k) === p) this.entries.delete(k);
        },
      );
    }
    return p;
  }

  private async create(file: string, device: DeviceChoice, threads: number, logger: Logger, arena = true, pattern = true, convAsMatMul = false, outputs?: readonly string[], dqmm = false): Promise<OnnxModel> {
    const o = ort();
    // The model with only the outputs asked for (a derived file, else its bytes); `file` names the session all the same.
    let source: string | Uint8Array = file;
    let trim: Record<string, unknown> = {};
    const runAs: string[] = [];
    if (outputs) {
      try {
        const t = await graphOutputsModelFile(file, outputs);
        source = t.file ?? t.bytes!;
        trim = { outputsDropped: t.dropped.length, ...(t.file && t.file !== file ? { trimmedTo: t.file } : {}) };
      } catch (e) {
        throw new ModelError(`cannot load ONNX model ${file}: ${(e as Error).message}`, { cause: e });
      }
    }
    // its MatMuls on dequantized weights as DynamicQuantizeMatMul (a derived file, else its bytes)
    if (dqmm && typeof source === 'string') {
      try {
        const r = await dequantizedMatMulModelFile(source);
        source = r.file ?? r.bytes!;
        trim = { ...trim, dynamicQuantizeMatMul: r.rewritten.length };
        if (r.rewritten.length) runAs.push(dequantizedMatMulNote(r.rewritten.length));
      } catch (e) {
        throw new ModelError(`cannot load ONNX model ${file}: ${(e as Error).message}`, { cause: e });
      }
    }
    const base: ortTypes.InferenceSession.SessionOptions = { graphOptimizationLevel: 'all', logSeverityLevel: onnxLogSeverity() };
    if (!arena) base.enableCpuMemArena = false;
    if (!pattern) base.enableMemPattern = false;
    if (!onnxSpinning()) base.extra = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
    if (threads > 0) {
      base.intraOpNumThreads = threads;
      base.interOpNumThreads = 1;
    }
    if (device !== 'cpu') {
      const deviceId = device.includes(':') ? Number(device.split(':')[1]) : 0;
      try {
        const cuda = { ...base, executionProviders: [{ name: 'cuda', deviceId }] };
        const s = await (typeof source === 'string' ? o.InferenceSession.create(source, cuda) : o.InferenceSession.create(source, cuda));
        logger.info({ model: file, provider: 'cuda', deviceId, ...trim }, 'onnx session created');
        return new Model(file, 'cuda', s);
      } catch (e) {
        logger.warn({ model: file, err: (e as Error).message }, 'CUDA execution provider not loadable; falling back to CPU (run scripts/install-cuda-ep.sh on GPU hosts)');
      }
    }
    try {
      const cpu = { ...base, executionProviders: ['cpu'] };
      // The graph optimized once per model, onnxruntime and CPU (optimized-graph.ts), where the model is a file.
      const load = async (f: string): Promise<{ s: ortTypes.InferenceSession; graph: Record<string, string> }> => {
        if (!optimizedGraphsOn()) return { s: await o.InferenceSession.create(f, cpu), graph: {} };
        const r = await createThroughOptimizedGraph(f, o.env.versions?.node ?? 'unknown', derivedModelsDir(), (x, extra) => o.InferenceSession.create(x, { ...cpu, ...extra }));
        return { s: r.session, graph: r.loadedFrom ? { optimizedGraph: r.loadedFrom } : r.wrote ? { optimizedGraphWritten: r.wrote } : {} };
      };
      if (typeof source !== 'string') {
        // a trim that could not be kept on disk: loaded from its bytes, as it is
        const s = await o.InferenceSession.create(source, cpu);
        logger.info({ model: file, provider: 'cpu', ...trim }, 'onnx session created');
        return new Model(file, 'cpu', s, runAs);
      }
      if (convAsMatMul) {
        const r = await convIntegerModelFile(source);
        const { s, graph } = r.file ? await load(r.file) : { s: await o.InferenceSession.create(r.bytes!, cpu), graph: {} };
        logger.info({ model: file, provider: 'cpu', convIntegerAsMatMul: r.rewritten, convIntegerKept: r.kept, ...(r.file && r.file !== file ? { loadedFrom: r.file } : {}), ...trim, ...graph }, 'onnx session created');
        return new Model(file, 'cpu', s, runAs);
      }
      const { s, graph } = await load(source);
      logger.info({ model: file, provider: 'cpu', ...trim, ...graph }, 'onnx session created');
      return new Model(file, 'cpu', s, runAs);
    } catch (e) {
      throw new ModelError(`cannot load ONNX model ${file}: ${(e as Error).message}`, { cause: e });
    }
  }

  /** Number of sessions loaded or loading. */
  get size(): number {
    return this.entries.size;
  }

  /** Release every session of `file` (all devices); calling it twice is harmless. */
  async release(file: string): Promise<void> {
    const keys = [...this.entries.keys()].filter((k) => k.startsWith(`${file}|`));
    await Promise.all(
      keys.map(async (k) => {
        const p = this.entries.get(k);
        this.entries.delete(k);
        this.providers.delete(file);
        this.runAs.delete(file);
        const m = await p?.catch(() => undefined);
        await m?.session.release().catch(() => undefined);
      }),
    );
  }

  async disposeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.providers.clear();
    this.runAs.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.session.release().catch(() => undefined)));
  }
}

/** Build a float32 tensor. */
export function tensorF32(data: Float32Array, dims: readonly number[]): ortTypes.Tensor {
  return new (ort().Tensor)('float32', data, dims);
}

/** Build an int64 tensor. */
export function tensorI64(data: BigInt64Array, dims: readonly number[]): ortTypes.Tensor {
  return new (ort().Tensor)('int64', data, dims);
}

/**
 * The worker runtime's sessions (`JobRuntime.sessions`, typed by @dub/core as the `SessionStore`
 * it can release) as the SessionCache the engines load models from.
 */
export function sessionCacheOf(store: SessionStore): SessionCache {
  if (!(store instanceof SessionCache)) throw new TypeError('the runtime\'s sessions are not a @dub/onnx SessionCache');
  return store;
}

/**
 * The options every ONNX engine takes (Piper, Chatterbox, OpenVoice, Wav2Lip, BlazeFace, Whisper,
 * WeSpeaker, Silero, HTDemucs): where its model files are looked up, the shared session cache,
 * the device and the intra-op threads. Engines extend it with their own fields.
 */
export interface OnnxEngineOptions {
  /** DUB_MODELS_DIR. */
  modelsDir?: string;
  /** Extra model directories searched after it (tests point here at fixtures). */
  searchDirs?: string[];
  /** Shared sessions (the worker's); the engine makes and disposes its own otherwise. */
  sessions?: SessionCache;
  device?: DeviceChoice;
  /** Intra-op threads of the engine's sessions (0 = onnxruntime's default). */
  threads?: number;
}

/**
 * What an ONNX engine with one set of models repeats otherwise: its sessions (the shared cache it
 * is given, or its own for its device and threads, disposed with it) and its models `L`, loaded by
 * `load` on first use (a failed load is tried again on the next call) and forgotten on dispose.
 */
export abstract class OnnxModelsEngine<L> {
  protected readonly sessions: SessionCache;
  private readonly ownSessions: boolean;
  /** The models, loaded on the first call with that call's context. */
  protected readonly models = retryingOnce((ctx: StageContext) => this.load(ctx));

  protected constructor(o: OnnxEngineOptions) {
    this.ownSessions = !o.sessions;
    this.sessions = o.sessions ?? new SessionCache({ ...(o.device ? { device: o.device } : {}), ...(o.threads ? { threads: o.threads } : {}) });
  }

  /** Loads the engine's models through `this.sessions`. */
  protected abstract load(ctx: StageContext): Promise<L>;

  /**
   * Forgets the models: its own session cache is disposed; from a shared one the sessions `shared`
   * names are released (none by default: the cache's owner keeps them for the next engine).
   */
  protected async disposeModels(shared: (models: L) => readonly OnnxModel[] = () => []): Promise<void> {
    const loaded = this.models.forget();
    if (this.ownSessions) await this.sessions.disposeAll();
    else if (loaded) {
      const m = await loaded.catch(() => undefined);
      if (m) for (const x of shared(m)) await this.sessions.release(x.path);
    }
  }
}
