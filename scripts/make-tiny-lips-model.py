#!/usr/bin/python3
"""Write a tiny Wav2Lip-compatible model for the @dub/lips plumbing tests.

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-tiny-lips-model.py packages/lips/fixtures/tiny-wav2lip.onnx

Same inputs and output as the Wav2Lip ONNX export listed in models/manifest.json
(wav2lip-gan-96): source float32[B,1,80,16] (normalised mel window, [-4, 4]) and target
float32[B,6,96,96] (masked face crop + reference crop, BGR, [0, 1]) -> output float32[B,3,96,96]
(the generated face, BGR, [0, 1]). It is no lips model: the output is the reference crop
(target channels 3..5) with its lower half shifted by (mean(source) + 4) * 0.12 - 0.4 and
clipped to [0, 1], so the lower half is darker for quiet audio and brighter for loud audio and
the upper half is the reference exactly; tests can check the mel plumbing, the channel layout
and the paste-back.
"""
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "tiny-wav2lip.onnx"
S = 96

mask = np.zeros((1, 1, S, S), dtype=np.float32)
mask[:, :, S // 2:, :] = 1.0

inits = [
    numpy_helper.from_array(mask, "lower_mask"),
    numpy_helper.from_array(np.array([3], dtype=np.int64), "c_start"),
    numpy_helper.from_array(np.array([6], dtype=np.int64), "c_end"),
    numpy_helper.from_array(np.array([1], dtype=np.int64), "c_axis"),
    numpy_helper.from_array(np.array(4.0, dtype=np.float32), "four"),
    numpy_helper.from_array(np.array(0.12, dtype=np.float32), "gain"),
    numpy_helper.from_array(np.array(0.4, dtype=np.float32), "bias"),
    numpy_helper.from_array(np.array(0.0, dtype=np.float32), "lo"),
    numpy_helper.from_array(np.array(1.0, dtype=np.float32), "hi"),
]
nodes = [
    helper.make_node("Slice", ["target", "c_start", "c_end", "c_axis"], ["reference"]),
    helper.make_node("ReduceMean", ["source"], ["mel_mean"], axes=[1, 2, 3], keepdims=1),
    helper.make_node("Add", ["mel_mean", "four"], ["mel_pos"]),
    helper.make_node("Mul", ["mel_pos", "gain"], ["mel_gain"]),
    helper.make_node("Sub", ["mel_gain", "bias"], ["shift"]),
    helper.make_node("Mul", ["shift", "lower_mask"], ["shift_map"]),
    helper.make_node("Add", ["reference", "shift_map"], ["raw"]),
    helper.make_node("Clip", ["raw", "lo", "hi"], ["output"]),
]
graph = helper.make_graph(
    nodes,
    "tiny_wav2lip",
    [
        helper.make_tensor_value_info("source", TensorProto.FLOAT, ["batch", 1, 80, 16]),
        helper.make_tensor_value_info("target", TensorProto.FLOAT, ["batch", 6, S, S]),
    ],
    [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 3, S, S])],
    inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tiny-lips")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, out)
print(f"wrote {out}")
