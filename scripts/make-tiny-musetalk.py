#!/usr/bin/python3
"""Write tiny stand-ins of the four MuseTalk v1.5 ONNX graphs for the @dub/lips tests.

Run with Debian's python3-onnx (numpy):
  /usr/bin/python3 scripts/make-tiny-musetalk.py packages/lips/fixtures/musetalk-tiny

The graphs have exactly the inputs and outputs (names, dtypes, ranks, fixed dimensions) that
scripts/export-musetalk-onnx.py gives the real weights (packages/lips/fixtures/musetalk-signature.json):

  whisper_encoder.onnx  input_features f32[B,80,3000] -> audio_features_all_layers f32[B,1500,5,384]
  vae_encoder.onnx      image f32[B,3,256,256] (RGB, [-1, 1]) -> latents f32[B,4,32,32]
  unet.onnx             input_latents f32[B,8,32,32], timesteps i64[B], audio_prompts f32[B,50,384]
                        -> pred_latents f32[B,4,32,32]
  vae_decoder.onnx      latents f32[B,4,32,32] -> image f32[B,3,256,256] (RGB, [0, 1])

They are no lips model, and say nothing about MuseTalk's quality. Their rules, so that tests can
check the plumbing (mel -> encoder -> 50 Hz windows -> UNet; crop -> latents -> crop -> paste):
- whisper_encoder: each output frame t is the mean of the log-mel over mel frames 2t and 2t+1
  (Whisper's encoder halves the 100 Hz mel rate to 50 Hz), the same in all 5 layers and 384
  channels, times fixed weights near 1.
- vae_encoder: 8x8 average pooling (256 -> 32), then a random 1x1 convolution 3 -> 4.
- vae_decoder: the pseudo-inverse 1x1 convolution 4 -> 3, bilinear upsampling x8, then
  x / 2 + 0.5 clipped to [0, 1]: decoding an encoded crop gives a blurred copy of it.
- unet: the reference latents (input channels 4..7) plus, in the lower half (rows 16..31), a
  shift along the encoder's image of grey, by relu(mean(audio_prompts) - quiet) * GAIN: loud
  audio brightens the lower face, silence (and Whisper's quiet floor) leaves it as decoded.
"""
import os
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1] if len(sys.argv) > 1 else "musetalk-tiny"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(25)
F = TensorProto.FLOAT


def save(graph, name):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tiny-musetalk")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name))


def c(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


# whisper_encoder ---------------------------------------------------------------------------
w = (1.0 + 0.05 * rng.standard_normal((5, 384))).astype(np.float32)
save(helper.make_graph(
    [
        helper.make_node("Reshape", ["input_features", "pair_shape"], ["pairs"]),
        helper.make_node("ReduceMean", ["pairs"], ["frame_mean"], axes=[1, 3], keepdims=0),
        helper.make_node("Unsqueeze", ["frame_mean", "unsq_axes"], ["frame_col"]),
        helper.make_node("Mul", ["frame_col", "layer_weights"], ["audio_features_all_layers"]),
    ],
    "tiny_musetalk_whisper_encoder",
    [helper.make_tensor_value_info("input_features", F, ["batch", 80, 3000])],
    [helper.make_tensor_value_info("audio_features_all_layers", F, ["batch", 1500, 5, 384])],
    [c("pair_shape", [-1, 80, 1500, 2], np.int64), c("unsq_axes", [2, 3], np.int64), c("layer_weights", w)],
), "whisper_encoder.onnx")

# vae_encoder / vae_decoder -----------------------------------------------------------------
We = rng.standard_normal((4, 3)).astype(np.float32)
Wd = np.linalg.pinv(We).astype(np.float32)  # 3x4, Wd @ We = I
save(helper.make_graph(
    [
        helper.make_node("AveragePool", ["image"], ["pooled"], kernel_shape=[8, 8], strides=[8, 8]),
        helper.make_node("Conv", ["pooled", "enc_w"], ["latents"]),
    ],
    "tiny_musetalk_vae_encoder",
    [helper.make_tensor_value_info("image", F, ["batch", 3, 256, 256])],
    [helper.make_tensor_value_info("latents", F, ["batch", 4, 32, 32])],
    [c("enc_w", We.reshape(4, 3, 1, 1))],
), "vae_encoder.onnx")
save(helper.make_graph(
    [
        helper.make_node("Conv", ["latents", "dec_w"], ["small"]),
        helper.make_node("Resize", ["small", "", "scales"], ["big"], mode="linear"),
        helper.make_node("Mul", ["big", "half"], ["scaled"]),
        helper.make_node("Add", ["scaled", "half"], ["shifted"]),
        helper.make_node("Clip", ["shifted", "lo", "hi"], ["image"]),
    ],
    "tiny_musetalk_vae_decoder",
    [helper.make_tensor_value_info("latents", F, ["batch", 4, 32, 32])],
    [helper.make_tensor_value_info("image", F, ["batch", 3, 256, 256])],
    [c("dec_w", Wd.reshape(3, 4, 1, 1)), c("scales", [1, 1, 8, 8]), c("half", 0.5), c("lo", 0.0), c("hi", 1.0)],
), "vae_decoder.onnx")

# unet --------------------------------------------------------------------------------------
# The positional encoding MuseTalk adds to the audio prompt (musetalk/models/unet.py), averaged:
# a constant part of mean(audio_prompts) that the quiet level includes.
pos = np.arange(50, dtype=np.float64)[:, None]
div = np.exp(np.arange(0, 384, 2, dtype=np.float64) * (-np.log(10000.0) / 384))
pe = np.zeros((50, 384))
pe[:, 0::2] = np.sin(pos * div)
pe[:, 1::2] = np.cos(pos * div)
QUIET = float(-1.5 * w.mean() + pe.mean() + 0.25)  # Whisper's log-mel floor is -1.5 for silence
GAIN = 1.2
mask = np.zeros((1, 1, 32, 32), dtype=np.float32)
mask[:, :, 16:, :] = 1.0
grey = (We @ np.ones(3, dtype=np.float32)).reshape(1, 4, 1, 1)  # decodes to +1 on every channel
save(helper.make_graph(
    [
        helper.make_node("Slice", ["input_latents", "c4", "c8", "c1"], ["reference"]),
        helper.make_node("Slice", ["input_latents", "c0", "c4", "c1"], ["masked"]),
        helper.make_node("ReduceMean", ["masked"], ["masked_mean"], axes=[1, 2, 3], keepdims=1),
        helper.make_node("Mul", ["masked_mean", "zero"], ["masked_zero"]),
        helper.make_node("Cast", ["timesteps"], ["t_float"], to=TensorProto.FLOAT),
        helper.make_node("Reshape", ["t_float", "t_shape"], ["t_col"]),
        helper.make_node("Mul", ["t_col", "zero"], ["t_zero"]),
        helper.make_node("ReduceMean", ["audio_prompts"], ["level"], axes=[1, 2], keepdims=1),
        helper.make_node("Unsqueeze", ["level", "unsq3"], ["level4"]),
        helper.make_node("Sub", ["level4", "quiet"], ["above"]),
        helper.make_node("Relu", ["above"], ["loud"]),
        helper.make_node("Mul", ["loud", "gain"], ["amount"]),
        helper.make_node("Add", ["amount", "t_zero"], ["amount_t"]),
        helper.make_node("Add", ["amount_t", "masked_zero"], ["amount_all"]),
        helper.make_node("Mul", ["amount_all", "lower"], ["amount_map"]),
        helper.make_node("Mul", ["amount_map", "grey"], ["delta"]),
        helper.make_node("Add", ["reference", "delta"], ["pred_latents"]),
    ],
    "tiny_musetalk_unet",
    [
        helper.make_tensor_value_info("input_latents", F, ["batch", 8, 32, 32]),
        helper.make_tensor_value_info("timesteps", TensorProto.INT64, ["batch"]),
        helper.make_tensor_value_info("audio_prompts", F, ["batch", 50, 384]),
    ],
    [helper.make_tensor_value_info("pred_latents", F, ["batch", 4, 32, 32])],
    [
        c("c0", [0], np.int64), c("c4", [4], np.int64), c("c8", [8], np.int64), c("c1", [1], np.int64),
        c("zero", 0.0), c("t_shape", [-1, 1, 1, 1], np.int64), c("unsq3", [3], np.int64),
        c("quiet", QUIET), c("gain", GAIN), c("lower", mask), c("grey", grey),
    ],
), "unet.onnx")
print(f"wrote {out}: quiet level {QUIET:.4f}, gain {GAIN}")
