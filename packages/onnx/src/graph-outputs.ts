/**
 * A model loaded with only the graph outputs its caller reads. onnxruntime runs every node of the
 * graph whatever outputs a run asks for, and keeps every graph output it computed until the run
 * returns: an output the caller never reads costs its memory for the whole run. Whisper base's
 * encoder (the Hugging Face export) outputs its six attention maps beside `last_hidden_state`:
 * [1, 8, 1500, 1500] floats each, 432 MB held to the end of every 30 s window, where as an
 * intermediate each is freed after its last use (peak of one window 698 MB -> 286 MB, the same
 * `last_hidden_state` bit for bit, in less CPU time).
 *
 * `keepGraphOutputs` drops the other entries of the graph's output list and copies every other
 * byte of the model as it is: the nodes, weights and the kept outputs are the same, so what the
 * kept outputs compute does not change. `graphOutputsModelFile` keeps the result in the derived-models folder,
 * made once per model file.
 */
import { ModelError } from '@dub/core';
import { fields, str, Writer } from './conv-integer.js';
import { derivedModelFile } from './derived-model.js';

const MODEL_GRAPH = 7;
const GRAPH_OUTPUT = 12;
const VALUE_INFO_NAME = 1;

export interface GraphOutputsTrim {
  /** The model with only the kept outputs (the input itself when nothing was dropped). */
  bytes: Uint8Array;
  /** The graph outputs dropped, in the model's order. */
  dropped: string[];
}

/**
 * The model with `keep` as its only graph outputs (in the model's order). Throws a ModelError
 * naming them when one of `keep` is not an output of the model, or `keep` is empty.
 */
export function keepGraphOutputs(model: Uint8Array, keep: readonly string[]): GraphOutputsTrim {
  if (keep.length === 0) throw new ModelError('keepGraphOutputs: keep at least one output');
  const out = new Writer();
  const dropped: string[] = [];
  const found = new Set<string>();
  let graphs = 0;
  for (const f of fields(model)) {
    if (f.no !== MODEL_GRAPH || f.wire !== 2) {
      out.raw(model.subarray(f.start, f.end));
      continue;
    }
    graphs++;
    const g = new Writer();
    for (const h of fields(model, f.from, f.to)) {
      if (h.no === GRAPH_OUTPUT && h.wire === 2) {
        let name = '';
        for (const v of fields(model, h.from, h.to)) if (v.no === VALUE_INFO_NAME && v.wire === 2) name = str(model, v);
        if (!keep.includes(name)) {
          dropped.push(name);
          continue;
        }
        found.add(name);
      }
      g.raw(model.subarray(h.start, h.end));
    }
    out.message(MODEL_GRAPH, g);
  }
  const missing = keep.filter((k) => !found.has(k));
  if (graphs !== 1 || missing.length) {
    throw new ModelError(`the model has no graph output${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ') || '(no graph)'} to keep`, { details: { missing } });
  }
  return { bytes: dropped.length ? out.join() : model, dropped };
}

/**
 * Whether sessions asked for some outputs only (SessionOptions.outputs) load the trimmed model:
 * `DUB_ONNX_GRAPH_OUTPUTS`, `trim` (the default) or `all` (every model as shipped: the previous
 * behaviour, for comparisons such as bench/e2e.mjs --before-env).
 */
export function graphOutputsTrimmed(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.DUB_ONNX_GRAPH_OUTPUTS ?? '').trim().toLowerCase();
  if (v === '' || v === 'trim') return true;
  if (v === 'all') return false;
  throw new RangeError(`DUB_ONNX_GRAPH_OUTPUTS must be trim or all, got "${env.DUB_ONNX_GRAPH_OUTPUTS}"`);
}

/** Bump when what keepGraphOutputs writes changes: cached files of an older version are not used. */
export const GRAPH_OUTPUTS_VERSION = 1;

export interface GraphOutputsModel {
  /** The file to load: the kept trim, or the model itself when it has no other outputs. */
  file?: string;
  /** The trimmed model, when it could not be kept on disk. */
  bytes?: Uint8Array;
  dropped: string[];
  /** Whether this call made the trim (false: taken from the folder). */
  made: boolean;
}

/**
 * `file` with only the graph outputs `keep` (keepGraphOutputs): from the derived-models folder
 * when made before for this file (same path, size and modification time), the same outputs and
 * version; otherwise made now and stored there (written whole, then renamed into place), with a
 * record of what was dropped. Where the folder cannot be written, the trimmed bytes are returned.
 */
export async function graphOutputsModelFile(file: string, keep: readonly string[], opts: { dir?: string } = {}): Promise<GraphOutputsModel> {
  return derivedModelFile(
    file,
    {
      suffix: `outputs-${keep.length}`,
      key: `${keep.join('\n')}|v${GRAPH_OUTPUTS_VERSION}`,
      record: { version: GRAPH_OUTPUTS_VERSION, kept: keep },
      derive: (model) => {
        const r = keepGraphOutputs(model, keep);
        return { bytes: r.bytes, changed: r.dropped.length > 0, facts: { dropped: r.dropped } };
      },
    },
    opts.dir,
  );
}
