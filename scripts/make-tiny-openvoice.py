#!/usr/bin/python3
"""Write a tiny stand-in for the OpenVoice V2 tone-colour converter's ONNX export, for the
@dub/voice plumbing tests.

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-tiny-openvoice.py packages/voice/fixtures/openvoice-tiny

Same files, inputs and outputs as the export that season-studio/MeloTTS-ONNX's
OpenVoiceToneClone_ONNX loads (melo_onnx/main.py at ddfb27be; the model folder
seasonstudio/openvoice_tone_clone_onnx): configuration.json (data.filter_length, hop_length,
win_length, sampling_rate), tone_color_extract_model.onnx (input float32[1,T,513] linear
spectrogram frames -> float32[1,256] tone colour) and tone_clone_model.onnx (audio
float32[1,513,T], audio_length int64[1], src_tone float32[1,256,1], dest_tone float32[1,256,1],
tau float32[1] -> float32[1,1,T*256] waveform). It is no voice model: the tone is a fixed
projection of the mean spectrum; the output waveform is, for every frame, 256 samples of the
frame's mean magnitude times (1 + tau * mean(dest_tone - src_tone)) * 1e-3, so tests can check
the plumbing (frames, hop, tone difference, tau) exactly.
"""
import json
import os
import sys
import onnx
from onnx import helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "openvoice-tiny"
os.makedirs(out, exist_ok=True)
BINS, TONE, HOP = 513, 256, 256

def const(name, values, dtype=TensorProto.FLOAT, dims=None):
    vals = values if isinstance(values, list) else [values]
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dtype, dims if dims is not None else [], vals))

# tone_color_extract_model: mean over frames, then a fixed projection 513 -> 256
w = [((i * 7 + j * 13) % 17 - 8) / 64.0 for i in range(BINS) for j in range(TONE)]
extract = helper.make_graph(
    [
        const("W", w, dims=[BINS, TONE]),
        helper.make_node("ReduceMean", ["input"], ["mean"], axes=[1], keepdims=0),
        helper.make_node("MatMul", ["mean", "W"], ["tone"]),
    ],
    "tone_color_extract",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, "T", BINS])],
    [helper.make_tensor_value_info("tone", TensorProto.FLOAT, [1, TONE])],
)
m = helper.make_model(extract, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "tone_color_extract_model.onnx"))

clone = helper.make_graph(
    [
        const("one", 1.0),
        const("milli", 1e-3),
        const("rep", [1, 1, 1, HOP], TensorProto.INT64, [4]),
        const("shape", [1, 1, -1], TensorProto.INT64, [3]),
        helper.make_node("ReduceMean", ["audio"], ["frame_mean"], axes=[1], keepdims=1),  # [1,1,T]
        helper.make_node("Sub", ["dest_tone", "src_tone"], ["diff"]),
        helper.make_node("ReduceMean", ["diff"], ["dmean"], axes=[0, 1, 2], keepdims=0),
        helper.make_node("Mul", ["dmean", "tau"], ["shift"]),  # [1]
        helper.make_node("Add", ["one", "shift"], ["gain"]),
        helper.make_node("Mul", ["frame_mean", "gain"], ["scaled"]),
        helper.make_node("Mul", ["scaled", "milli"], ["small"]),
        const("axis3", [3], TensorProto.INT64, [1]),
        helper.make_node("Unsqueeze", ["small", "axis3"], ["u"]),  # [1,1,T,1]
        helper.make_node("Tile", ["u", "rep"], ["tiled"]),  # [1,1,T,256]
        helper.make_node("Reshape", ["tiled", "shape"], ["wave_full"]),
        # the export's output length follows audio_length frames
        helper.make_node("Cast", ["audio_length"], ["len_i"], to=TensorProto.INT64),
        const("hop_i", [HOP], TensorProto.INT64, [1]),
        helper.make_node("Mul", ["len_i", "hop_i"], ["n"]),
        const("zero_i", [0], TensorProto.INT64, [1]),
        const("axis2", [2], TensorProto.INT64, [1]),
        helper.make_node("Slice", ["wave_full", "zero_i", "n", "axis2"], ["output"]),
    ],
    "tone_clone",
    [
        helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, BINS, "T"]),
        helper.make_tensor_value_info("audio_length", TensorProto.INT64, [1]),
        helper.make_tensor_value_info("src_tone", TensorProto.FLOAT, [1, TONE, 1]),
        helper.make_tensor_value_info("dest_tone", TensorProto.FLOAT, [1, TONE, 1]),
        helper.make_tensor_value_info("tau", TensorProto.FLOAT, [1]),
    ],
    [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1, "N"])],
)
m = helper.make_model(clone, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "tone_clone_model.onnx"))

with open(os.path.join(out, "configuration.json"), "w") as f:
    json.dump({"data": {"sampling_rate": 22050, "filter_length": 1024, "hop_length": HOP, "win_length": 1024}}, f, indent=2)
print("wrote", out)
