#!/usr/bin/env python3
"""onnxruntime's dynamic int8 quantization of a small MatMul model, as a reference for
scripts/quantize-htdemucs.py's own quantizer (packages/separation/src/quantize-int8.test.ts).

    python3 -m venv /tmp/venv-ort && /tmp/venv-ort/bin/pip install onnxruntime==1.30.0 onnx numpy
    /tmp/venv-ort/bin/python scripts/make-quantize-references.py
        writes packages/separation/fixtures/quantize-tiny.onnx (the float model, built here from a
        fixed seed) and packages/separation/fixtures/quantize-references.json: what
        onnxruntime.quantization.quantize_dynamic(op_types_to_quantize=['MatMul'],
        per_channel=False, weight_type=QInt8) makes of it (describe() below), the model's input
        values and float weights (for the test's error bounds), and the onnxruntime version.
    python3 scripts/make-quantize-references.py --describe FILE
        prints describe(FILE) as JSON (onnx + numpy only: the test runs it with /usr/bin/python3)
    python3 scripts/make-quantize-references.py --compare A.onnx B.onnx
        compares two quantized models (e.g. the real htdemucs quantized by both backends): node
        sets, every int8 weight, scale and zero point, and the float initializers left.

The model has MatMul weights of awkward ranges: asymmetric ([-0.3, 2.7]), all negative, tiny
(~1e-6), huge (~1e4), all zero (scale 1.0), and values that fall exactly halfway between two
int8 steps (rounding: halves to even); an activation read by several MatMuls (one
DynamicQuantizeLinear); a MatMul of two activations (stays float); Gemms that the quantizer
rewrites to MatMul (+ Add) (transB 1 with a bias, transB 0 without) and one it leaves (alpha 0.5).
"""
import hashlib
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, 'packages', 'separation', 'fixtures')
MODEL = os.path.join(FIXTURES, 'quantize-tiny.onnx')
OUT = os.path.join(FIXTURES, 'quantize-references.json')
SEED = 20261125


def weights():
    rng = np.random.default_rng(SEED)
    f = np.float32
    step = f(2.0 ** -7)  # absmax 127 * 2^-7 gives the scale 2^-7 exactly: w / scale is then a half-integer
    halves = (rng.integers(-127, 127, size=(8, 4)) + 0.5).astype(f) * step
    halves[0, 0] = f(127) * step
    huge = rng.normal(0, 1e4, size=(8, 5)).astype(f)
    huge[3, 2] = f(-7.5e4)
    return {
        'W1': rng.uniform(-0.3, 2.7, size=(16, 8)).astype(f),        # asymmetric range
        'W2': -rng.uniform(0.02, 5.1, size=(16, 8)).astype(f),       # all negative
        'W3': rng.normal(0, 1e-6, size=(8, 8)).astype(f),            # tiny
        'W4': rng.normal(0, 0.5, size=(6, 8)).astype(f),             # Gemm transB=1 (stored [N, K])
        'C4': rng.normal(0, 0.1, size=(6,)).astype(f),               # its bias
        'W5': halves,                                                 # exact halves
        'W6': np.zeros((16, 3), dtype=f),                             # all zero
        'W7': huge,                                                   # huge
        'W8': rng.normal(0, 0.2, size=(16, 2)).astype(f),            # Gemm transB=0, no bias
        'W9': rng.normal(0, 0.2, size=(16, 2)).astype(f),            # Gemm alpha=0.5: stays Gemm
        'X': rng.normal(0, 1, size=(4, 16)).astype(f),               # the input the test feeds
    }


def build():
    w = weights()
    inits = [numpy_helper.from_array(v, k) for k, v in w.items() if k != 'X']
    n = helper.make_node
    nodes = [
        n('MatMul', ['X', 'W1'], ['Y1'], name='mm1'),
        n('MatMul', ['X', 'W2'], ['Y2'], name='mm2'),
        n('MatMul', ['Y1', 'W3'], ['Y3'], name='mm3'),
        n('Gemm', ['Y2', 'W4', 'C4'], ['Y4'], name='gemm4', transB=1),
        n('MatMul', ['Y2', 'W5'], ['Y5'], name='mm5'),
        n('MatMul', ['X', 'W6'], ['Y6'], name='mm6'),
        n('Transpose', ['Y2'], ['Y2t'], name='t2'),
        n('MatMul', ['Y1', 'Y2t'], ['Y7'], name='mm7'),
        n('MatMul', ['Y1', 'W7'], ['Y8'], name='mm8'),
        n('Gemm', ['X', 'W8'], ['Y9'], name='gemm9'),
        n('Gemm', ['X', 'W9'], ['Y10'], name='gemm10', alpha=0.5),
    ]
    shapes = {'Y1': [4, 8], 'Y3': [4, 8], 'Y4': [4, 6], 'Y5': [4, 4], 'Y6': [4, 3], 'Y7': [4, 4], 'Y8': [4, 5], 'Y9': [4, 2], 'Y10': [4, 2]}
    graph = helper.make_graph(nodes, 'quantize_tiny', [helper.make_tensor_value_info('X', TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in shapes.items()], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)], producer_name='dub scripts/make-quantize-references.py')
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, w


def _attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = 'tensor sha256 ' + hashlib.sha256(v.SerializeToString()).hexdigest()
        elif isinstance(v, bytes):
            v = v.decode('utf8', 'replace')
        elif isinstance(v, (list, tuple)):
            v = [x.decode('utf8', 'replace') if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def describe(path, values=True):
    """The quantization of the model at `path`, independent of node order: every node (type, name,
    inputs, outputs, attributes), sorted; every quantized weight (`*_quantized`, int8) with its
    scale and zero point (values, or a sha256 when values=False); the other initializers' names,
    types, shapes and content sha256."""
    m = onnx.load(path)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes = sorted([[nd.op_type, nd.name, list(nd.input), list(nd.output), _attrs(nd)] for nd in g.node],
                   key=lambda x: json.dumps(x, sort_keys=True))
    quantized = {}
    for name, t in sorted(inits.items()):
        if not name.endswith('_quantized') or t.data_type != TensorProto.INT8:
            continue
        base = name[:-len('_quantized')]
        q = numpy_helper.to_array(t)
        s, z = inits.get(base + '_scale'), inits.get(base + '_zero_point')
        quantized[base] = {
            'dims': list(t.dims),
            'int8': q.reshape(-1).astype(int).tolist() if values else hashlib.sha256(q.tobytes()).hexdigest(),
            'scale': numpy_helper.to_array(s).reshape(-1).astype(float).tolist() if s is not None else None,
            'scaleType': s.data_type if s is not None else None,
            'zeroPoint': numpy_helper.to_array(z).reshape(-1).astype(int).tolist() if z is not None else None,
            'zeroPointType': z.data_type if z is not None else None,
        }
    rest = {name: {'type': t.data_type, 'dims': list(t.dims), 'sha256': hashlib.sha256(numpy_helper.to_array(t).tobytes()).hexdigest()}
            for name, t in sorted(inits.items())
            if not any(name == b + sfx for b in quantized for sfx in ('_quantized', '_scale', '_zero_point'))}
    op_types = {}
    for nd in g.node:
        op_types[nd.op_type] = op_types.get(nd.op_type, 0) + 1
    return {'opTypes': dict(sorted(op_types.items())), 'nodes': nodes, 'quantized': quantized, 'otherInitializers': rest,
            'inputs': [v.name for v in g.input], 'outputs': [v.name for v in g.output]}


def compare(a_path, b_path):
    """Print how two quantized models differ; exit 1 if they do."""
    a, b = onnx.load(a_path).graph, onnx.load(b_path).graph
    ai, bi = {i.name: i for i in a.initializer}, {i.name: i for i in b.initializer}
    sig = lambda nd: json.dumps([nd.op_type, nd.name, list(nd.input), list(nd.output), _attrs(nd)], sort_keys=True)
    an, bn = sorted(sig(x) for x in a.node), sorted(sig(x) for x in b.node)
    only_a, only_b = sorted(set(an) - set(bn)), sorted(set(bn) - set(an))
    report = {'nodes': [len(an), len(bn)], 'nodes_only_in_a': only_a[:10], 'nodes_only_in_b': only_b[:10],
              'initializers_only_in_a': sorted(set(ai) - set(bi))[:10], 'initializers_only_in_b': sorted(set(bi) - set(ai))[:10]}
    n_q, max_q, max_s, differing, same = 0, 0, 0.0, [], 0
    for name in sorted(set(ai) & set(bi)):
        x, y = numpy_helper.to_array(ai[name]), numpy_helper.to_array(bi[name])
        if ai[name].data_type != bi[name].data_type or x.shape != y.shape:
            differing.append(f'{name}: type/shape {ai[name].data_type}{x.shape} vs {bi[name].data_type}{y.shape}')
            continue
        if name.endswith('_quantized') and x.dtype == np.int8:
            n_q += 1
            max_q = max(max_q, int(np.abs(x.astype(int) - y.astype(int)).max()) if x.size else 0)
        if name.endswith('_scale') and x.dtype == np.float32:
            max_s = max(max_s, float(np.abs(x.astype(np.float64) - y.astype(np.float64)).max()))
        if x.tobytes() == y.tobytes():
            same += 1
        else:
            differing.append(name)
    report.update({'quantized_weights': n_q, 'max_int8_difference': max_q, 'max_scale_difference': max_s,
                   'initializers_equal': same, 'initializers_differing': differing[:10], 'n_initializers_differing': len(differing)})
    print(json.dumps(report, indent=1))
    ok = not (only_a or only_b or report['initializers_only_in_a'] or report['initializers_only_in_b'] or differing)
    print('equal' if ok else 'DIFFERENT')
    return 0 if ok else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--describe':
        print(json.dumps(describe(sys.argv[2])))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == '--compare':
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 1:
        raise SystemExit(__doc__)
    import tempfile

    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic
    model, w = build()
    os.makedirs(FIXTURES, exist_ok=True)
    onnx.save(model, MODEL)
    with tempfile.TemporaryDirectory() as tmp:
        q = os.path.join(tmp, 'q.onnx')
        quantize_dynamic(MODEL, q, op_types_to_quantize=['MatMul'], per_channel=False, weight_type=QuantType.QInt8)
        ref = describe(q)
        # The float and quantized outputs onnxruntime (Python) gives: the test compares onnxruntime-node's to them.
        feeds = {'X': w['X']}
        outs = {}
        for tag, path in (('float', MODEL), ('quantized', q)):
            s = onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])
            outs[tag] = {o.name: v.reshape(-1).astype(float).tolist() for o, v in zip(s.get_outputs(), s.run(None, feeds))}
    data = {
        'source': 'scripts/make-quantize-references.py',
        'made_with': {'onnxruntime': onnxruntime.__version__, 'onnx': onnx.__version__, 'numpy': np.__version__},
        'call': "quantize_dynamic(model, out, op_types_to_quantize=['MatMul'], per_channel=False, weight_type=QuantType.QInt8)",
        'model': os.path.relpath(MODEL, ROOT),
        'model_sha256': hashlib.sha256(open(MODEL, 'rb').read()).hexdigest(),
        'input': {'name': 'X', 'dims': list(w['X'].shape), 'values': w['X'].reshape(-1).astype(float).tolist()},
        'float_weights': {k: {'dims': list(v.shape), 'values': v.reshape(-1).astype(float).tolist()} for k, v in w.items() if k != 'X'},
        'reference': ref,
        'onnxruntime_outputs': outs,
    }
    with open(OUT, 'w') as f:
        json.dump(data, f, indent=1)
        f.write('\n')
    print(f'{MODEL}, {OUT}: {len(ref["quantized"])} quantized weights, op types {ref["opTypes"]}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
