#!/usr/bin/python3
"""Write the ONNX model the ConvInteger rewrite test loads (packages/onnx/src/conv-integer.test.ts).

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-conv-integer-fixture.py packages/onnx/fixtures/conv-integer.onnx
x: float32[1, 8, L] is quantized once (DynamicQuantizeLinear, as onnxruntime's quantize_dynamic
does), then read by ConvInteger nodes of the kinds dynamically quantized exports have, each an
int32 output of the graph: pointwise; kernel 3 pad 1; kernel 5 dilation 3 pad 6; kernel 3
stride 2 pad 1; kernel 12 stride 6 pad 3 (Kokoro's noise_convs.0); kernel 7 pad 3 with its
weight's zero point in int32_data (as Kokoro's are) and one in raw_data. Two the rewrite must
leave alone: group 2, and one without the input zero point. Weights: uint8 from a fixed seed.
"""
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "conv-integer.onnx"
rng = np.random.default_rng(27)
C = 8
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, "L"])
nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"])]
inits = []
outputs = []
convs = [
    # name, out channels, kernel, dilation, stride, pads, group, zero point in raw_data, with input zero point
    ("pointwise", 6, 1, 1, 1, [0, 0], 1, True, True),
    ("k3", 8, 3, 1, 1, [1, 1], 1, False, True),
    ("k5_dil3", 4, 5, 3, 1, [6, 6], 1, False, True),
    ("k3_stride2", 5, 3, 1, 2, [1, 1], 1, False, True),
    ("k12_stride6", 3, 12, 1, 6, [3, 3], 1, False, True),
    ("k7_raw_zp", 8, 7, 1, 1, [3, 3], 1, True, True),
    ("group2", 4, 3, 1, 1, [1, 1], 2, False, True),
    ("no_input_zp", 4, 3, 1, 1, [1, 1], 1, False, False),
]
for name, o, k, d, s, p, g, raw_zp, with_xzp in convs:
    w = rng.integers(0, 256, size=(o, C // g, k), dtype=np.uint8)
    inits.append(numpy_helper.from_array(w, f"{name}_w"))
    zp = int(rng.integers(0, 256))
    if raw_zp:
        inits.append(numpy_helper.from_array(np.array(zp, dtype=np.uint8), f"{name}_wzp"))
    else:
        inits.append(helper.make_tensor(f"{name}_wzp", TensorProto.UINT8, [], [zp]))
    ins = ["xq", f"{name}_w", "xzp", f"{name}_wzp"] if with_xzp else ["xq", f"{name}_w"]
    nodes.append(helper.make_node("ConvInteger", ins, [name], name=f"/{name}/Conv_quant", kernel_shape=[k], dilations=[d], strides=[s], pads=p, group=g))
    outputs.append(helper.make_tensor_value_info(name, TensorProto.INT32, [1, o, f"L_{name}"]))
graph = helper.make_graph(nodes, "conv-integer", [x], outputs, initializer=inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dub-tests")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, out)
print(f"wrote {out}")
