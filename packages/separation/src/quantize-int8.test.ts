/**
 * scripts/quantize-htdemucs.py's own int8 quantizer (onnx + numpy, what set-up runs) against
 * onnxruntime's quantize_dynamic on a small MatMul model: fixtures/quantize-tiny.onnx and
 * fixtures/quantize-references.json, made offline by scripts/make-quantize-references.py with
 * onnxruntime 1.30 for Python (which CI does not have). The quantizer runs here with
 * /usr/bin/python3 (Debian's python3-onnx; skipped by name without it) and must give the same
 * node set, int8 weights, scales and zero points; its model then runs in onnxruntime-node next to
 * the float one: where an output is one MatMul of the input it must be the integer arithmetic on
 * those int8 weights (exact int32 sums, or the int16-pair sums onnxruntime's kernel saturates on
 * x86 without VNNI), the exact result within the int8 error bound of the float product; every
 * output within 5% of its range of the float model's, or within the error onnxruntime's own
 * quantized model showed when the fixture was made.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionCache, tensorF32 } from '@dub/onnx';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..', '..', '..');
const FIXTURES = path.resolve(here, '..', 'fixtures');
const MODEL = path.join(FIXTURES, 'quantize-tiny.onnx');
const PYTHON = '/usr/bin/python3';

interface Described {
  opTypes: Record<string, number>;
  nodes: unknown[];
  quantized: Record<string, { dims: number[]; int8: number[]; scale: number[]; scaleType: number; zeroPoint: number[]; zeroPointType: number }>;
  otherInitializers: Record<string, unknown>;
  inputs: string[];
  outputs: string[];
}
interface References {
  made_with: { onnxruntime: string };
  model_sha256: string;
  input: { name: string; dims: number[]; values: number[] };
  float_weights: Record<string, { dims: number[]; values: number[] }>;
  reference: Described;
  onnxruntime_outputs: { float: Record<string, number[]>; quantized: Record<string, number[]> };
}
const refs = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'quantize-references.json'), 'utf8')) as References;

const probe = spawnSync(PYTHON, ['-c', 'import onnx, numpy'], { encoding: 'utf8' });
const noPython = probe.error ? `${PYTHON} cannot run (${probe.error.message})` : probe.status !== 0 ? `${PYTHON} has no onnx/numpy (apt-get install python3-onnx)` : undefined;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-quantize-int8-'));
const sessions = new SessionCache({ threads: 1 });
afterAll(async () => {
  await sessions.disposeAll();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function python(args: string[]): string {
  const r = spawnSync(PYTHON, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${PYTHON} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

async function run(file: string): Promise<Record<string, Float32Array>> {
  const m = await sessions.get(file);
  const out = await m.run({ [refs.input.name]: tensorF32(Float32Array.from(refs.input.values), refs.input.dims) });
  return Object.fromEntries(Object.entries(out).map(([k, t]) => [k, t.data as Float32Array]));
}

const maxAbs = (a: ArrayLike<number>) => Array.from(a).reduce((m, v) => Math.max(m, Math.abs(v)), 0);

describe('the int8 quantizer of scripts/quantize-htdemucs.py (onnx + numpy) against onnxruntime quantize_dynamic', () => {
  it('the committed tiny model is the one the references were made from', () => {
    expect(createHash('sha256').update(fs.readFileSync(MODEL)).digest('hex')).toBe(refs.model_sha256);
    expect(refs.made_with.onnxruntime).toBe('1.30.0');
  });

  let ours: string | undefined;
  (noPython ? it.skip : it)(`${noPython ? `skipped (${noPython}): ` : ''}gives onnxruntime's nodes, int8 weights, scales and zero points`, () => {
    const dest = path.join(tmp, 'q');
    python([path.join('scripts', 'quantize-htdemucs.py'), '--src', MODEL, '--dest', dest, '--name', 'tiny-int8.onnx', '--no-split']);
    ours = path.join(dest, 'tiny-int8.onnx');
    const got = JSON.parse(python([path.join('scripts', 'make-quantize-references.py'), '--describe', ours])) as Described;
    // What the reference holds, so that equality means something: 8 MatMuls quantized (2 of them
    // Gemms rewritten), 3 activations quantized once each, one MatMul of two activations and one Gemm left float.
    expect(refs.reference.opTypes).toEqual({ Add: 1, Cast: 8, DynamicQuantizeLinear: 3, Gemm: 1, MatMul: 1, MatMulInteger: 8, Mul: 16, Transpose: 1 });
    expect(refs.reference.quantized.W6!.scale).toEqual([1]); // all-zero weight
    expect(refs.reference.quantized.W2!.int8.every((q) => q <= 0)).toBe(true); // all negative
    expect(got.opTypes).toEqual(refs.reference.opTypes);
    expect(got.nodes).toEqual(refs.reference.nodes);
    for (const [name, want] of Object.entries(refs.reference.quantized)) expect(got.quantized[name], name).toEqual(want);
    expect(Object.keys(got.quantized).sort()).toEqual(Object.keys(refs.reference.quantized).sort());
    expect(got.otherInitializers).toEqual(refs.reference.otherInitializers);
    expect(got).toEqual(refs.reference);
    // The sidecar names the source and this backend.
    const info = JSON.parse(fs.readFileSync(path.join(dest, 'tiny-int8.json'), 'utf8')) as { source: { sha256: string }; quantization: { backend: string } };
    expect(info.source.sha256).toBe(refs.model_sha256);
    expect(info.quantization.backend).toBe('onnx');
  }, 60_000);

  (noPython ? it.skip : it)(`${noPython ? `skipped (${noPython}): ` : ''}runs in onnxruntime-node: integer arithmetic on its int8 weights, within the int8 error of the float model`, async () => {
    expect(ours, 'the quantizer test ran first').toBeDefined();
    const f = await run(MODEL);
    const q = await run(ours!);
    const x = refs.input.values.map(Math.fround);
    const [rows, k] = refs.input.dims as [number, number];
    // DynamicQuantizeLinear of the input (float32): step = range with 0 / 255, zero point and values rounded halves to even.
    const rne = (v: number) => {
      const r = Math.round(v);
      return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
    };
    const sa = Math.fround((Math.max(0, ...x) - Math.min(0, ...x)) / 255);
    const za = Math.min(255, Math.max(0, rne(Math.fround(-Math.min(0, ...x) / sa))));
    const xq = x.map((v) => Math.min(255, Math.max(0, rne(Math.fround(v / sa)) + za)));
    // Outputs that are one MatMul of the input. onnxruntime's u8 x s8 kernel on x86 without VNNI
    // (vpmaddubsw) sums the products in pairs in int16 and saturates there; elsewhere the int32 sum
    // is exact. Each element must be one or the other (the whole output the same one), and the exact
    // one within sum_k |x| sw/2 + |w| sa/2 + sa sw/4 of the float product.
    const direct: Record<string, string> = { Y1: 'W1', Y6: 'W6', Y9: 'W8' };
    const kinds = new Set<string>();
    for (const [out, wName] of Object.entries(direct)) {
      const w = refs.float_weights[wName]!;
      const cols = w.dims[1]!;
      const wq = refs.reference.quantized[wName]!.int8;
      const sw = refs.reference.quantized[wName]!.scale[0]!;
      const s = Math.fround(sa * sw);
      const fo = f[out]!;
      const qo = q[out]!;
      const tol = 1e-5 * Math.max(maxAbs(fo), 1e-30);
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          let exact = 0;
          let sat = 0;
          let bound = 0;
          for (let j = 0; j < k; j++) {
            exact += (xq[r * k + j]! - za) * wq[j * cols + c]!;
            bound += (Math.abs(x[r * k + j]!) * sw) / 2 + (Math.abs(w.values[j * cols + c]!) * sa) / 2 + (sa * sw) / 4;
            if (j % 2 === 0) sat += Math.min(32767, Math.max(-32768, xq[r * k + j]! * wq[j * cols + c]! + (j + 1 < k ? xq[r * k + j + 1]! * wq[(j + 1) * cols + c]! : 0)));
          }
          let wsum = 0;
          for (let j = 0; j < k; j++) wsum += wq[j * cols + c]!;
          sat -= za * wsum;
          const i = r * cols + c;
          expect(Math.abs(exact * s - fo[i]!), `${out}[${i}]: exact integer result within the int8 bound ${bound}`).toBeLessThanOrEqual(bound * 1.0001 + tol);
          const isExact = Math.abs(qo[i]! - exact * s) <= tol;
          const isSat = Math.abs(qo[i]! - sat * s) <= tol;
          expect(isExact || isSat, `${out}[${i}] = ${qo[i]}: neither the exact int32 sum (${exact * s}) nor the int16-pair one (${sat * s})`).toBe(true);
          if (isExact !== isSat) kinds.add(isExact ? 'exact' : 'int16 pairs');
        }
      }
    }
    expect(kinds.size, `the kernel summed ${[...kinds].join(' and ')}`).toBeLessThanOrEqual(1);
    // Every output against the float model: within 5% of its range, or, where onnxruntime's own
    // quantized model erred more when the fixture was made (Python, on an x86 without VNNI: the
    // int16-pair saturation), within that error.
    for (const [out, fo] of Object.entries(f)) {
      const qo = q[out]!;
      expect(qo.length, out).toBe(fo.length);
      const pyF = refs.onnxruntime_outputs.float[out]!;
      const pyQ = refs.onnxruntime_outputs.quantized[out]!;
      const scale = Math.max(maxAbs(fo), 1e-30);
      let refErr = 0;
      for (let i = 0; i < fo.length; i++) {
        expect(Math.abs(fo[i]! - pyF[i]!), `${out}[${i}] float, node against Python`).toBeLessThanOrEqual(1e-5 * scale);
        refErr = Math.max(refErr, Math.abs(pyQ[i]! - pyF[i]!));
      }
      const allowed = Math.max(0.05 * scale, 1.01 * refErr);
      for (let i = 0; i < fo.length; i++) expect(Math.abs(qo[i]! - fo[i]!), `${out}[${i}]`).toBeLessThanOrEqual(allowed);
    }
    // Quantized for real: the MatMul outputs move, the zero weight gives exact zeros, the Gemm left float does not move.
    expect(maxAbs(q.Y1!.map((v, i) => v - f.Y1![i]!))).toBeGreaterThan(0);
    expect(maxAbs(q.Y8!.map((v, i) => v - f.Y8![i]!))).toBeGreaterThan(0);
    expect(maxAbs(q.Y6!)).toBe(0);
    expect(maxAbs(q.Y10!.map((v, i) => v - f.Y10![i]!))).toBeLessThanOrEqual(1e-6 * maxAbs(f.Y10!));
  }, 60_000);
});
