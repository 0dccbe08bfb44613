#!/usr/bin/python3
"""Write the ONNX model the DequantizeLinear -> MatMul rewrite test loads
(packages/onnx/src/dequant-matmul.test.ts).

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-dequant-matmul-fixture.py packages/onnx/fixtures/dequant-matmul.onnx
Shaped as the merged decoders of the q8 Whisper exports: a uint8 table `w_q` [V, D] with one
scale and zero point, outside an If; each branch gathers a row of it (Gather, DequantizeLinear of
the row) and multiplies `a` [1, D] by the table transposed and dequantized (Transpose,
DequantizeLinear, MatMul -> `logits` [1, V]): the pair the rewrite turns into
DynamicQuantizeMatMul. Left alone: in the else branch a dequantized table that a second node also
reads (its MatMul and an Identity output), and at the top level a MatMul on a table with a scale
per column (`per_column` [1, 5]).
"""
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "dequant-matmul.onnx"
rng = np.random.default_rng(27)
V, D = 40, 16
w_q = rng.integers(0, 256, size=(V, D), dtype=np.uint8)
w2_q = rng.integers(0, 256, size=(D, 5), dtype=np.uint8)
inits = [
    numpy_helper.from_array(w_q, "w_q"),
    numpy_helper.from_array(np.array(0.013, dtype=np.float32), "w_scale"),
    numpy_helper.from_array(np.array(131, dtype=np.uint8), "w_zp"),
    numpy_helper.from_array(w2_q, "w2_q"),
    numpy_helper.from_array(np.linspace(0.01, 0.02, 5).astype(np.float32), "w2_scale"),
    numpy_helper.from_array(np.full(5, 128, dtype=np.uint8), "w2_zp"),
    numpy_helper.from_array(np.array([3], dtype=np.int64), "row"),
]

def branch(name, shared_reader):
    nodes = [
        helper.make_node("Gather", ["w_q", "row"], [f"{name}_row_q"], name=f"{name}_gather"),
        helper.make_node("DequantizeLinear", [f"{name}_row_q", "w_scale", "w_zp"], [f"{name}_row"], name=f"{name}_row_dq"),
        helper.make_node("Transpose", ["w_q"], [f"{name}_wt_q"], name=f"{name}_transpose"),
        helper.make_node("DequantizeLinear", [f"{name}_wt_q", "w_scale", "w_zp"], [f"{name}_wt"], name=f"{name}_wt_dq"),
        helper.make_node("MatMul", ["a", f"{name}_wt"], [f"{name}_logits"], name=f"{name}_proj"),
    ]
    outs = [helper.make_tensor_value_info(f"{name}_logits", TensorProto.FLOAT, [1, V]), helper.make_tensor_value_info(f"{name}_row", TensorProto.FLOAT, [1, D])]
    if shared_reader:
        nodes.append(helper.make_node("Identity", [f"{name}_wt"], [f"{name}_wt_copy"], name=f"{name}_copy"))
        outs.append(helper.make_tensor_value_info(f"{name}_wt_copy", TensorProto.FLOAT, [D, V]))
    else:
        outs.append(helper.make_tensor_value_info(f"{name}_none", TensorProto.FLOAT, [D, V]))
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_wt_q", "w_scale", "w_zp"], [f"{name}_none"], name=f"{name}_wt_dq_out"))
    return helper.make_graph(nodes, name, [], outs)

nodes = [
    helper.make_node("If", ["use_cache"], ["logits", "row_f", "table_f"], name="branches", then_branch=branch("then", False), else_branch=branch("else", True)),
    helper.make_node("DequantizeLinear", ["w2_q", "w2_scale", "w2_zp"], ["w2"], name="w2_dq", axis=1),
    helper.make_node("MatMul", ["a", "w2"], ["per_column"], name="per_column_proj"),
]
graph = helper.make_graph(
    nodes,
    "dequant-matmul",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, D]), helper.make_tensor_value_info("use_cache", TensorProto.BOOL, [1])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, V]), helper.make_tensor_value_info("row_f", TensorProto.FLOAT, [1, D]), helper.make_tensor_value_info("table_f", TensorProto.FLOAT, [D, V]), helper.make_tensor_value_info("per_column", TensorProto.FLOAT, [1, 5])],
    inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make-dequant-matmul-fixture")
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, out)
