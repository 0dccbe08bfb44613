#!/usr/bin/python3
"""Write the tiny ONNX model the core session-cache tests load.

Run with Debian's python3-onnx:  /usr/bin/python3 scripts/make-tiny-onnx.py packages/onnx/fixtures/tiny.onnx
The model computes y = x * 2 + bias, with x: float32[batch, 4], bias: float32[4] (an initializer),
and a second output z = ReduceSum(y, axis 1) of shape [batch, 1].
"""
import sys
import onnx
from onnx import helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "tiny.onnx"
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 1])
two = helper.make_tensor("two", TensorProto.FLOAT, [1], [2.0])
bias = helper.make_tensor("bias", TensorProto.FLOAT, [4], [0.5, -1.0, 0.0, 3.0])
axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
nodes = [
    helper.make_node("Mul", ["x", "two"], ["x2"]),
    helper.make_node("Add", ["x2", "bias"], ["y"]),
    helper.make_node("ReduceSum", ["y", "axes"], ["z"], keepdims=1),
]
graph = helper.make_graph(nodes, "tiny", [x], [y, z], initializer=[two, bias, axes])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tests")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, out)
print(f"wrote {out}")
