#!/usr/bin/python3
"""Write ONNX graphs with the architecture of the Spleeter 2-stems export and random weights, for
timing only (bench/separation-compare.mjs --spleeter-models DIR): inference time depends on the
graph and its shapes, not on the weights' values, so these time what the real files would, while
their separations mean nothing (the bench labels them so).

Run with Debian's python3-onnx (writes DIR/spleeter-2stems/{vocals,accompaniment}.onnx, 39 MB each,
and architecture-only.json, the marker the bench reads):
  /usr/bin/python3 scripts/make-spleeter-architecture.py DIR

The U-Net of k2-fsa/sherpa-onnx scripts/spleeter/unet.py (2stems: LeakyReLU(0.2) after the
encoder's batch norms, ReLU before the decoder's), as export_onnx.py exports it: x float32[2,
"num_splits", 512, 1024] permuted to (splits, 2, 512, 1024); six encoder steps (pad (1, 2) on both
spatial axes, Conv 5x5 stride 2: 2 -> 16 -> 32 -> 64 -> 128 -> 256 -> 512 channels, batch norm,
LeakyReLU; the last without them); five decoder steps (ConvTranspose 5x5 stride 2, crop [1:-2],
ReLU, batch norm, concatenated with the encoder's conv output of the same size) and a sixth to one
channel; Conv 4x4 dilation 2 pad 3 to two channels, sigmoid, times the input, permuted back to y.
Parameter count printed: 9,824,711 per stem (batch norm statistics included), 39,305,049 bytes
against the export's 39,318,336 for vocals.onnx (0.03% apart: names and the exporter's extra
nodes; a 4-stems port of the same U-Net counts 9,826,759, 2048 more, likely the unused batch norm
of the last encoder conv that TF Spleeter computes). Weights: He-normal convolutions, batch norms at identity
statistics, a fixed seed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(stem, seed):
    rng = np.random.default_rng(seed)
    inits, nodes = [], []
    count = [0]

    def init(name, arr):
        arr = arr.astype(np.float32)
        count[0] += arr.size
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def conv(x, name, cin, cout, k, stride=1, dilation=1, pad=0):
        w = init(f"{name}.weight", rng.normal(0, np.sqrt(2 / (cin * k * k)), (cout, cin, k, k)))
        b = init(f"{name}.bias", np.zeros(cout))
        nodes.append(helper.make_node("Conv", [x, w, b], [name], kernel_shape=[k, k], strides=[stride, stride], dilations=[dilation, dilation], pads=[pad] * 4))
        return name

    def convt(x, name, cin, cout):
        w = init(f"{name}.weight", rng.normal(0, np.sqrt(2 / (cin * 25)), (cin, cout, 5, 5)))
        b = init(f"{name}.bias", np.zeros(cout))
        nodes.append(helper.make_node("ConvTranspose", [x, w, b], [name], kernel_shape=[5, 5], strides=[2, 2]))
        return name

    def bn(x, name, c):
        ins = [x] + [init(f"{name}.{p}", v) for p, v in (("weight", np.ones(c)), ("bias", np.zeros(c)), ("running_mean", np.zeros(c)), ("running_var", np.ones(c)))]
        nodes.append(helper.make_node("BatchNormalization", ins, [name], epsilon=1e-3))
        return name

    def pad(x, name):
        # torch F.pad(x, (1, 2, 1, 2)): 1 before and 2 after on both spatial axes
        nodes.append(helper.make_node("Pad", [x, "pads"], [name], mode="constant"))
        return name

    crop = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in (("crop_starts", [1, 1]), ("crop_ends", [-2, -2]), ("crop_axes", [2, 3]))]
    inits.extend(crop)
    inits.append(numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 2, 2], dtype=np.int64), "pads"))

    nodes.append(helper.make_node("Transpose", ["x"], ["in_x"], perm=[1, 0, 2, 3]))
    chans = [2, 16, 32, 64, 128, 256, 512]
    h = "in_x"
    convs = []
    for i in range(6):
        p = pad(h, f"pad{i}")
        c = conv(p, f"conv{i}", chans[i], chans[i + 1], 5, stride=2)
        convs.append(c)
        if i < 5:
            b = bn(c, f"bn{i}", chans[i + 1])
            h = f"act{i}"
            nodes.append(helper.make_node("LeakyRelu", [b], [h], alpha=0.2))
    h = convs[5]
    dec = [(512, 256), (512, 128), (256, 64), (128, 32), (64, 16), (32, 1)]
    for j, (cin, cout) in enumerate(dec):
        u = convt(h, f"up{j + 1}", cin, cout)
        nodes.append(helper.make_node("Slice", [u, "crop_starts", "crop_ends", "crop_axes"], [f"up{j + 1}.crop"]))
        nodes.append(helper.make_node("Relu", [f"up{j + 1}.crop"], [f"up{j + 1}.relu"]))
        b = bn(f"up{j + 1}.relu", f"bn{j + 5}", cout)
        if j < 5:
            h = f"merge{j + 1}"
            nodes.append(helper.make_node("Concat", [convs[4 - j], b], [h], axis=1))
        else:
            h = b
    u7 = conv(h, "up7", 1, 2, 4, dilation=2, pad=3)
    nodes.append(helper.make_node("Sigmoid", [u7], ["mask"]))
    nodes.append(helper.make_node("Mul", ["mask", "in_x"], ["masked"]))
    nodes.append(helper.make_node("Transpose", ["masked"], ["y"], perm=[1, 0, 2, 3]))
    graph = helper.make_graph(
        nodes,
        f"spleeter_architecture_{stem}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "num_splits", 512, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "Transposey_dim_1", 512, 1024])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-spleeter-architecture")
    model.ir_version = 8
    for key, value in {"model_type": "spleeter", "stems": 2, "comment": f"{stem} (random weights: architecture only)"}.items():
        meta = model.metadata_props.add()
        meta.key = key
        meta.value = str(value)
    onnx.checker.check_model(model)
    return model, count[0]


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "spleeter-2stems")
    os.makedirs(out, exist_ok=True)
    for i, stem in enumerate(["vocals", "accompaniment"]):
        model, n = build(stem, 1234 + i)
        path = os.path.join(out, f"{stem}.onnx")
        onnx.save(model, path)
        print(f"{path}: {n} parameters (batch norm statistics included), {os.path.getsize(path)} bytes")
    # the bench reads this marker and labels its figures: time and memory only
    with open(os.path.join(out, "architecture-only.json"), "w") as f:
        f.write('{"weights": "random (scripts/make-spleeter-architecture.py)", "use": "timing only: the separations mean nothing"}\n')


if __name__ == "__main__":
    main()
