#!/usr/bin/python3
"""Split htdemucs.onnx into parts that run one after another, to bound memory on CPU.

One run of the whole HTDemucs graph on CPU peaks at ~2.5-2.9 GB: onnxruntime plans the memory of
the whole graph at once, and the encoders' skip connections, the cross-transformer's attention
scores and the decoders' maps are all alive in that plan. Run as consecutive parts (the same
nodes, the same weights, in the same order), each part's own intermediates are freed when it
returns and only the tensors that later parts read travel between them: one segment peaks at
~0.9 GB with the allocator setting `dub` uses, ~1.5 GB without (bench/separation-fast.mjs
measures them in one run). The outputs equal the whole
graph's within float rounding (max difference ~4e-6 on unit-scale outputs).

The parts are cut before the node groups named in CUTS (the first node whose name starts with
the prefix); every tensor a part reads that it does not make is an input of that part, every
tensor it makes that a later part (or the graph's output) reads is an output. Nothing is
computed differently, so any change of CUTS only moves memory and time.

Usage (Debian's python3-onnx; run by scripts/fetch-npm-models.sh):
  /usr/bin/python3 scripts/split-htdemucs.py SRC/htdemucs.onnx DEST_DIR
Writes DEST_DIR/part-NN.onnx and DEST_DIR/plan.json (format dub.htdemucs-split/1) naming the
source file's sha256 and size, which the engine checks before it uses the parts.
"""
import hashlib
import json
import os
import sys

import onnx
from onnx import helper, shape_inference

CUTS = [
    # encoders | cross-transformer layers 0 | 1-2 | 3-4 | decoders 0-1 | 2 | 3.
    # Measured per 7.8 s segment on 2 cores (bare process, MALLOC_MMAP_THRESHOLD_=1048576):
    # whole graph 2.7-2.9 GB; these 7 parts 0.84 GB at +3-5% time; 24 finer parts (each encoder
    # step and transformer layer alone) 0.98 GB at +40% time; 5 parts (transformer whole) 1.14 GB.
    '/crosstransformer',
    '/crosstransformer/layers.1',
    '/crosstransformer/layers.3',
    '/decoder.0', '/decoder.2', '/decoder.3',
]

FORMAT = 'dub.htdemucs-split/1'


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def dims(value):
    return [d.dim_value if d.HasField('dim_value') else d.dim_param for d in value.type.tensor_type.shape.dim]


def main(src, dest):
    model = onnx.load(src)
    graph = model.graph
    inferred = shape_inference.infer_shapes(model)
    types = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        if v.type.tensor_type.elem_type:
            types[v.name] = v.type.tensor_type.elem_type
    inits = {i.name: i for i in graph.initializer}
    nodes = list(graph.node)
    for n in nodes:
        for a in n.attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                raise SystemExit(f'{src}: node {n.name} has a subgraph; this splitter handles flat graphs only')
    starts = [0]
    for prefix in CUTS:
        at = next((i for i, n in enumerate(nodes) if n.name.startswith(prefix)), None)
        if at is None:
            raise SystemExit(f'{src}: no node named {prefix}*: not the HTDemucs graph this splitter knows')
        starts.append(at)
    if starts != sorted(starts) or len(set(starts)) != len(starts):
        raise SystemExit(f'{src}: the cut points are not in graph order')
    starts.append(len(nodes))
    graph_outputs = [o.name for o in graph.output]
    os.makedirs(dest, exist_ok=True)
    parts = []
    for p in range(len(starts) - 1):
        a, b = starts[p], starts[p + 1]
        sub = nodes[a:b]
        made = {o for n in sub for o in n.output}
        inputs, seen = [], set()
        for n in sub:
            for x in n.input:
                if x and x not in made and x not in inits and x not in seen:
                    seen.add(x)
                    inputs.append(x)
        later = {x for n in nodes[b:] for x in n.input}
        outputs = [o for n in sub for o in n.output if o and (o in later or o in graph_outputs)]
        used, weights = set(), []
        for n in sub:
            for x in n.input:
                if x in inits and x not in used:
                    used.add(x)
                    weights.append(inits[x])
        for x in inputs + outputs:
            if x not in types:
                raise SystemExit(f'{src}: no element type for {x}')
        part = helper.make_graph(
            sub, f'htdemucs_part{p:02d}',
            [helper.make_tensor_value_info(x, types[x], None) for x in inputs],
            [helper.make_tensor_value_info(x, types[x], None) for x in outputs],
            weights)
        pm = helper.make_model(part, opset_imports=model.opset_import, ir_version=model.ir_version,
                               producer_name='dub scripts/split-htdemucs.py')
        name = f'part-{p:02d}.onnx'
        path = os.path.join(dest, name)
        onnx.save(pm, path)
        parts.append({'file': name, 'sha256': sha256(path), 'size': os.path.getsize(path), 'nodes': b - a,
                      'inputs': inputs, 'outputs': outputs})
    plan = {
        'format': FORMAT,
        'source': {'file': os.path.basename(src), 'sha256': sha256(src), 'size': os.path.getsize(src)},
        'splitter_sha256': sha256(os.path.abspath(__file__)),
        'inputs': [{'name': i.name, 'shape': dims(i)} for i in graph.input],
        'outputs': [{'name': o.name, 'shape': dims(o)} for o in inferred.graph.output],
        'cuts': CUTS,
        'parts': parts,
    }
    with open(os.path.join(dest, 'plan.json'), 'w') as f:
        json.dump(plan, f, indent=1)
        f.write('\n')
    print(f'{len(parts)} parts of {os.path.basename(src)} in {dest}')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        raise SystemExit('usage: split-htdemucs.py SRC/htdemucs.onnx DEST_DIR')
    main(sys.argv[1], sys.argv[2])
