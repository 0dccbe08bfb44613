#!/usr/bin/python3
"""Write a tiny stand-in for Chatterbox Multilingual's ONNX export
(onnx-community/chatterbox-multilingual-ONNX), for the @dub/voice engine tests.

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-tiny-chatterbox.py packages/voice/fixtures/chatterbox-tiny

Same files, input and output names, dtypes and ranks as the export
(packages/voice/fixtures/chatterbox-signature.json, with its sources), small dimensions: hidden 8,
2 layers, 2 KV heads of head dim 4. It is no speech model; every output is a fixed function chosen
so the tests can check the plumbing exactly:

- speech_encoder: audio_values f32[B,N] -> audio_features f32[B,3,8] (the clip's mean), audio_tokens
  i64[B,N//960] (20 + i mod 5: one token per 40 ms as the real tokenizer's 25 Hz), speaker_embeddings
  f32[B,192] and speaker_features f32[B,2*(N//960),80] (the mean; 50 Hz frames).
- embed_tokens: input_ids, position_ids i64[B,S], exaggeration f32[B] -> inputs_embeds f32[B,S,8] =
  sin(0.01 * id * (d+1) + 0.1 * position) + 0.1 * exaggeration.
- language_model: inputs_embeds, attention_mask, past_key_values.{0,1}.{key,value} f32[B,2,P,4] ->
  logits f32[B,S,6564], present.* = past concatenated with this step's embeddings [B,2,P+S,4]. With
  T = P + S (the length of the cache), every position's logits are 1.0 at speech token 10 + T mod 8,
  0.9 at the next id, -1 elsewhere, and 2.0 at STOP (6562) once T >= 100: so the tokens depend on a
  correctly carried cache, the repetition penalty changes which token wins, and the stop token comes
  at a known step. language_model_fp16.onnx: the same with a float16 cache, as the export's fp16 graph.
- conditional_decoder: speech_tokens i64[B,n], speaker_embeddings f32[B,192], speaker_features
  f32[B,F,80] -> waveform f32[B,(n - F/2) * 960] (the reference's part dropped, as the export does):
  0.1 * sin(0.05 * sample).
- default_voice.wav: 1 s of a 140 Hz tone at 24 kHz (the export ships a real clip under that name).
- tokenizer.json: a tiny BPE of the tokenizers format (26 letters, . , ', [SPACE], [en]/[es]/[ko],
  7 merges, Whitespace pre-tokenizer, the export's TemplateProcessing [6563, 255, $A, 0, 6561, 6561]).
"""
import json
import math
import os
import struct
import sys
import wave
import onnx
from onnx import helper, TensorProto as TP

out = sys.argv[1] if len(sys.argv) > 1 else "chatterbox-tiny"
os.makedirs(out, exist_ok=True)
H, L, KVH, HD, V = 8, 2, 2, 4, 6564
STOP, STOP_AT = 6562, 100


def const(name, values, dtype=TP.FLOAT, dims=None):
    vals = values if isinstance(values, list) else [values]
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dtype, dims if dims is not None else [], vals))


def save(graph, name, opset=17):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name))


# speech_encoder
nodes = [
    const("i0", [0], TP.INT64, [1]), const("i1", [1], TP.INT64, [1]), const("i2", [2], TP.INT64, [1]),
    const("hop", [960], TP.INT64, [1]), const("c3", [3], TP.INT64, [1]), const("c8", [H], TP.INT64, [1]),
    const("c192", [192], TP.INT64, [1]), const("c80", [80], TP.INT64, [1]), const("five", 5, TP.INT64),
    const("twenty", 20, TP.INT64), const("zero_s", 0, TP.INT64), const("one_s", 1, TP.INT64),
    helper.make_node("ReduceMean", ["audio_values"], ["m"], axes=[1], keepdims=1),  # [B,1]
    helper.make_node("Shape", ["audio_values"], ["ashape"]),
    helper.make_node("Gather", ["ashape", "i0"], ["B"]),
    helper.make_node("Gather", ["ashape", "i1"], ["N"]),
    helper.make_node("Div", ["N", "hop"], ["K"]),  # [1]
    helper.make_node("Squeeze", ["K", "i0"], ["Ks"]),
    helper.make_node("Range", ["zero_s", "Ks", "one_s"], ["ar"]),
    helper.make_node("Mod", ["ar", "five"], ["arm"]),
    helper.make_node("Add", ["arm", "twenty"], ["tok"]),
    helper.make_node("Unsqueeze", ["tok", "i0"], ["tok2"]),
    helper.make_node("Concat", ["B", "K"], ["tshape"], axis=0),
    helper.make_node("Expand", ["tok2", "tshape"], ["audio_tokens"]),
    helper.make_node("Unsqueeze", ["m", "i2"], ["m3"]),  # [B,1,1]
    helper.make_node("Concat", ["B", "c3", "c8"], ["fshape"], axis=0),
    helper.make_node("Expand", ["m3", "fshape"], ["audio_features"]),
    helper.make_node("Concat", ["B", "c192"], ["eshape"], axis=0),
    helper.make_node("Expand", ["m", "eshape"], ["speaker_embeddings"]),
    helper.make_node("Mul", ["K", "i2"], ["F"]),
    helper.make_node("Concat", ["B", "F", "c80"], ["sshape"], axis=0),
    helper.make_node("Expand", ["m3", "sshape"], ["speaker_features"]),
]
save(helper.make_graph(nodes, "speech_encoder",
    [helper.make_tensor_value_info("audio_values", TP.FLOAT, ["batch_size", "num_samples"])],
    [helper.make_tensor_value_info("audio_features", TP.FLOAT, ["batch_size", "sequence_length", H]),
     helper.make_tensor_value_info("audio_tokens", TP.INT64, ["batch_size", "audio_sequence_length"]),
     helper.make_tensor_value_info("speaker_embeddings", TP.FLOAT, ["batch_size", 192]),
     helper.make_tensor_value_info("speaker_features", TP.FLOAT, ["batch_size", "feature_dim", 80])]),
    "speech_encoder.onnx")

# embed_tokens
nodes = [
    const("dscale", [0.01 * (d + 1) for d in range(H)], dims=[H]),
    const("pscale", 0.1), const("escale", 0.1), const("i1", [1], TP.INT64, [1]), const("i12", [1, 2], TP.INT64, [2]),
    helper.make_node("Cast", ["input_ids"], ["idf"], to=TP.FLOAT),
    const("i2", [2], TP.INT64, [1]),
    helper.make_node("Unsqueeze", ["idf", "i2"], ["id3"]),  # [B,S,1]
    helper.make_node("Mul", ["id3", "dscale"], ["a"]),  # [B,S,H]
    helper.make_node("Cast", ["position_ids"], ["pf"], to=TP.FLOAT),
    helper.make_node("Unsqueeze", ["pf", "i2"], ["p3"]),
    helper.make_node("Mul", ["p3", "pscale"], ["pb"]),
    helper.make_node("Add", ["a", "pb"], ["s"]),
    helper.make_node("Sin", ["s"], ["sn"]),
    helper.make_node("Unsqueeze", ["exaggeration", "i12"], ["ex3"]),  # [B,1,1]
    helper.make_node("Mul", ["ex3", "escale"], ["exs"]),
    helper.make_node("Add", ["sn", "exs"], ["inputs_embeds"]),
]
save(helper.make_graph(nodes, "embed_tokens",
    [helper.make_tensor_value_info("input_ids", TP.INT64, ["batch_size", "sequence_length"]),
     helper.make_tensor_value_info("position_ids", TP.INT64, ["batch_size", "sequence_length"]),
     helper.make_tensor_value_info("exaggeration", TP.FLOAT, ["batch_size"])],
    [helper.make_tensor_value_info("inputs_embeds", TP.FLOAT, ["batch_size", "sequence_length", H])]),
    "embed_tokens.onnx")

# language_model
nodes = [
    const("i0", [0], TP.INT64, [1]), const("i1", [1], TP.INT64, [1]), const("i2", [2], TP.INT64, [1]),
    const("kvshape", [0, 0, KVH, HD], TP.INT64, [4]), const("cV", [V], TP.INT64, [1]),
    const("eight", [8], TP.INT64, [1]), const("ten", [10], TP.INT64, [1]), const("one_i", [1], TP.INT64, [1]),
    const("stop_i", [STOP], TP.INT64, [1]), const("stop_at", [STOP_AT], TP.INT64, [1]),
    const("zero_s", 0, TP.INT64), const("V_s", V, TP.INT64), const("one_s", 1, TP.INT64),
    const("two", 2.0), const("onehalf", 1.9), const("one", 1.0), const("three", 3.0),
    helper.make_node("Reshape", ["inputs_embeds", "kvshape"], ["e4"]),  # [B,S,KVH,HD]
    helper.make_node("Transpose", ["e4"], ["knew"], perm=[0, 2, 1, 3]),  # [B,KVH,S,HD]
    helper.make_node("Neg", ["knew"], ["vnew"]),
]
inputs = [helper.make_tensor_value_info("inputs_embeds", TP.FLOAT, ["batch_size", "sequence_length", H]),
          helper.make_tensor_value_info("attention_mask", TP.INT64, ["batch_size", "total_sequence_length"])]
outputs = [helper.make_tensor_value_info("logits", TP.FLOAT, ["batch_size", "sequence_length", V])]
for l in range(L):
    for kv, src in (("key", "knew"), ("value", "vnew")):
        nodes.append(helper.make_node("Concat", [f"past_key_values.{l}.{kv}", src], [f"present.{l}.{kv}"], axis=2))
        inputs.append(helper.make_tensor_value_info(f"past_key_values.{l}.{kv}", TP.FLOAT, ["batch_size", KVH, "past_sequence_length", HD]))
        outputs.append(helper.make_tensor_value_info(f"present.{l}.{kv}", TP.FLOAT, ["batch_size", KVH, "total_sequence_length", HD]))
nodes += [
    helper.make_node("Shape", ["present.0.key"], ["pshape"]),
    helper.make_node("Gather", ["pshape", "i2"], ["T"]),  # [1]
    helper.make_node("Mod", ["T", "eight"], ["tm"]),
    helper.make_node("Add", ["tm", "ten"], ["target"]),
    helper.make_node("Add", ["target", "one_i"], ["target1"]),
    helper.make_node("Range", ["zero_s", "V_s", "one_s"], ["ar"]),  # [V]
    helper.make_node("Equal", ["ar", "target"], ["eq1"]),
    helper.make_node("Equal", ["ar", "target1"], ["eq2"]),
    helper.make_node("Equal", ["ar", "stop_i"], ["eqs"]),
    helper.make_node("Cast", ["eq1"], ["f1"], to=TP.FLOAT),
    helper.make_node("Cast", ["eq2"], ["f2"], to=TP.FLOAT),
    helper.make_node("Cast", ["eqs"], ["fs"], to=TP.FLOAT),
    helper.make_node("Less", ["T", "stop_at"], ["early"]),
    helper.make_node("Not", ["early"], ["late"]),
    helper.make_node("Cast", ["late"], ["latef"], to=TP.FLOAT),
    helper.make_node("Mul", ["f1", "two"], ["a1"]),
    helper.make_node("Mul", ["f2", "onehalf"], ["a2"]),
    helper.make_node("Mul", ["fs", "latef"], ["s1"]),
    helper.make_node("Mul", ["s1", "three"], ["a3"]),
    helper.make_node("Add", ["a1", "a2"], ["b1"]),
    helper.make_node("Add", ["b1", "a3"], ["b2"]),
    helper.make_node("Sub", ["b2", "one"], ["row"]),  # [V]
    helper.make_node("Shape", ["inputs_embeds"], ["eshape"]),
    helper.make_node("Slice", ["eshape", "i0", "i2", "i0"], ["bs"]),
    helper.make_node("Concat", ["bs", "cV"], ["lshape"], axis=0),
    helper.make_node("Expand", ["row", "lshape"], ["logits"]),
]
save(helper.make_graph(nodes, "language_model", inputs, outputs), "language_model.onnx")

# language_model_fp16: the same with a float16 KV cache (inputs_embeds and logits stay float32, as
# in the export's fp16 graph)
is_present = [n.op_type == "Concat" and n.output[0].startswith("present.") for n in nodes]
at = is_present.index(True)
cache16 = [helper.make_node("Cast", ["knew"], ["knew16"], to=TP.FLOAT16), helper.make_node("Cast", ["vnew"], ["vnew16"], to=TP.FLOAT16)]
inputs16, outputs16 = inputs[:2], outputs[:1]
for l in range(L):
    for kv, src in (("key", "knew16"), ("value", "vnew16")):
        cache16.append(helper.make_node("Concat", [f"past_key_values.{l}.{kv}", src], [f"present.{l}.{kv}"], axis=2))
        inputs16.append(helper.make_tensor_value_info(f"past_key_values.{l}.{kv}", TP.FLOAT16, ["batch_size", KVH, "past_sequence_length", HD]))
        outputs16.append(helper.make_tensor_value_info(f"present.{l}.{kv}", TP.FLOAT16, ["batch_size", KVH, "total_sequence_length", HD]))
rest = [n for n, p in zip(nodes, is_present) if not p]
nodes16 = rest[:at] + cache16 + rest[at:]
save(helper.make_graph(nodes16, "language_model_fp16", inputs16, outputs16), "language_model_fp16.onnx")

# conditional_decoder
nodes = [
    const("i0", [0], TP.INT64, [1]), const("i1", [1], TP.INT64, [1]), const("two_i", [2], TP.INT64, [1]),
    const("hop", [960], TP.INT64, [1]), const("zero_s", 0, TP.INT64), const("one_s", 1, TP.INT64),
    const("w", 0.05), const("amp", 0.1),
    helper.make_node("Shape", ["speech_tokens"], ["tshape"]),
    helper.make_node("Gather", ["tshape", "i1"], ["n"]),
    helper.make_node("Shape", ["speaker_features"], ["fshape"]),
    helper.make_node("Gather", ["fshape", "i1"], ["F"]),
    helper.make_node("Div", ["F", "two_i"], ["P"]),
    helper.make_node("Sub", ["n", "P"], ["g"]),
    helper.make_node("Mul", ["g", "hop"], ["ns"]),
    helper.make_node("Squeeze", ["ns", "i0"], ["nss"]),
    helper.make_node("Range", ["zero_s", "nss", "one_s"], ["ar"]),
    helper.make_node("Cast", ["ar"], ["arf"], to=TP.FLOAT),
    helper.make_node("Mul", ["arf", "w"], ["ph"]),
    helper.make_node("Sin", ["ph"], ["sn"]),
    helper.make_node("Mul", ["sn", "amp"], ["wave1"]),
    helper.make_node("Unsqueeze", ["wave1", "i0"], ["waveform"]),
]
save(helper.make_graph(nodes, "conditional_decoder",
    [helper.make_tensor_value_info("speech_tokens", TP.INT64, ["batch_size", "num_speech_tokens"]),
     helper.make_tensor_value_info("speaker_embeddings", TP.FLOAT, ["batch_size", 192]),
     helper.make_tensor_value_info("speaker_features", TP.FLOAT, ["batch_size", "feature_dim", 80])],
    [helper.make_tensor_value_info("waveform", TP.FLOAT, ["batch_size", "num_samples"])]),
    "conditional_decoder.onnx")

# tokenizer.json (the tokenizers library's format)
letters = "abcdefghijklmnopqrstuvwxyz"
vocab = {"[STOP]": 0, "[UNK]": 1, "[SPACE]": 2}
for i, c in enumerate(letters):
    vocab[c] = 3 + i
vocab.update({".": 29, ",": 30, "'": 31, "he": 32, "ll": 33, "hell": 34, "hello": 35, "or": 36, "wor": 37, "ld": 38, "\u0301": 39, "[START]": 255})
added = [{"id": 2, "content": "[SPACE]"}, {"id": 40, "content": "[en]"}, {"id": 41, "content": "[es]"}, {"id": 42, "content": "[ko]"}]
vocab.update({"[en]": 40, "[es]": 41, "[ko]": 42})
tok = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [dict(t, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True) for t in added],
    "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "[SPACE]"},
    "pre_tokenizer": {"type": "Whitespace"},
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[EXAGGERATION]", "type_id": 0}}, {"SpecialToken": {"id": "[START]", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[STOP]", "type_id": 0}},
                   {"SpecialToken": {"id": "[START_SPEECH]", "type_id": 0}}, {"SpecialToken": {"id": "[START_SPEECH]", "type_id": 0}}],
        "pair": [],
        "special_tokens": {
            "[EXAGGERATION]": {"id": "[EXAGGERATION]", "ids": [6563], "tokens": ["[EXAGGERATION]"]},
            "[START]": {"id": "[START]", "ids": [255], "tokens": ["[START]"]},
            "[STOP]": {"id": "[STOP]", "ids": [0], "tokens": ["[STOP]"]},
            "[START_SPEECH]": {"id": "[START_SPEECH]", "ids": [6561], "tokens": ["[START_SPEECH]"]},
        },
    },
    "decoder": None,
    "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]", "continuing_subword_prefix": None, "end_of_word_suffix": None,
              "fuse_unk": False, "vocab": vocab, "merges": ["h e", "l l", "he ll", "hell o", "o r", "w or", "l d"]},
}
with open(os.path.join(out, "tokenizer.json"), "w") as f:
    json.dump(tok, f, indent=1, ensure_ascii=False)
with wave.open(os.path.join(out, "default_voice.wav"), "wb") as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(24000)
    w.writeframes(b"".join(struct.pack("<h", int(0.3 * 32767 * math.sin(2 * math.pi * 140 * i / 24000))) for i in range(24000)))
print("wrote", out)
