/**
 * ONNX signatures of the public model exports (packages/<pkg>/fixtures/<engine>-signature.json):
 * per file, the inputs and outputs with name, dtype and rank, read from the export script, model
 * card or inference code named in `source`. `signatureOf` reads a session's real signature and
 * `expectedSignature` expands a JSON into the same shape, so a test can compare a stand-in (or the
 * shipped model) with the public export exactly.
 *
 * JSON entry fields: `name`; `dtype` (onnxruntime's: float32, int64, bool, ...); `rank`;
 * `perLayer: true` for names with `{layer}` (one per decoder layer, the count is the model's);
 * `optional: true` for inputs only some exports have (Piper's `sid` on multi-speaker voices);
 * `note` (free text).
 */
import { expect } from 'vitest';

export interface SignatureEntry {
  name: string;
  dtype: string;
  rank: number;
  perLayer?: boolean;
  optional?: boolean;
  note?: string;
}

export interface SignatureFile {
  inputs: SignatureEntry[];
  outputs: SignatureEntry[];
}

export interface Signature {
  model: string;
  source: string | string[];
  standIn?: string;
  files: Record<string, SignatureFile>;
}

export interface IoSignature {
  name: string;
  dtype: string;
  rank: number;
}

interface ValueMeta {
  name: string;
  isTensor: boolean;
  type?: string;
  shape?: readonly unknown[];
}

/** A session's inputs and outputs as { name, dtype, rank }, in the session's order. */
export function signatureOf(session: { inputMetadata: readonly unknown[]; outputMetadata: readonly unknown[] }): { inputs: IoSignature[]; outputs: IoSignature[] } {
  const conv = (m: readonly unknown[]) =>
    (m as ValueMeta[]).map((v) => ({ name: v.name, dtype: v.isTensor ? String(v.type) : 'non-tensor', rank: v.isTensor ? (v.shape ?? []).length : -1 }));
  return { inputs: conv(session.inputMetadata), outputs: conv(session.outputMetadata) };
}

/** The number of layers a session has for the `perLayer` names of a file (0 when it has none). */
function layersIn(names: readonly string[], spec: SignatureFile): number {
  const pattern = [...spec.inputs, ...spec.outputs].find((e) => e.perLayer);
  if (!pattern) return 0;
  const re = new RegExp(`^${pattern.name.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace('{layer}', '(\\d+)')}$`);
  let n = 0;
  for (const name of names) {
    const m = re.exec(name);
    if (m) n = Math.max(n, Number(m[1]) + 1);
  }
  return n;
}

/**
 * Assert that `session` has exactly the signature `spec` (compared by name: the engines feed and
 * read by name). Optional inputs may be absent; per-layer names must be present for every layer
 * 0..L-1.
 */
export function expectSignature(session: { inputMetadata: readonly unknown[]; outputMetadata: readonly unknown[] }, spec: SignatureFile, label: string): void {
  const real = signatureOf(session);
  const layers = layersIn([...real.inputs, ...real.outputs].map((x) => x.name), spec);
  if ([...spec.inputs, ...spec.outputs].some((e) => e.perLayer)) expect(layers, `${label}: layers`).toBeGreaterThan(0);
  const expand = (entries: SignatureEntry[]) =>
    entries.flatMap((e) => (e.perLayer ? Array.from({ length: layers }, (_, l) => ({ ...e, name: e.name.replace('{layer}', String(l)) })) : [e]));
  const present = new Set(real.inputs.map((i) => i.name));
  const wantInputs = expand(spec.inputs)
    .filter((e) => !e.optional || present.has(e.name))
    .map(({ name, dtype, rank }) => ({ name, dtype, rank }));
  const byName = (a: IoSignature, b: IoSignature) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  expect([...real.inputs].sort(byName), `${label}: inputs`).toEqual([...wantInputs].sort(byName));
  expect([...real.outputs].sort(byName), `${label}: outputs`).toEqual(expand(spec.outputs).map(({ name, dtype, rank }) => ({ name, dtype, rank })).sort(byName));
}
