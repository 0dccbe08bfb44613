#!/usr/bin/env python3
"""Export MuseTalk v1.5's weights to the four ONNX graphs @dub/lips's `musetalk` engine loads.

NOT RUN in this repository's CI or on the machine it was written on (no torch there, and the
model hubs are unreachable): it is written from the PyTorch modules' forward signatures
(TMElyralab/MuseTalk scripts/inference.py, musetalk/models/vae.py, musetalk/models/unet.py,
musetalk/utils/audio_processor.py) and gives exactly the signature in
packages/lips/fixtures/musetalk-signature.json, which the tiny stand-ins
(scripts/make-tiny-musetalk.py) have and packages/lips/src/musetalk.test.ts checks.

Needs: python3 with torch, diffusers and transformers (MuseTalk's requirements: diffusers 0.30.2,
transformers 4.39.2), and the checkpoints `npx dub models fetch musetalk-v15 sd-vae-ft-mse
whisper-tiny` downloads (sha256 checked; the manifest pins each at a fixed revision):
  $DUB_MODELS_DIR/musetalk-v15/unet.pth, musetalk.json                  (TMElyralab/MuseTalk musetalkV15/)
  $DUB_MODELS_DIR/sd-vae-ft-mse/config.json, diffusion_pytorch_model.bin (stabilityai/sd-vae-ft-mse)
  $DUB_MODELS_DIR/whisper-tiny/config.json, pytorch_model.bin           (openai/whisper-tiny)

  python3 scripts/export-musetalk-onnx.py --musetalk $DUB_MODELS_DIR/musetalk-v15 \
      --vae $DUB_MODELS_DIR/sd-vae-ft-mse --whisper $DUB_MODELS_DIR/whisper-tiny \
      --out $DUB_MODELS_DIR/musetalk-v15 [--fp16]

Writes whisper_encoder.onnx, vae_encoder.onnx, unet.onnx (in float32 with its weights in
unet.onnx_data beside it: over protobuf's 2 GB), vae_decoder.onnx into --out: the folder of the manifest's `musetalk-v15`, where the `musetalk` engine resolves
them (or any folder given as `musetalk: { modelDir }`). The graphs:

  whisper_encoder  input_features f32[B,80,3000] -> audio_features_all_layers f32[B,1500,5,384]
                   (whisper-tiny encoder hidden_states, embeddings and 4 layers, stacked on dim 2)
  vae_encoder      image f32[B,3,256,256] RGB [-1,1] -> latents f32[B,4,32,32]
                   (scaling_factor * latent_dist.mode(): MuseTalk's inference samples the latent
                   distribution; the mode keeps a frame's latents the same on every run)
  unet             input_latents f32[B,8,32,32], timesteps i64[B], audio_prompts f32[B,50,384]
                   -> pred_latents f32[B,4,32,32] (one UNet2DConditionModel step at timestep 0;
                   audio_prompts already carry the positional encoding, which @dub/lips adds)
  vae_decoder      latents f32[B,4,32,32] -> image f32[B,3,256,256] RGB [0,1]
                   (vae.decode(latents / scaling_factor).sample / 2 + 0.5, clamped)

--fp16 exports the UNet and VAE in float16 weights with float32 inputs and outputs (casts inside
the graph), for CUDA; the whisper encoder stays float32.
"""
import argparse
import json
import os

import torch


class VaeEncoder(torch.nn.Module):
    def __init__(self, vae):
        super().__init__()
        self.vae = vae

    def forward(self, image):
        dist = self.vae.encode(image.to(self.vae.dtype)).latent_dist
        return (self.vae.config.scaling_factor * dist.mode()).float()


class VaeDecoder(torch.nn.Module):
    def __init__(self, vae):
        super().__init__()
        self.vae = vae

    def forward(self, latents):
        image = self.vae.decode((latents / self.vae.config.scaling_factor).to(self.vae.dtype)).sample
        return (image.float() / 2 + 0.5).clamp(0, 1)


class Unet(torch.nn.Module):
    def __init__(self, unet):
        super().__init__()
        self.unet = unet

    def forward(self, input_latents, timesteps, audio_prompts):
        dtype = self.unet.dtype
        out = self.unet(input_latents.to(dtype), timesteps, encoder_hidden_states=audio_prompts.to(dtype)).sample
        return out.float()


class WhisperEncoder(torch.nn.Module):
    def __init__(self, whisper):
        super().__init__()
        self.encoder = whisper.encoder

    def forward(self, input_features):
        states = self.encoder(input_features, output_hidden_states=True).hidden_states
        return torch.stack(states, dim=2)


def export(module, args, path, input_names, output_names, dynamic):
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, args, path, input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic, opset_version=17, do_constant_folding=True)
    # A float32 UNet (about 3.4 GB) is over protobuf's 2 GB: torch writes its tensors as separate
    # external files; gather them into one `<name>.onnx_data` beside the graph, which onnxruntime
    # reads from the graph's folder.
    import onnx
    model = onnx.load(path)
    if os.path.getsize(path) < 2_000_000_000 and not any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        print(f"wrote {path}")
        return
    folder = os.path.dirname(path)
    stray = {e.value for t in model.graph.initializer for e in t.external_data if e.key == "location"}
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=os.path.basename(path) + "_data")
    for name in stray:
        if name != os.path.basename(path) + "_data" and os.path.exists(os.path.join(folder, name)):
            os.remove(os.path.join(folder, name))
    print(f"wrote {path} and {path}_data")


def main():
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import WhisperModel

    p = argparse.ArgumentParser()
    p.add_argument("--musetalk", required=True, help="folder with unet.pth and musetalk.json (musetalk-v15)")
    p.add_argument("--vae", required=True, help="folder with config.json and diffusion_pytorch_model.bin (sd-vae-ft-mse)")
    p.add_argument("--whisper", required=True, help="folder with config.json and pytorch_model.bin (whisper-tiny)")
    p.add_argument("--out", required=True)
    p.add_argument("--fp16", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dtype = torch.float16 if a.fp16 else torch.float32
    device = "cuda" if a.fp16 and torch.cuda.is_available() else "cpu"

    with open(os.path.join(a.musetalk, "musetalk.json")) as f:
        config = json.load(f)
    unet = UNet2DConditionModel(**config)
    unet.load_state_dict(torch.load(os.path.join(a.musetalk, "unet.pth"), map_location="cpu"))
    unet = unet.to(device=device, dtype=dtype)
    vae = AutoencoderKL.from_pretrained(a.vae).to(device=device, dtype=dtype)
    whisper = WhisperModel.from_pretrained(a.whisper).to(device)

    b = {0: "batch"}
    export(WhisperEncoder(whisper), (torch.zeros(1, 80, 3000, device=device),), os.path.join(a.out, "whisper_encoder.onnx"),
           ["input_features"], ["audio_features_all_layers"], {"input_features": b, "audio_features_all_layers": b})
    export(VaeEncoder(vae), (torch.zeros(1, 3, 256, 256, device=device),), os.path.join(a.out, "vae_encoder.onnx"),
           ["image"], ["latents"], {"image": b, "latents": b})
    export(Unet(unet), (torch.zeros(1, 8, 32, 32, device=device), torch.zeros(1, dtype=torch.int64, device=device), torch.zeros(1, 50, 384, device=device)),
           os.path.join(a.out, "unet.onnx"), ["input_latents", "timesteps", "audio_prompts"], ["pred_latents"],
           {"input_latents": b, "timesteps": b, "audio_prompts": b, "pred_latents": b})
    export(VaeDecoder(vae), (torch.zeros(1, 4, 32, 32, device=device),), os.path.join(a.out, "vae_decoder.onnx"),
           ["latents"], ["image"], {"latents": b, "image": b})


if __name__ == "__main__":
    main()
