#!/usr/bin/python3
"""Write the tiny ONNX models (and tokenizer) that @dub/asr's plumbing tests load.

Run with Debian's python3-onnx:  /usr/bin/python3 scripts/make-tiny-asr-models.py [packages/asr/fixtures]

They have the input/output names and shapes of the real exports, not their weights:
- whisper-tiny-test/encoder_model.onnx: input_features f32[1,80,3000] -> last_hidden_state f32[1,1500,8]
  (pairs of frames projected to 8 dims), like onnx-community/whisper-* encoder_model.onnx.
- whisper-tiny-test/decoder_model_merged.onnx: input_ids i64[1,T], encoder_hidden_states f32[1,1500,8],
  past_key_values.{0,1}.{decoder,encoder}.{key,value} f32[1,2,P,4], use_cache_branch bool[1]
  -> logits f32[1,T,V], present.{0,1}.{decoder,encoder}.{key,value}. The decoder cache grows by T
  per call (new keys are token embeddings); the encoder cache is computed when use_cache_branch is
  false and passed through when true (an If node, as in Optimum's merged decoders). The logits are
  a table indexed by absolute position (past length + t): a scripted "language model" whose raw
  argmax at two steps breaks Whisper's timestamp rules, so the decoder's rules must correct it.
- whisper-tiny-test/tokenizer.json: byte-level BPE (256 byte symbols + merges for " hello" and
  " world") with Whisper's special tokens and the 1501 timestamp tokens.
- speaker-embedding-tiny-test/embedding.onnx: feats f32[B,T,80] -> embs f32[B,16] (mean and
  standard deviation over time, projected), the I/O of WeSpeaker's ONNX exports.
- whisper-tiny-anymels-test/encoder_model.onnx: input_features f32[batch_size, feature_size,
  encoder_sequence_length] (all symbolic, as in the public exports) -> last_hidden_state
  f32[batch_size, 1500, 8], for any number of mel bins.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "packages", "asr", "fixtures")
rng = np.random.default_rng(7)


def save(model, path):
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


# ---------------------------------------------------------------- tokenizer
b2u = bytes_to_unicode()
vocab = {b2u[b]: b for b in range(256)}
merges = []
for word in ["hello", "world"]:
    cur = "Ġ"
    for ch in word:
        merges.append(f"{cur} {ch}")
        cur += ch
        if cur not in vocab:
            vocab[cur] = len(vocab)
specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|de|>", "<|fr|>", "<|ja|>", "<|translate|>", "<|transcribe|>",
            "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|notimestamps|>"]
specials += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
added = []
for s in specials:
    added.append({"id": len(vocab) + len(added), "content": s, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True})
ids = {a["content"]: a["id"] for a in added}
V = len(vocab) + len(added)
tok = {
    "version": "1.0",
    "added_tokens": added,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": vocab, "merges": merges},
}
wdir = os.path.join(OUT, "whisper-tiny-test")
os.makedirs(wdir, exist_ok=True)
with open(os.path.join(wdir, "tokenizer.json"), "w") as f:
    json.dump(tok, f, ensure_ascii=False)
print(f"wrote tokenizer.json (vocab {V})")

def ts(sec):
    return ids[f"<|{sec:.2f}|>"]

# Position -> (preferred token, runner-up). Row p scores the token that follows position p.
# Prompt: sot(0) <|de|>(1) <|transcribe|>(2); generated tokens start at position 3.
HELLO, WORLD = vocab["Ġhello"], vocab["Ġworld"]
script = {
    0: [ids["<|de|>"], ids["<|fr|>"]],          # language detection: <|de|> is the argmax
    2: [HELLO, ts(0.0)],                        # rule: the first token must be a timestamp -> <|0.00|>
    3: [HELLO],
    4: [WORLD],
    5: [ts(1.0)],
    6: [ts(0.2), ts(1.0)],                      # rule: timestamps may not go back -> <|1.00|>
    7: [vocab["Ġ"]],
    8: [vocab["d"]],
    9: [vocab["u"]],
    10: [vocab["b"]],
    11: [ts(2.5)],
    12: [ids["<|endoftext|>"]],
}
MAXPOS = 64
table = rng.normal(0, 0.1, size=(MAXPOS, V)).astype(np.float32)
for p in range(MAXPOS):
    table[p, ids["<|endoftext|>"]] = 2.0  # positions without a script end the text
for p, toks in script.items():
    for rank, t in enumerate(toks):
        table[p, t] = 10.0 - 3.0 * rank

# ---------------------------------------------------------------- encoder
D, L, H, DH = 8, 2, 2, 4
x = helper.make_tensor_value_info("input_features", TensorProto.FLOAT, ["batch_size", 80, 3000])
y = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", 1500, D])
w_enc = numpy_helper.from_array((rng.normal(0, 0.05, size=(160, D))).astype(np.float32), "proj")
shape = numpy_helper.from_array(np.array([0, 1500, 160], dtype=np.int64), "pairs")
nodes = [
    helper.make_node("Transpose", ["input_features"], ["xt"], perm=[0, 2, 1]),
    helper.make_node("Reshape", ["xt", "pairs"], ["xp"]),
    helper.make_node("MatMul", ["xp", "proj"], ["xm"]),
    helper.make_node("Tanh", ["xm"], ["last_hidden_state"]),
]
save(helper.make_model(helper.make_graph(nodes, "whisper-tiny-encoder", [x], [y], [w_enc, shape]), opset_imports=[helper.make_opsetid("", 14)], producer_name="dub-tests"),
     os.path.join(wdir, "encoder_model.onnx"))

# ---------------------------------------------------------------- merged decoder
inputs = [
    helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "decoder_sequence_length"]),
    helper.make_tensor_value_info("encoder_hidden_states", TensorProto.FLOAT, ["batch_size", "encoder_sequence_length", D]),
]
outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "decoder_sequence_length", V])]
inits = [
    numpy_helper.from_array(table, "pos_table"),
    numpy_helper.from_array(rng.normal(0, 1, size=(V, H * DH)).astype(np.float32), "tok_emb"),
    numpy_helper.from_array(rng.normal(0, 0.5, size=(D, H * DH)).astype(np.float32), "enc_proj"),
    numpy_helper.from_array(np.array([0, 0, H, DH], dtype=np.int64), "split_heads"),
    numpy_helper.from_array(np.array(2, dtype=np.int64), "two"),
    numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
    numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0"),
]
nodes = [
    # New keys/values: token embeddings split into heads, [B, H, T, DH].
    helper.make_node("Gather", ["tok_emb", "input_ids"], ["emb"]),
    helper.make_node("Reshape", ["emb", "split_heads"], ["emb4"]),
    helper.make_node("Transpose", ["emb4"], ["new_kv"], perm=[0, 2, 1, 3]),
    # Positions past_len .. past_len + T - 1.
    helper.make_node("Shape", ["past_key_values.0.decoder.key"], ["past_shape"]),
    helper.make_node("Gather", ["past_shape", "two"], ["past_len"], axis=0),
    helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
    helper.make_node("Gather", ["ids_shape", "one"], ["t_len"], axis=0),
    helper.make_node("Add", ["past_len", "t_len"], ["pos_end"]),
    helper.make_node("Range", ["past_len", "pos_end", "one"], ["positions"]),
    helper.make_node("Gather", ["pos_table", "positions"], ["logits2d"], axis=0),
    helper.make_node("Unsqueeze", ["logits2d", "axis0"], ["logits"]),
    # Encoder keys/values from the encoder output, [B, H, S, DH].
    helper.make_node("MatMul", ["encoder_hidden_states", "enc_proj"], ["enc_m"]),
    helper.make_node("Reshape", ["enc_m", "split_heads"], ["enc4"]),
    helper.make_node("Transpose", ["enc4"], ["enc_kv"], perm=[0, 2, 1, 3]),
]
then_out, else_out, then_nodes, else_nodes = [], [], [], []
for i in range(L):
    for kind in ["key", "value"]:
        for part in ["decoder", "encoder"]:
            name = f"past_key_values.{i}.{part}.{kind}"
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch_size", H, f"past_{part}_sequence_length", DH]))
        pd = f"past_key_values.{i}.decoder.{kind}"
        nodes.append(helper.make_node("Concat", [pd, "new_kv"], [f"present.{i}.decoder.{kind}"], axis=2))
        outputs.append(helper.make_tensor_value_info(f"present.{i}.decoder.{kind}", TensorProto.FLOAT, ["batch_size", H, "total_sequence_length", DH]))
        pe = f"past_key_values.{i}.encoder.{kind}"
        then_nodes.append(helper.make_node("Identity", [pe], [f"t_{i}_{kind}"]))
        else_nodes.append(helper.make_node("Identity", ["enc_kv"], [f"e_{i}_{kind}"]))
        then_out.append(helper.make_tensor_value_info(f"t_{i}_{kind}", TensorProto.FLOAT, None))
        else_out.append(helper.make_tensor_value_info(f"e_{i}_{kind}", TensorProto.FLOAT, None))
        outputs.append(helper.make_tensor_value_info(f"present.{i}.encoder.{kind}", TensorProto.FLOAT, ["batch_size", H, "encoder_sequence_length_out", DH]))
inputs.append(helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1]))
then_g = helper.make_graph(then_nodes, "then_branch", [], then_out)
else_g = helper.make_graph(else_nodes, "else_branch", [], else_out)
nodes.append(helper.make_node("Squeeze", ["use_cache_branch", "axis0"], ["use_cache"]))
enc_presents = [f"present.{i}.encoder.{k}" for i in range(L) for k in ["key", "value"]]
nodes.append(helper.make_node("If", ["use_cache"], enc_presents, then_branch=then_g, else_branch=else_g))
save(helper.make_model(helper.make_graph(nodes, "whisper-tiny-decoder-merged", inputs, outputs, inits), opset_imports=[helper.make_opsetid("", 14)], producer_name="dub-tests"),
     os.path.join(wdir, "decoder_model_merged.onnx"))

# ---------------------------------------------------------------- speaker embedding
E = 16
feats = helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["B", "T", 80])
embs = helper.make_tensor_value_info("embs", TensorProto.FLOAT, ["B", E])
inits = [
    numpy_helper.from_array(rng.normal(0, 0.2, size=(160, E)).astype(np.float32), "w"),
    numpy_helper.from_array(np.array([1], dtype=np.int64), "time_axis"),
]
nodes = [
    helper.make_node("ReduceMean", ["feats"], ["mu"], axes=[1], keepdims=0),
    helper.make_node("ReduceMean", ["feats"], ["mu_k"], axes=[1], keepdims=1),
    helper.make_node("Sub", ["feats", "mu_k"], ["centered"]),
    helper.make_node("Mul", ["centered", "centered"], ["sq"]),
    helper.make_node("ReduceMean", ["sq"], ["var"], axes=[1], keepdims=0),
    helper.make_node("Sqrt", ["var"], ["sd"]),
    helper.make_node("Concat", ["mu", "sd"], ["stats"], axis=1),
    helper.make_node("MatMul", ["stats", "w"], ["embs"]),
]
save(helper.make_model(helper.make_graph(nodes, "speaker-embedding-tiny", [feats], [embs], inits), opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tests"),
     os.path.join(OUT, "speaker-embedding-tiny-test", "embedding.onnx"))

# ---------------------------------------------------------------- encoder of any mel count
# whisper-tiny-anymels-test/encoder_model.onnx: the encoder signature of the public exports, whose
# input_features dimensions are all symbolic (batch_size, feature_size, encoder_sequence_length):
# the mean over the mel bins, pairs of frames projected to 8 dims. It runs on 80 or 128 mel bins,
# so a test can check that the engine takes the mel count from the model's config.
rng_any = np.random.default_rng(11)
x = helper.make_tensor_value_info("input_features", TensorProto.FLOAT, ["batch_size", "feature_size", "encoder_sequence_length"])
y = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "encoder_sequence_length_out", D])
inits = [
    numpy_helper.from_array(rng_any.normal(0, 0.5, size=(2, D)).astype(np.float32), "proj"),
    numpy_helper.from_array(np.array([0, 1500, 2], dtype=np.int64), "pairs"),
]
nodes = [
    helper.make_node("ReduceMean", ["input_features"], ["xm"], axes=[1], keepdims=0),
    helper.make_node("Reshape", ["xm", "pairs"], ["xp"]),
    helper.make_node("MatMul", ["xp", "proj"], ["xo"]),
    helper.make_node("Tanh", ["xo"], ["last_hidden_state"]),
]
save(helper.make_model(helper.make_graph(nodes, "whisper-tiny-encoder-anymels", [x], [y], inits), opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tests"),
     os.path.join(OUT, "whisper-tiny-anymels-test", "encoder_model.onnx"))
