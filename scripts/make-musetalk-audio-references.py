#!/usr/bin/python3
"""Reference values of MuseTalk's audio windowing and positional encoding, for @dub/lips.

  /usr/bin/python3 scripts/make-musetalk-audio-references.py packages/lips/fixtures/musetalk-audio-references.json

An independent numpy rendering of TMElyralab/MuseTalk (commit 0a89dec4)
musetalk/utils/audio_processor.py `get_whisper_chunk` (the v1.5 index arithmetic: features
trimmed to floor(seconds * 50), padded with 2 * ceil(50 / fps) zero frames before and
6 * ceil(50 / fps) after, a window of 2 * (2 + 2 + 1) = 10 frames from floor(i * 50 / fps), for
i < floor(seconds * fps)) and musetalk/models/unet.py `PositionalEncoding` (d_model 384, float64
here). The features are stand-ins whose value is their frame index + 1 (0 in the padding), so each
window row names the feature frame it reads: what the TypeScript windows must match exactly. The
segment encoding (30 s segments, 1500 frames each, joined) is modelled by building the joined
features from ceil(samples / 480000) segments of 1500 frames.
"""
import json
import math
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "musetalk-audio-references.json"
SR = 16000
AUDIO_FPS = 50


def get_whisper_chunk(librosa_length, fps, left=2, right=2):
    segments = max(1, math.ceil(librosa_length / (30 * SR)))
    # joined encoder output of all segments: frame t carries t + 1
    feature = (np.arange(segments * 1500, dtype=np.int64) + 1)[None, :, None]
    per_frame = 2 * (left + right + 1)
    fps = int(fps)
    multiplier = AUDIO_FPS / fps
    num_frames = math.floor((librosa_length / SR) * fps)
    actual_length = math.floor((librosa_length / SR) * AUDIO_FPS)
    feature = feature[:, :actual_length, ...]
    padding = math.ceil(multiplier)
    feature = np.concatenate([
        np.zeros_like(feature[:, :padding * left]),
        feature,
        np.zeros_like(feature[:, :padding * 3 * right]),
    ], 1)
    rows = []
    for i in range(num_frames):
        index = math.floor(i * multiplier)
        clip = feature[:, index:index + per_frame]
        assert clip.shape[1] == per_frame
        rows.append([int(v) - 1 for v in clip[0, :, 0]])  # -1: padding
    return {"samples": librosa_length, "fps": fps, "featureLength": actual_length, "numFrames": num_frames, "rows": rows}


def positional_encoding(seq_len=50, d_model=384):
    pe = np.zeros((seq_len, d_model), dtype=np.float64)
    position = np.arange(seq_len, dtype=np.float64)[:, None]
    div = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = np.sin(position * div)
    pe[:, 1::2] = np.cos(position * div)
    return pe


cases = []
for seconds, fps, keep in [(3.3, 25, None), (2.05, 30, None), (61.3, 24, [range(0, 6), range(714, 726), range(1436, 1471), range(0, 1471, 97)])]:
    c = get_whisper_chunk(round(seconds * SR), fps)
    frames = sorted(set(i for r in keep for i in r)) if keep else list(range(c["numFrames"]))
    c["frames"] = frames
    c["rows"] = [c["rows"][i] for i in frames]
    c["seconds"] = seconds
    cases.append(c)

pe = positional_encoding()
dims = [0, 1, 2, 3, 64, 65, 190, 191, 300, 301, 382, 383]
ref = {
    "source": "scripts/make-musetalk-audio-references.py: numpy rendering of https://github.com/TMElyralab/MuseTalk/blob/0a89dec45a0192b824e3cf4daf96c239440c5ed8/musetalk/utils/audio_processor.py (get_whisper_chunk) and musetalk/models/unet.py (PositionalEncoding)",
    "windows": cases,
    "positionalEncoding": {"rows": 50, "dim": 384, "dims": dims, "values": [[float(pe[p, d]) for d in dims] for p in range(50)], "sum": float(pe.sum())},
}
with open(out, "w") as f:
    json.dump(ref, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {out}: {sum(len(c['rows']) for c in cases)} windows, positional encoding sum {pe.sum():.9f}")
