/**
 * A MatMul whose weights are dequantized inside the graph on every run. Quantized exports that tie
 * a weight to another use (Whisper's output projection shares the token embedding table) keep
 * that weight as uint8 with a DequantizeLinear in front of a float MatMul: onnxruntime does not
 * fold DequantizeLinear, so each run dequantizes the whole table (Whisper base: 512 x 51865, 106 MB
 * of floats) and multiplies in float. In Whisper base q8's decoder that is 10.5 ms of a 15 ms
 * step (profiled with onnxruntime's profiler: DequantizeLinear 6.7 ms, MatMul 3.8 ms).
 *
 * `dequantizedMatMulAsDynamic` rewrites each such pair, `MatMul(A, DequantizeLinear(W, s, zp))`
 * with one per-tensor scale and zero point, into `DynamicQuantizeMatMul(A, W, s, zp)`
 * (com.microsoft), the operator the same export runs for every other MatMul: the weights stay
 * 8-bit and are packed once at load, and A is quantized per run. The logits are then what the
 * export's quantization gives for its other layers, not bit for bit the float product: what that
 * changes in transcripts is measured in packages/asr's README. The rewrite reaches into subgraphs
 * (the merged decoder's If branches), drops a DequantizeLinear only where the MatMul is its one
 * reader, and copies every other byte of the model as it is.
 */
import { ModelError } from '@dub/core';
import {
  fields,
  GRAPH_INITIALIZER,
  GRAPH_NODE,
  INT8,
  MODEL_GRAPH,
  NODE_ATTRIBUTE,
  NODE_DOMAIN,
  NODE_INPUT,
  NODE_NAME,
  NODE_OP,
  NODE_OUTPUT,
  str,
  TENSOR_DIMS,
  TENSOR_NAME,
  TENSOR_TYPE,
  UINT8,
  varints,
  Writer,
  type Field,
} from './conv-integer.js';
import { derivedModelFile } from './derived-model.js';

// onnx.proto field numbers (the others: conv-integer.ts)
const MODEL_OPSET_IMPORT = 8;
const OPSET_DOMAIN = 1;
const OPSET_VERSION = 2;
const ATTR_G = 6;
const ATTR_GRAPHS = 11;
const FLOAT = 1;

const MS_DOMAIN = 'com.microsoft';

interface Node {
  field: Field;
  name: string;
  op: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  /** Subgraphs in its attributes (If, Loop, Scan). */
  graphs: Field[];
}

function parseNode(buf: Uint8Array, f: Field): Node {
  const n: Node = { field: f, name: '', op: '', domain: '', inputs: [], outputs: [], graphs: [] };
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no === NODE_INPUT) n.inputs.push(str(buf, g));
    else if (g.no === NODE_OUTPUT) n.outputs.push(str(buf, g));
    else if (g.no === NODE_NAME) n.name = str(buf, g);
    else if (g.no === NODE_OP) n.op = str(buf, g);
    else if (g.no === NODE_DOMAIN) n.domain = str(buf, g);
    else if (g.no === NODE_ATTRIBUTE) {
      for (const a of fields(buf, g.from, g.to)) if ((a.no === ATTR_G || a.no === ATTR_GRAPHS) && a.wire === 2) n.graphs.push(a);
    }
  }
  return n;
}

/** An initializer's type and element count. */
interface Init {
  type: number;
  elements: number;
}

function parseInit(buf: Uint8Array, f: Field): [string, Init] {
  let name = '';
  let type = 0;
  let elements = 1;
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no === TENSOR_NAME) name = str(buf, g);
    else if (g.no === TENSOR_TYPE) type = g.value;
    else if (g.no === TENSOR_DIMS) for (const d of varints(buf, g)) elements *= d;
  }
  return [name, { type, elements }];
}

/** Every node input read in the graph at `f` and in its subgraphs, counted. */
function countReads(buf: Uint8Array, f: Field, reads: Map<string, number>): void {
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no !== GRAPH_NODE) continue;
    const n = parseNode(buf, g);
    for (const i of n.inputs) reads.set(i, (reads.get(i) ?? 0) + 1);
    for (const sub of n.graphs) countReads(buf, sub, reads);
  }
}

function newNode(n: Node, inputs: readonly string[]): Writer {
  const w = new Writer();
  for (const i of inputs) w.string(NODE_INPUT, i);
  for (const o of n.outputs) w.string(NODE_OUTPUT, o);
  return w.string(NODE_NAME, n.name).string(NODE_OP, 'DynamicQuantizeMatMul').string(NODE_DOMAIN, MS_DOMAIN);
}

/** The graph at `f` rewritten (and its subgraphs), with what is in scope from outer graphs. */
function rewriteGraph(buf: Uint8Array, f: Field, outer: ReadonlyMap<string, Init>, done: string[]): Writer {
  const inits = new Map(outer);
  const nodes: Node[] = [];
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no === GRAPH_INITIALIZER) {
      const [name, t] = parseInit(buf, g);
      inits.set(name, t);
    } else if (g.no === GRAPH_NODE) nodes.push(parseNode(buf, g));
  }
  const reads = new Map<string, number>();
  countReads(buf, f, reads);
  const producer = new Map<string, Node>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n);
  const dropped = new Set<Node>();
  const replaced = new Map<Node, Writer>();
  for (const m of nodes) {
    if (m.op !== 'MatMul' || m.domain !== '' || m.inputs.length !== 2) continue;
    const d = producer.get(m.inputs[1]!);
    if (!d || d.op !== 'DequantizeLinear' || d.domain !== '' || d.inputs.length !== 3 || reads.get(m.inputs[1]!) !== 1) continue;
    // one scale and one zero point (per tensor), 8-bit weights: DynamicQuantizeMatMul's B
    const scale = inits.get(d.inputs[1]!);
    const zp = inits.get(d.inputs[2]!);
    if (!scale || !zp || scale.type !== FLOAT || scale.elements !== 1 || zp.elements !== 1 || (zp.type !== UINT8 && zp.type !== INT8)) continue;
    dropped.add(d);
    replaced.set(m, newNode(m, [m.inputs[0]!, d.inputs[0]!, d.inputs[1]!, d.inputs[2]!]));
    done.push(m.name || m.outputs[0]!);
  }
  const byStart = new Map(nodes.map((n) => [n.field.start, n]));
  const w = new Writer();
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no !== GRAPH_NODE) {
      w.raw(buf.subarray(g.start, g.end));
      continue;
    }
    const n = byStart.get(g.start)!;
    if (dropped.has(n)) continue;
    const r = replaced.get(n);
    if (r) w.message(GRAPH_NODE, r);
    else if (n.graphs.length) w.message(GRAPH_NODE, rewriteNodeGraphs(buf, g, inits, done));
    else w.raw(buf.subarray(g.start, g.end));
  }
  return w;
}

/** A node with the subgraphs of its attributes rewritten. */
function rewriteNodeGraphs(buf: Uint8Array, f: Field, scope: ReadonlyMap<string, Init>, done: string[]): Writer {
  const w = new Writer();
  for (const g of fields(buf, f.from, f.to)) {
    if (g.no !== NODE_ATTRIBUTE) {
      w.raw(buf.subarray(g.start, g.end));
      continue;
    }
    const a = new Writer();
    for (const h of fields(buf, g.from, g.to)) {
      if ((h.no === ATTR_G || h.no === ATTR_GRAPHS) && h.wire === 2) a.message(h.no, rewriteGraph(buf, h, scope, done));
      else a.raw(buf.subarray(h.start, h.end));
    }
    w.message(NODE_ATTRIBUTE, a);
  }
  return w;
}

export interface DequantizedMatMulRewrite {
  /** The rewritten model (the input itself when nothing was rewritten). */
  bytes: Uint8Array;
  /** The MatMul nodes now DynamicQuantizeMatMul (names, else their outputs). */
  rewritten: string[];
}

/** The model with each MatMul on a per-tensor DequantizeLinear of 8-bit weights as DynamicQuantizeMatMul. */
export function dequantizedMatMulAsDynamic(model: Uint8Array): DequantizedMatMulRewrite {
  const out = new Writer();
  const done: string[] = [];
  let graphs = 0;
  let msImported = false;
  for (const f of fields(model)) {
    if (f.no === MODEL_OPSET_IMPORT && f.wire === 2) {
      for (const o of fields(model, f.from, f.to)) if (o.no === OPSET_DOMAIN && str(model, o) === MS_DOMAIN) msImported = true;
    }
    if (f.no !== MODEL_GRAPH || f.wire !== 2) {
      out.raw(model.subarray(f.start, f.end));
      continue;
    }
    graphs++;
    out.message(MODEL_GRAPH, rewriteGraph(model, f, new Map(), done));
  }
  if (graphs !== 1) throw new ModelError(`dequantizedMatMulAsDynamic: the model has ${graphs} graphs, expected one`);
  if (!done.length) return { bytes: model, rewritten: [] };
  if (!msImported) out.message(MODEL_OPSET_IMPORT, new Writer().string(OPSET_DOMAIN, MS_DOMAIN).int(OPSET_VERSION, 1));
  return { bytes: out.join(), rewritten: done };
}

/**
 * Whether sessions that ask for it (SessionOptions.dequantizedMatMul) load the rewritten model:
 * `DUB_ONNX_DEQUANT_MATMUL`, `dynamic` (the default) or `float` (the model as shipped, its
 * weights dequantized on every run).
 */
export function dequantizedMatMulDynamic(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.DUB_ONNX_DEQUANT_MATMUL ?? '').trim().toLowerCase();
  if (v === '' || v === 'dynamic') return true;
  if (v === 'float') return false;
  throw new RangeError(`DUB_ONNX_DEQUANT_MATMUL must be dynamic or float, got "${env.DUB_ONNX_DEQUANT_MATMUL}"`);
}

/** What a model's engine record says of the rewrite (OnnxModel.runAs): it is not the float product bit for bit. */
export function dequantizedMatMulNote(n: number): string {
  return `${n} MatMul${n === 1 ? '' : 's'} on dequantized weights run as DynamicQuantizeMatMul (the activations quantized to 8 bits at each run: close to the float product, not bit for bit; DUB_ONNX_DEQUANT_MATMUL=float runs the model as shipped)`;
}

/** Bump when what dequantizedMatMulAsDynamic writes changes. */
export const DEQUANT_MATMUL_VERSION = 1;

/** `file` rewritten by dequantizedMatMulAsDynamic, kept in the derived-models folder (derived-model.ts). */
export async function dequantizedMatMulModelFile(file: string, opts: { dir?: string } = {}): Promise<{ file?: string; bytes?: Uint8Array; rewritten: string[]; made: boolean }> {
  return derivedModelFile(
    file,
    {
      suffix: 'dqmm',
      key: `dqmm|v${DEQUANT_MATMUL_VERSION}`,
      record: { version: DEQUANT_MATMUL_VERSION },
      derive: (model) => {
        const r = dequantizedMatMulAsDynamic(model);
        return { bytes: r.bytes, changed: r.rewritten.length > 0, facts: { rewritten: r.rewritten } };
      },
    },
    opts.dir,
  );
}
