#!/usr/bin/python3
"""Write tiny stand-ins of the Spleeter 2-stems ONNX export for the @dub/separation tests.

Run with Debian's python3-onnx:
  /usr/bin/python3 scripts/make-tiny-spleeter.py packages/separation/fixtures/spleeter-tiny

Same input and output as k2-fsa/sherpa-onnx's export (scripts/spleeter/export_onnx.py, listed in
models/manifest.json as spleeter-2stems): x float32[2, "num_splits", 512, 1024] (the magnitude
spectrogram of both channels) -> y float32[2, "Transposey_dim_1", 512, 1024] (the stem's magnitude
estimate), opset 13, and the export's metadata (model_type spleeter, stems 2, ...). They are no
separation models: each multiplies x by a fixed gain per frequency bin (STAND_IN_GAINS below),
vocals.onnx by G, accompaniment.onnx by 1 - G, so the engine's ratio mask G^2 / (G^2 + (1-G)^2)
is known in advance and a test can compute the whole separation with numpy.
"""
import os
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

BINS = 1024
FRAMES = 512


def stand_in_gains():
    """G per bin: 1 up to bin 92 (~1 kHz at 44.1 kHz, n_fft 4096), 0.25 for bins 93..185 (~2 kHz), 0 above."""
    g = np.zeros(BINS, dtype=np.float32)
    g[:93] = 1.0
    g[93:186] = 0.25
    return g


STAND_IN_GAINS = stand_in_gains()


def write(path, stem, gains):
    inits = [numpy_helper.from_array(gains.astype(np.float32), "gain")]
    nodes = [helper.make_node("Mul", ["x", "gain"], ["y"])]
    graph = helper.make_graph(
        nodes,
        f"tiny_spleeter_{stem}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "num_splits", FRAMES, BINS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "Transposey_dim_1", FRAMES, BINS])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dub-tiny-spleeter")
    model.ir_version = 8
    # the export's metadata (export_onnx.py add_meta_data), sample_rate 41000 included as it writes it
    for key, value in {
        "model_type": "spleeter",
        "sample_rate": 41000,
        "version": 1,
        "model_url": "https://github.com/deezer/spleeter",
        "stems": 2,
        "comment": stem,
        "model_name": "2stems.tar.gz",
    }.items():
        meta = model.metadata_props.add()
        meta.key = key
        meta.value = str(value)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "spleeter-tiny"
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "vocals.onnx"), "vocals", STAND_IN_GAINS)
    write(os.path.join(out, "accompaniment.onnx"), "accompaniment", 1.0 - STAND_IN_GAINS)
    print(f"wrote {out}/vocals.onnx and {out}/accompaniment.onnx")


if __name__ == "__main__":
    main()
