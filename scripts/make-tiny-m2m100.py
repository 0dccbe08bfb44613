#!/usr/bin/python3
"""Write the tiny M2M100 stand-in and the SentencePiece references that @dub/translate's tests load.

Run with Debian's python3-onnx and python3-sentencepiece (apt-get install python3-onnx
python3-sentencepiece; sentencepiece 0.1.97, Google's C++ library, is the reference):
    /usr/bin/python3 scripts/make-tiny-m2m100.py [packages/translate/fixtures]

Written into <out>/m2m100-tiny-test/ (the file names of Xenova/m2m100_418M, flat as models/<id>/ holds them):
- sentencepiece.bpe.model: a BPE SentencePiece model trained here by the reference trainer on the
  small English/Spanish/French corpus below with nmt_nfkc normalisation (its precompiled charsmap
  is the library's own), vocabulary of 200 pieces (the real one: 128,000).
- vocab.json: the fairseq dictionary layout of the real vocab.json: <s> 0, <pad> 1, </s> 2, <unk> 3,
  then the SentencePiece pieces in another order than the model's (reversed), so a tokenizer that
  used the SentencePiece ids instead of vocab.json's would fail the tests.
- generation_config.json: the real one's fields (decoder_start_token_id 2, num_beams 5, ...).
- encoder_model_quantized.onnx: input_ids i64[batch_size, encoder_sequence_length],
  attention_mask i64[same] -> last_hidden_state f32[batch_size, encoder_sequence_length, V]: the
  one-hot row of each token, zero where the mask is 0 (V = the vocabulary with the language tokens).
- decoder_model_merged_quantized.onnx: encoder_attention_mask, input_ids, encoder_hidden_states,
  past_key_values.{0,1}.{decoder,encoder}.{key,value} f32[batch_size, 2, P, 4], use_cache_branch
  bool[1] -> logits f32[batch_size, decoder_sequence_length, V], present.*: a scripted copy model.
  At absolute decoder position p (past length + t) the logits are 4 x one-hot(source token p) +
  2 x one-hot(source token p + 1) (clamped to the last position), 0 elsewhere: after the forced
  target-language token, greedy decoding copies the source sentence and its </s>; beam search
  finds variants that take the "next" token, with scores the test computes independently. The
  decoder cache grows by T per call; the encoder cache is computed when use_cache_branch is false
  and passed through when true (an If node, as in Optimum's merged decoders).
- ../m2m100-tokenizer-references.json: for sentences in several scripts and with odd spacing,
  compatibility characters and unknown characters: the reference's pieces
  (SentencePieceProcessor.encode(text, out_type=str)), the ids M2M100Tokenizer gives
  ([__src__] + vocab.json ids (unknown piece -> <unk> 3) + [</s>]) and the reference's decoding.
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import sentencepiece as spm
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "packages", "translate", "fixtures")
MDIR = os.path.join(OUT, "m2m100-tiny-test")
os.makedirs(MDIR, exist_ok=True)

# FAIRSEQ_LANGUAGE_CODES["m2m100"] of transformers' tokenization_m2m_100.py (100 codes, in order).
LANGS = ["af", "am", "ar", "ast", "az", "ba", "be", "bg", "bn", "br", "bs", "ca", "ceb", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr", "ht", "hu", "hy", "id", "ig", "ilo", "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko", "lb", "lg", "ln", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "my", "ne", "nl", "no", "ns", "oc", "or", "pa", "pl", "ps", "pt", "ro", "ru", "sd", "si", "sk", "sl", "so", "sq", "sr", "ss", "su", "sv", "sw", "ta", "th", "tl", "tn", "tr", "uk", "ur", "uz", "vi", "wo", "xh", "yi", "yo", "zh", "zu"]

CORPUS = """The quick brown fox jumps over the lazy dog.
Ask not what your country can do for you, ask what you can do for your country.
We choose to go to the moon in this decade and do the other things.
The only thing we have to fear is fear itself.
Dubbing a video means speaking it again in another language.
She sells sea shells by the sea shore, and the shells she sells are sea shells.
Open the studio and start the dubbing of this talk.
El rápido zorro marrón salta sobre el perro perezoso.
No preguntes qué puede hacer tu país por ti; pregunta qué puedes hacer tú por tu país.
La única cosa a la que debemos temer es al miedo mismo.
El doblaje de un vídeo es hablarlo de nuevo en otro idioma.
¿Dónde está la estación? Está allí, a la izquierda, señor.
Le renard brun rapide saute par-dessus le chien paresseux.
Ne demandez pas ce que votre pays peut faire pour vous.
La seule chose que nous ayons à craindre, c'est la crainte elle-même.
Où est la gare ? Elle est là-bas, à gauche, monsieur. Ça va très bien.
Numbers: 1, 2, 3, 42, 1984, 2026 and 3.14 are numbers.
Tom & Jerry <3, a > b; "quotes" (brackets) [more] #tag @name 50% $5.
Zxqaa and Zxqab are the placeholders glossary masking writes.
"""

with tempfile.TemporaryDirectory() as tmp:
    corpus = os.path.join(tmp, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write(CORPUS * 3)
    prefix = os.path.join(tmp, "spm")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, vocab_size=200, model_type="bpe", character_coverage=1.0,
        normalization_rule_name="nmt_nfkc", unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2,
    )
    with open(prefix + ".model", "rb") as f:
        model_bytes = f.read()
with open(os.path.join(MDIR, "sentencepiece.bpe.model"), "wb") as f:
    f.write(model_bytes)
sp = spm.SentencePieceProcessor(model_proto=model_bytes)

pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_unknown(i) or sp.is_control(i))]
vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
for p in reversed(pieces):
    vocab[p] = len(vocab)
with open(os.path.join(MDIR, "vocab.json"), "w", encoding="utf-8") as f:
    json.dump(vocab, f, ensure_ascii=False, indent=1)
N = len(vocab)
LANG_ID = {c: N + i for i, c in enumerate(LANGS)}
V = N + len(LANGS) + 8  # + madeupword0..7, as in M2M100Tokenizer
with open(os.path.join(MDIR, "generation_config.json"), "w") as f:
    json.dump({"_from_model_config": True, "bos_token_id": 0, "decoder_start_token_id": 2, "early_stopping": True, "eos_token_id": 2, "max_length": 200, "num_beams": 5, "pad_token_id": 1}, f, indent=2)

SENTENCES = [
    ("en", "The quick brown fox jumps over the lazy dog."),
    ("en", "  Ask not   what your country\tcan do for you.  "),
    ("es", "¿Dónde está la estación? Está allí."),
    ("es", "El doblaje de un vi\u0301deo."),  # i + combining acute: NFKC composes it
    ("fr", "Ça va très bien, monsieur."),
    ("fr", "Le ﬁls ＡＢＣ ① fête ses 42 ans."),  # ligature, full-width, circled digit: compatibility forms
    ("en", "Unknown: 漢字 and ДА and emoji 😀."),
    ("en", "x"),
    ("en", "The shells she sells are sea shells, 2026."),
]
refs = []
for lang, text in SENTENCES:
    ps = sp.encode(text, out_type=str)
    ids = [LANG_ID[lang]] + [vocab.get(p, 3) for p in ps] + [2]
    refs.append({"lang": lang, "text": text, "pieces": ps, "ids": ids, "decoded": sp.decode_pieces(ps)})
with open(os.path.join(OUT, "m2m100-tokenizer-references.json"), "w", encoding="utf-8") as f:
    json.dump({
        "reference": f"sentencepiece {spm.__version__} (Debian python3-sentencepiece): SentencePieceProcessor.encode(text, out_type=str); ids as transformers' M2M100Tokenizer builds them ([lang id] + vocab.json[piece] or <unk> 3 + [</s> 2]); decoded = decode_pieces(pieces)",
        "model": "m2m100-tiny-test/sentencepiece.bpe.model + vocab.json (scripts/make-tiny-m2m100.py)",
        "vocabSize": V, "langIds": {k: LANG_ID[k] for k in ["en", "es", "fr"]},
        "sentences": refs,
    }, f, ensure_ascii=False, indent=1)


def save(model, path):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


# ---------------------------------------------------------------- encoder
eye = numpy_helper.from_array(np.eye(V, dtype=np.float32), "eye")
nodes = [
    helper.make_node("Gather", ["eye", "input_ids"], ["onehot"], axis=0),
    helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
    helper.make_node("Unsqueeze", ["mask_f", "last_axis"], ["mask3"]),
    helper.make_node("Mul", ["onehot", "mask3"], ["last_hidden_state"]),
]
save(helper.make_model(helper.make_graph(
    nodes, "m2m100-tiny-encoder",
    [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "encoder_sequence_length"]),
     helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "encoder_sequence_length"])],
    [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "encoder_sequence_length", V])],
    [eye, numpy_helper.from_array(np.array([2], dtype=np.int64), "last_axis")]),
    opset_imports=[helper.make_opsetid("", 14)], producer_name="dub-tests"), os.path.join(MDIR, "encoder_model_quantized.onnx"))

# ---------------------------------------------------------------- merged decoder
L, H, DH = 2, 2, 4
rng = np.random.default_rng(23)
inputs = [
    helper.make_tensor_value_info("encoder_attention_mask", TensorProto.INT64, ["batch_size", "encoder_sequence_length"]),
    helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "decoder_sequence_length"]),
    helper.make_tensor_value_info("encoder_hidden_states", TensorProto.FLOAT, ["batch_size", "encoder_sequence_length", V]),
]
outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "decoder_sequence_length", V])]
inits = [
    numpy_helper.from_array(rng.normal(0, 1, size=(V, H * DH)).astype(np.float32), "tok_emb"),
    numpy_helper.from_array(rng.normal(0, 0.5, size=(V, H * DH)).astype(np.float32), "enc_proj"),
    numpy_helper.from_array(np.array([0, 0, H, DH], dtype=np.int64), "split_heads"),
    numpy_helper.from_array(np.array(2, dtype=np.int64), "two"),
    numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
    numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
    numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0"),
    numpy_helper.from_array(np.array(4.0, dtype=np.float32), "w_cur"),
    numpy_helper.from_array(np.array(2.0, dtype=np.float32), "w_next"),
]
nodes = [
    helper.make_node("Gather", ["tok_emb", "input_ids"], ["emb"]),
    helper.make_node("Reshape", ["emb", "split_heads"], ["emb4"]),
    helper.make_node("Transpose", ["emb4"], ["new_kv"], perm=[0, 2, 1, 3]),
    # absolute positions past_len .. past_len + T - 1, clamped to the encoder's last position
    helper.make_node("Shape", ["past_key_values.0.decoder.key"], ["past_shape"]),
    helper.make_node("Gather", ["past_shape", "two"], ["past_len"], axis=0),
    helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
    helper.make_node("Gather", ["ids_shape", "one"], ["t_len"], axis=0),
    helper.make_node("Add", ["past_len", "t_len"], ["pos_end"]),
    helper.make_node("Range", ["past_len", "pos_end", "one"], ["positions"]),
    helper.make_node("Shape", ["encoder_hidden_states"], ["enc_shape"]),
    helper.make_node("Gather", ["enc_shape", "one"], ["s_len"], axis=0),
    helper.make_node("Sub", ["s_len", "one"], ["s_last"]),
    helper.make_node("Clip", ["positions", "zero", "s_last"], ["pos_cur"]),
    helper.make_node("Add", ["positions", "one"], ["positions1"]),
    helper.make_node("Clip", ["positions1", "zero", "s_last"], ["pos_next"]),
    # masked encoder rows are zero: multiply by the mask again, as cross-attention would ignore them
    helper.make_node("Cast", ["encoder_attention_mask"], ["emask_f"], to=TensorProto.FLOAT),
    helper.make_node("Unsqueeze", ["emask_f", "last_axis"], ["emask3"]),
    helper.make_node("Mul", ["encoder_hidden_states", "emask3"], ["enc_masked"]),
    helper.make_node("Gather", ["enc_masked", "pos_cur"], ["cur"], axis=1),
    helper.make_node("Gather", ["enc_masked", "pos_next"], ["nxt"], axis=1),
    helper.make_node("Mul", ["cur", "w_cur"], ["cur_w"]),
    helper.make_node("Mul", ["nxt", "w_next"], ["nxt_w"]),
    helper.make_node("Add", ["cur_w", "nxt_w"], ["logits"]),
    # encoder keys/values from the encoder output, [B, H, S, DH]
    helper.make_node("MatMul", ["encoder_hidden_states", "enc_proj"], ["enc_m"]),
    helper.make_node("Reshape", ["enc_m", "split_heads"], ["enc4"]),
    helper.make_node("Transpose", ["enc4"], ["enc_kv"], perm=[0, 2, 1, 3]),
]
inits.append(numpy_helper.from_array(np.array([2], dtype=np.int64), "last_axis"))
then_out, else_out, then_nodes, else_nodes = [], [], [], []
for i in range(L):
    for kind in ["key", "value"]:
        for part in ["decoder", "encoder"]:
            name = f"past_key_values.{i}.{part}.{kind}"
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch_size", H, f"past_{part}_sequence_length", DH]))
        pd = f"past_key_values.{i}.decoder.{kind}"
        nodes.append(helper.make_node("Concat", [pd, "new_kv"], [f"present.{i}.decoder.{kind}"], axis=2))
        outputs.append(helper.make_tensor_value_info(f"present.{i}.decoder.{kind}", TensorProto.FLOAT, ["batch_size", H, "past_decoder_sequence_length + 1", DH]))
        then_nodes.append(helper.make_node("Identity", [f"past_key_values.{i}.encoder.{kind}"], [f"t_{i}_{kind}"]))
        else_nodes.append(helper.make_node("Identity", ["enc_kv"], [f"e_{i}_{kind}"]))
        then_out.append(helper.make_tensor_value_info(f"t_{i}_{kind}", TensorProto.FLOAT, None))
        else_out.append(helper.make_tensor_value_info(f"e_{i}_{kind}", TensorProto.FLOAT, None))
        outputs.append(helper.make_tensor_value_info(f"present.{i}.encoder.{kind}", TensorProto.FLOAT, ["batch_size", H, "encoder_sequence_length_out", DH]))
inputs.append(helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1]))
nodes.append(helper.make_node("Squeeze", ["use_cache_branch", "axis0"], ["use_cache"]))
enc_presents = [f"present.{i}.encoder.{k}" for i in range(L) for k in ["key", "value"]]
nodes.append(helper.make_node("If", ["use_cache"], enc_presents,
                              then_branch=helper.make_graph(then_nodes, "then_branch", [], then_out),
                              else_branch=helper.make_graph(else_nodes, "else_branch", [], else_out)))
save(helper.make_model(helper.make_graph(nodes, "m2m100-tiny-decoder-merged", inputs, outputs, inits),
                       opset_imports=[helper.make_opsetid("", 14)], producer_name="dub-tests"),
     os.path.join(MDIR, "decoder_model_merged_quantized.onnx"))
print(f"wrote {MDIR} (vocabulary {N} + 108 = {V}) and m2m100-tokenizer-references.json")
