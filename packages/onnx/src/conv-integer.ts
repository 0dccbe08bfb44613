/**
 * ONNX Runtime's CPU ConvInteger is slow: it packs the whole im2col matrix of the activations as
 * the GEMM's B side on every run, takes uint8 weights only (so none of MLAS's u8s8 VNNI/AMX
 * kernels), and builds the im2col of a 1-D convolution with its generic N-d loop. Dynamically
 * quantized exports of convolutional vocoders (Kokoro-82M int8: 87 ConvInteger nodes, 77% of its
 * CPU time) spend most of their time there.
 *
 * `convIntegerAsMatMul` rewrites each 1-D ConvInteger (group 1, weights a uint8 initializer with
 * one zero point) into the same integer arithmetic through MatMulInteger, whose constant B side
 * ONNX Runtime packs once at load:
 *
 *   x_q [N, C, L] -> Transpose [N, L, C] -> Pad (with x's zero point) -> K Slices (offsets
 *   k*dilation, step = stride) -> Concat [N, L', K*C] -> MatMulInteger(., W', x_zp, w_zp')
 *   -> [N, L', O] int32 -> Transpose -> [N, O, L'] int32, the ConvInteger's output.
 *
 * W'[k*C + c, o] = W[o, c, k], and the padded values are the input's zero point, as ConvInteger
 * pads: every int32 sum is the one ConvInteger computes, and the model's output is bit-identical
 * (conv-integer.test.ts; on Kokoro, packages/voice kokoro.test.ts). Nothing else of the model
 * changes.
 *
 * Weights as int8 (`int8Weights`, where `int8GemmExact()`): W' - 128 as int8 and w_zp - 128, the
 * same differences w - w_zp, so MLAS takes its u8s8 kernels (about twice as fast again here).
 * Those are exact only where the CPU sums u8*s8 products straight into int32 (x86 VNNI: vpdpbusd,
 * or AMX); on AVX2/AVX-512 CPUs without VNNI MLAS's u8s8 kernel adds pairs of products in int16
 * with saturation (vpmaddubsw: 2 x 255 x 127 > 32767), so there the weights stay uint8 (u8u8, the
 * kernel ConvInteger itself runs).
 *
 * The model is read and written with a minimal protobuf walker: the fields it does not touch are
 * copied byte for byte. `convIntegerModelFile` keeps the rewritten model in the user's cache
 * folder, so it is made once per model file and loaded from disk afterwards (loading it from a
 * buffer holds the file, the rewritten copy and ONNX Runtime's copy at once: ~350 MB more at the
 * peak for Kokoro).
 */
import fs from 'node:fs';
import { derivedModelFile } from './derived-model.js';

/** A protobuf field: number, wire type and where its value lies in the buffer. */
export interface Field {
  no: number;
  wire: number;
  /** Start of the whole field (its tag). */
  start: number;
  end: number;
  /** Varint value (wire 0) or fixed value position; for wire 2 the payload range. */
  value: number;
  from: number;
  to: number;
}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let result = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    const b = buf[pos++];
    if (b === undefined) throw new Error('truncated protobuf varint');
    result += (b & 0x7f) * mul;
    if (b < 0x80) return [result, pos];
    mul *= 128;
  }
  throw new Error('malformed protobuf varint');
}

export function* fields(buf: Uint8Array, from = 0, to = buf.length): Generator<Field> {
  let pos = from;
  while (pos < to) {
    const start = pos;
    const [tag, p1] = readVarint(buf, pos);
    pos = p1;
    const no = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 0) {
      const [v, p2] = readVarint(buf, pos);
      yield { no, wire, start, end: p2, value: v, from: pos, to: p2 };
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      yield { no, wire, start, end: p2 + len, value: len, from: p2, to: p2 + len };
      pos = p2 + len;
    } else if (wire === 1) {
      yield { no, wire, start, end: pos + 8, value: 0, from: pos, to: pos + 8 };
      pos += 8;
    } else if (wire === 5) {
      yield { no, wire, start, end: pos + 4, value: 0, from: pos, to: pos + 4 };
      pos += 4;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
  }
  if (pos !== to) throw new Error('protobuf field runs past its message');
}

const utf8 = new TextDecoder();
export const str = (buf: Uint8Array, f: Field): string => utf8.decode(buf.subarray(f.from, f.to));

/** Repeated varints, packed (wire 2) or not (wire 0). */
export function varints(buf: Uint8Array, f: Field): number[] {
  if (f.wire === 0) return [f.value];
  const out: number[] = [];
  let pos = f.from;
  while (pos < f.to) {
    const [v, p] = readVarint(buf, pos);
    out.push(v);
    pos = p;
  }
  return out;
}

/** Bytes written in pieces, joined once. */
export class Writer {
  readonly parts: Uint8Array[] = [];
  length = 0;
  raw(b: Uint8Array): this {
    this.parts.push(b);
    this.length += b.length;
    return this;
  }
  varint(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER)) throw new Error(`cannot write varint ${v}`);
    const bytes: number[] = [];
    while (v >= 0x80) {
      bytes.push((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    return this.raw(Uint8Array.from(bytes));
  }
  tag(no: number, wire: number): this {
    return this.varint(no * 8 + wire);
  }
  bytes(no: number, b: Uint8Array): this {
    return this.tag(no, 2).varint(b.length).raw(b);
  }
  string(no: number, s: string): this {
    return this.bytes(no, new TextEncoder().encode(s));
  }
  message(no: number, w: Writer): this {
    this.tag(no, 2).varint(w.length);
    for (const p of w.parts) this.raw(p);
    return this;
  }
  int(no: number, v: number): this {
    return this.tag(no, 0).varint(v);
  }
  join(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

// onnx.proto field numbers
export const MODEL_GRAPH = 7;
export const GRAPH_NODE = 1;
export const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
export const NODE_INPUT = 1;
export const NODE_OUTPUT = 2;
export const NODE_NAME = 3;
export const NODE_OP = 4;
export const NODE_ATTRIBUTE = 5;
export const NODE_DOMAIN = 7;
export const ATTR_NAME = 1;
const ATTR_I = 3;
const ATTR_S = 4;
const ATTR_INTS = 8;
const ATTR_TYPE = 20;
const ATTR_TYPE_INT = 2;
const ATTR_TYPE_INTS = 7;
const ATTR_TYPE_GRAPH = 5;
const ATTR_TYPE_GRAPHS = 10;
export const TENSOR_DIMS = 1;
export const TENSOR_TYPE = 2;
const TENSOR_INT32_DATA = 5;
export const TENSOR_NAME = 8;
const TENSOR_RAW = 9;
const TENSOR_DATA_LOCATION = 14;
export const UINT8 = 2;
export const INT8 = 3;
const INT64 = 7;
/** The largest int64: a Slice end "to the end of the axis". */
const INT64_MAX = 9223372036854775807n;

interface NodeInfo {
  field: Field;
  name: string;
  op: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  /** Attributes by name: ints (INT or INTS), or a string (auto_pad). */
  attrs: Map<string, { ints?: number[]; s?: string; type: number }>;
}

function parseNode(buf: Uint8Array, f: Field): NodeInfo {
  const n: NodeInfo = { field: f, name: '', op: '', domain: '', inputs: [], outputs: [], attrs: new Map() };
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no === NODE_INPUT) n.inputs.push(str(buf, g));
    else if (g.no === NODE_OUTPUT) n.outputs.push(str(buf, g));
    else if (g.no === NODE_NAME) n.name = str(buf, g);
    else if (g.no === NODE_OP) n.op = str(buf, g);
    else if (g.no === NODE_DOMAIN) n.domain = str(buf, g);
    else if (g.no === NODE_ATTRIBUTE) {
      let name = '';
      let type = 0;
      const ints: number[] = [];
      let s: string | undefined;
      for (const a of fields(buf, g.from, g.to)) {
        if (a.no === ATTR_NAME) name = str(buf, a);
        else if (a.no === ATTR_TYPE) type = a.value;
        else if (a.no === ATTR_I) ints.push(a.value);
        else if (a.no === ATTR_INTS) ints.push(...varints(buf, a));
        else if (a.no === ATTR_S) s = str(buf, a);
      }
      n.attrs.set(name, { ints, ...(s !== undefined ? { s } : {}), type });
    }
  }
  return n;
}

interface TensorInfo {
  name: string;
  dims: number[];
  type: number;
  raw?: Uint8Array;
  /** int32_data: where exporters put small uint8/int8 tensors (zero points) instead of raw_data. */
  int32: number[];
  external: boolean;
}

function parseTensor(buf: Uint8Array, f: Field): TensorInfo {
  const t: TensorInfo = { name: '', dims: [], type: 0, int32: [], external: false };
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no === TENSOR_NAME) t.name = str(buf, g);
    else if (g.no === TENSOR_DIMS) t.dims.push(...varints(buf, g));
    else if (g.no === TENSOR_TYPE) t.type = g.value;
    else if (g.no === TENSOR_RAW) t.raw = buf.subarray(g.from, g.to);
    else if (g.no === TENSOR_INT32_DATA) t.int32.push(...varints(buf, g));
    else if (g.no === TENSOR_DATA_LOCATION && g.value === 1) t.external = true;
  }
  return t;
}

function tensor(name: string, type: number, dims: readonly number[], raw: Uint8Array): Writer {
  const w = new Writer();
  for (const d of dims) w.int(TENSOR_DIMS, d);
  w.int(TENSOR_TYPE, type).string(TENSOR_NAME, name).bytes(TENSOR_RAW, raw);
  return w;
}

const i64 = (values: readonly bigint[]): Uint8Array => new Uint8Array(BigInt64Array.from(values).buffer);

function node(op: string, inputs: readonly string[], outputs: readonly string[], name: string, attrs: { name: string; ints?: number[]; i?: number }[] = []): Writer {
  const w = new Writer();
  for (const i of inputs) w.string(NODE_INPUT, i);
  for (const o of outputs) w.string(NODE_OUTPUT, o);
  w.string(NODE_NAME, name).string(NODE_OP, op);
  for (const a of attrs) {
    const aw = new Writer().string(ATTR_NAME, a.name);
    if (a.ints) {
      for (const v of a.ints) aw.int(ATTR_INTS, v);
      aw.int(ATTR_TYPE, ATTR_TYPE_INTS);
    } else {
      aw.int(ATTR_I, a.i!).int(ATTR_TYPE, ATTR_TYPE_INT);
    }
    w.message(NODE_ATTRIBUTE, aw);
  }
  return w;
}

export interface ConvIntegerRewrite {
  /** The rewritten model (the input itself when nothing was rewritten). */
  bytes: Uint8Array;
  /** ConvInteger nodes rewritten. */
  rewritten: number;
  /** ConvInteger nodes left as they were (2-D, grouped, per-channel weights, ...). */
  kept: number;
}

/**
 * Rewrite the model's 1-D ConvInteger nodes into MatMulInteger with constant int8 weights (see
 * the file's comment); the output of the model is unchanged, bit for bit.
 */
export function convIntegerAsMatMul(model: Uint8Array, opts: { int8Weights?: boolean } = {}): ConvIntegerRewrite {
  const int8 = opts.int8Weights ?? false;
  let graphField: Field | undefined;
  for (const f of fields(model)) if (f.no === MODEL_GRAPH && f.wire === 2) graphField = f;
  if (!graphField) return { bytes: model, rewritten: 0, kept: 0 };
  const g = graphField;

  const nodes: NodeInfo[] = [];
  const initializers = new Map<string, Field>();
  const initializerAt = new Map<number, string>();
  const graphInputs = new Set<string>();
  let subgraphs = false;
  for (const f of fields(model, g.from, g.to)) {
    if (f.no === GRAPH_NODE) {
      const n = parseNode(model, f);
      if ([...n.attrs.values()].some((a) => a.type === ATTR_TYPE_GRAPH || a.type === ATTR_TYPE_GRAPHS)) subgraphs = true;
      nodes.push(n);
    } else if (f.no === GRAPH_INITIALIZER) {
      // the name only; the tensors that are rewritten are parsed below
      for (const t of fields(model, f.from, f.to)) {
        if (t.no !== TENSOR_NAME) continue;
        initializers.set(str(model, t), f);
        initializerAt.set(f.start, str(model, t));
      }
    } else if (f.no === GRAPH_INPUT) {
      for (const t of fields(model, f.from, f.to)) if (t.no === 1) graphInputs.add(str(model, t));
    }
  }

  // every value name in use, so new names never collide
  const names = new Set<string>([...initializers.keys(), ...graphInputs]);
  for (const n of nodes) for (const v of [...n.inputs, ...n.outputs]) names.add(v);
  let prefix = '__dub_convinteger_';
  while ([...names].some((v) => v.startsWith(prefix))) prefix = `_${prefix}`;

  const uses = new Map<string, number>();
  for (const n of nodes) for (const v of n.inputs) uses.set(v, (uses.get(v) ?? 0) + 1);

  const replaced = new Map<NodeInfo, Writer[]>();
  const newInitializers: Writer[] = [];
  const released = new Map<string, number>();
  let kept = 0;
  let k = 0;
  for (const n of nodes) {
    if (n.op !== 'ConvInteger' || (n.domain !== '' && n.domain !== 'ai.onnx')) continue;
    const plan = planConv(model, n, initializers);
    if (!plan) {
      kept++;
      continue;
    }
    const p = `${prefix}${k++}_`;
    const { O, C, K, dilation, stride, pads, weight, zeroPoint } = plan;
    // W'[k*C + c, o] = W[o, c, k] (uint8), or W[o, c, k] - 128 with w_zp - 128 (int8: the same w - w_zp)
    const shift = int8 ? 128 : 0;
    const wt = new Uint8Array(K * C * O);
    for (let o = 0; o < O; o++) {
      for (let c = 0; c < C; c++) {
        const base = (o * C + c) * K;
        for (let j = 0; j < K; j++) wt[(j * C + c) * O + o] = (weight[base + j]! - shift) & 0xff;
      }
    }
    newInitializers.push(tensor(`${p}W`, int8 ? INT8 : UINT8, [K * C, O], wt));
    newInitializers.push(tensor(`${p}w_zp`, int8 ? INT8 : UINT8, [], Uint8Array.of((zeroPoint - shift) & 0xff)));
    const [x, , xzp] = n.inputs as [string, string, string, string];
    const out: Writer[] = [];
    out.push(node('Transpose', [x], [`${p}xt`], `${p}transpose_in`, [{ name: 'perm', ints: [0, 2, 1] }]));
    let cur = `${p}xt`;
    if (pads[0] || pads[1]) {
      newInitializers.push(tensor(`${p}pads`, INT64, [6], i64([0n, BigInt(pads[0]!), 0n, 0n, BigInt(pads[1]!), 0n])));
      out.push(node('Pad', [cur, `${p}pads`, xzp], [`${p}xp`], `${p}pad`));
      cur = `${p}xp`;
    }
    newInitializers.push(tensor(`${p}axis`, INT64, [1], i64([1n])));
    newInitializers.push(tensor(`${p}step`, INT64, [1], i64([BigInt(stride)])));
    const span = dilation * (K - 1);
    const cols: string[] = [];
    for (let j = 0; j < K; j++) {
      // the output's first sample of tap j reads padded sample j*dilation; its end leaves the
      // span of the later taps (end relative to the axis' length: -(span - j*dilation))
      const start = j * dilation;
      const rest = span - start;
      newInitializers.push(tensor(`${p}start${j}`, INT64, [1], i64([BigInt(start)])));
      newInitializers.push(tensor(`${p}end${j}`, INT64, [1], i64([rest > 0 ? -BigInt(rest) : INT64_MAX])));
      out.push(node('Slice', [cur, `${p}start${j}`, `${p}end${j}`, `${p}axis`, `${p}step`], [`${p}tap${j}`], `${p}slice${j}`));
      cols.push(`${p}tap${j}`);
    }
    let col = cols[0]!;
    if (K > 1) {
      out.push(node('Concat', cols, [`${p}col`], `${p}concat`, [{ name: 'axis', i: 2 }]));
      col = `${p}col`;
    }
    out.push(node('MatMulInteger', [col, `${p}W`, xzp, `${p}w_zp`], [`${p}y`], `${p}matmul`));
    out.push(node('Transpose', [`${p}y`], [n.outputs[0]!], `${p}transpose_out`, [{ name: 'perm', ints: [0, 2, 1] }]));
    replaced.set(n, out);
    for (const v of [n.inputs[1]!, n.inputs[3]!]) released.set(v, (released.get(v) ?? 0) + 1);
  }
  if (replaced.size === 0) return { bytes: model, rewritten: 0, kept };

  // initializers no node reads any more (not graph inputs, no subgraph that might read them)
  const drop = new Set(subgraphs ? [] : [...released].filter(([v, count]) => uses.get(v) === count && !graphInputs.has(v)).map(([v]) => v));

  const graph = new Writer();
  let nodeIndex = 0;
  for (const f of fields(model, g.from, g.to)) {
    if (f.no === GRAPH_NODE) {
      const n = nodes[nodeIndex++]!;
      const r = replaced.get(n);
      if (r) for (const w of r) graph.message(GRAPH_NODE, w);
      else graph.raw(model.subarray(f.start, f.end));
    } else if (f.no === GRAPH_INITIALIZER) {
      const name = initializerAt.get(f.start);
      if (name === undefined || !drop.has(name)) graph.raw(model.subarray(f.start, f.end));
    } else {
      graph.raw(model.subarray(f.start, f.end));
    }
  }
  for (const w of newInitializers) graph.message(GRAPH_INITIALIZER, w);

  const out = new Writer();
  for (const f of fields(model)) {
    if (f.no === MODEL_GRAPH && f.start === g.start) out.message(MODEL_GRAPH, graph);
    else out.raw(model.subarray(f.start, f.end));
  }
  return { bytes: out.join(), rewritten: replaced.size, kept };
}

interface ConvPlan {
  O: number;
  C: number;
  K: number;
  dilation: number;
  stride: number;
  pads: [number, number];
  weight: Uint8Array;
  zeroPoint: number;
}

/** What a ConvInteger node needs to be rewritten, or undefined where it cannot be. */
function planConv(model: Uint8Array, n: NodeInfo, initializers: Map<string, Field>): ConvPlan | undefined {
  if (n.inputs.length !== 4 || n.outputs.length !== 1 || n.inputs.some((v) => v === '')) return undefined;
  const autoPad = n.attrs.get('auto_pad')?.s;
  if (autoPad !== undefined && autoPad !== 'NOTSET') return undefined;
  const group = n.attrs.get('group')?.ints?.[0] ?? 1;
  if (group !== 1) return undefined;
  const wf = initializers.get(n.inputs[1]!);
  const zf = initializers.get(n.inputs[3]!);
  if (!wf || !zf) return undefined;
  const w = parseTensor(model, wf);
  const z = parseTensor(model, zf);
  if (w.external || w.type !== UINT8 || !w.raw || w.dims.length !== 3) return undefined;
  const zero = z.raw ? (z.raw.length === 1 ? z.raw[0] : undefined) : z.int32.length === 1 ? z.int32[0] : undefined;
  if (z.external || z.type !== UINT8 || zero === undefined || zero > 255 || z.dims.reduce((a, b) => a * b, 1) !== 1) return undefined;
  const [O, C, K] = w.dims as [number, number, number];
  if (w.raw.length !== O * C * K) return undefined;
  const ks = n.attrs.get('kernel_shape')?.ints;
  if (ks && (ks.length !== 1 || ks[0] !== K)) return undefined;
  const dil = n.attrs.get('dilations')?.ints ?? [1];
  const str_ = n.attrs.get('strides')?.ints ?? [1];
  const pads = n.attrs.get('pads')?.ints ?? [0, 0];
  if (dil.length !== 1 || str_.length !== 1 || pads.length !== 2) return undefined;
  if (!(dil[0]! >= 1 && str_[0]! >= 1)) return undefined;
  return { O, C, K, dilation: dil[0]!, stride: str_[0]!, pads: [pads[0]!, pads[1]!], weight: w.raw, zeroPoint: zero };
}

let exact: boolean | undefined;
/**
 * Whether MLAS's u8s8 integer GEMM sums exactly on this CPU: x86-64 with AVX-512 VNNI, AVX-VNNI
 * or AMX int8 (Linux: /proc/cpuinfo's flags). Elsewhere (AVX2 alone, ARM, other systems) false:
 * int8 weights could saturate there, so the rewrite keeps uint8 ones.
 */
export function int8GemmExact(): boolean {
  if (exact === undefined) {
    exact = false;
    if (process.arch === 'x64' && process.platform === 'linux') {
      try {
        const flags = /^flags\s*:(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.split(/\s+/) ?? [];
        exact = flags.includes('avx512_vnni') || flags.includes('avx_vnni') || flags.includes('amx_int8');
      } catch {
        exact = false;
      }
    }
  }
  return exact;
}

/** Bump when the rewrite's output changes: cached files of an older version are not used. */
export const CONV_INTEGER_REWRITE_VERSION = 1;

export { derivedModelsDir } from './derived-model.js';

export interface ConvIntegerModel {
  /** The file to load: the cached rewrite, or the model itself when it has nothing to rewrite. */
  file?: string;
  /** The rewritten model, when it could not be kept on disk. */
  bytes?: Uint8Array;
  rewritten: number;
  kept: number;
  /** Whether this call made the rewrite (false: taken from the cache). */
  made: boolean;
}

/**
 * `file` with its 1-D ConvInteger nodes as MatMulInteger (convIntegerAsMatMul), from the cache
 * folder when made before for this file (same path, size and modification time) and rewrite
 * version; otherwise made now and stored there (written whole, then renamed into place). Where
 * the folder cannot be written, the rewritten bytes are returned instead.
 */
export async function convIntegerModelFile(file: string, opts: { dir?: string; int8Weights?: boolean } = {}): Promise<ConvIntegerModel> {
  const int8 = opts.int8Weights ?? int8GemmExact();
  return derivedModelFile(
    file,
    {
      suffix: `conv-as-matmul-${int8 ? 's8' : 'u8'}`,
      key: `v${CONV_INTEGER_REWRITE_VERSION}`,
      record: { version: CONV_INTEGER_REWRITE_VERSION, int8Weights: int8 },
      derive: (model) => {
        const r = convIntegerAsMatMul(model, { int8Weights: int8 });
        return { bytes: r.bytes, changed: r.rewritten > 0, facts: { rewritten: r.rewritten, kept: r.kept } };
      },
    },
    opts.dir,
  );
}
