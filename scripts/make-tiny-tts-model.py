#!/usr/bin/python3
"""Write a tiny Piper-compatible voice for the @dub/voice plumbing tests.

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-tiny-tts-model.py packages/voice/fixtures/tiny-piper.onnx

Same inputs and output as a Piper (VITS) voice: input int64[1,N] (phoneme ids), input_lengths
int64[1], scales float32[3] (noise, length, noise_w) -> output float32[1,1,1,T] (Piper's
export_onnx.py returns the VITS decoder's [B,1,T] unsqueezed at 1). It is no speech
model: every phoneme id becomes HOP * length_scale samples of a sine at 100 + 7 * id Hz, so
tests can check the id sequence, the length scale and the output plumbing exactly. Also writes
the voice config <model>.json with a phoneme_id_map in Piper's format ("_" pad, "^" BOS, "$" EOS).
"""
import json
import sys
import onnx
from onnx import helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "tiny-piper.onnx"
HOP = 256
RATE = 22050

def const(name, value, dtype=TensorProto.FLOAT, dims=()):
    vals = value if isinstance(value, list) else [value]
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dtype, list(dims), vals))

nodes = [
    const("one_i", 1, TensorProto.INT64),
    const("zero_f", 0.0),
    const("one_f", 1.0),
    const("hop_f", float(HOP)),
    const("base_hz", 100.0),
    const("hz_per_id", 7.0),
    const("two_pi_over_rate", 2.0 * 3.141592653589793 / RATE),
    const("amp", 0.5),
    const("flat", [-1], TensorProto.INT64, [1]),
    const("out_shape", [1, 1, 1, -1], TensorProto.INT64, [4]),
    # length scale and the hop it gives
    helper.make_node("Gather", ["scales", "one_i"], ["length_scale"], axis=0),
    helper.make_node("Mul", ["length_scale", "hop_f"], ["hop"]),
    # N = number of ids, T = floor(N * hop)
    helper.make_node("Reshape", ["input", "flat"], ["ids"]),
    helper.make_node("Shape", ["ids"], ["n_shape"]),
    helper.make_node("Cast", ["n_shape"], ["n_f1"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["n_f1", "hop"], ["t_len1"]),
    helper.make_node("Floor", ["t_len1"], ["t_len1f"]),
    helper.make_node("Squeeze", ["t_len1f"], ["t_len"]),
    helper.make_node("Range", ["zero_f", "t_len", "one_f"], ["t"]),
    # id under each sample
    helper.make_node("Div", ["t", "hop"], ["pos"]),
    helper.make_node("Floor", ["pos"], ["pos_f"]),
    helper.make_node("Cast", ["pos_f"], ["pos_i"], to=TensorProto.INT64),
    helper.make_node("Gather", ["ids", "pos_i"], ["id_at"], axis=0),
    helper.make_node("Cast", ["id_at"], ["id_f"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["id_f", "hz_per_id"], ["hz_off"]),
    helper.make_node("Add", ["hz_off", "base_hz"], ["hz"]),
    helper.make_node("Mul", ["hz", "t"], ["cycles"]),
    helper.make_node("Mul", ["cycles", "two_pi_over_rate"], ["phase"]),
    helper.make_node("Sin", ["phase"], ["wave"]),
    helper.make_node("Mul", ["wave", "amp"], ["scaled"]),
    helper.make_node("Reshape", ["scaled", "out_shape"], ["output"]),
]
inputs = [
    helper.make_tensor_value_info("input", TensorProto.INT64, [1, "phonemes"]),
    helper.make_tensor_value_info("input_lengths", TensorProto.INT64, [1]),
    helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3]),
]
outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1, 1, "time"])]
graph = helper.make_graph(nodes, "tiny_piper", inputs, outputs)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tests")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, out)

symbols = ["_", "^", "$", " ", "!", "'", "(", ")", ",", "-", ".", ":", ";", "?"]
symbols += [chr(c) for c in range(ord("a"), ord("z") + 1)]
symbols += list("æçðøħŋœǀǁǂǃɐɑɒɓɔɕɖɗɘəɚɛɜɞɟɠɡɢɣɤɥɦɧɨɪɫɬɭɮɯɰɱɲɳɴɵɶɸɹɺɻɽɾʀʁʂʃʄʈʉʊʋʌʍʎʏʐʑʒʔʕʘʙʛʜʝʟʡʢʲˈˌːˑ˞βθχᵻⱱ")
symbols += ["\u0303", "\u0329", "\u032a", "\u0361"]
config = {
    "audio": {"sample_rate": RATE},
    "espeak": {"voice": "es"},
    "inference": {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8},
    "phoneme_type": "espeak",
    "phoneme_map": {},
    "phoneme_id_map": {s: [i] for i, s in enumerate(symbols)},
    "num_symbols": len(symbols),
    "num_speakers": 1,
    "speaker_id_map": {},
    "dataset": "tiny-test-voice (not speech)",
}
with open(out + ".json", "w", encoding="utf-8") as f:
    json.dump(config, f, ensure_ascii=False, indent=2)
    f.write("\n")
print(f"wrote {out} and {out}.json")
