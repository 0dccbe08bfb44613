#!/usr/bin/env python3
"""Write reference Kaldi fbank features (packages/asr/fixtures/fbank-references.json).

    python3 scripts/make-fbank-references.py      (needs numpy)

A straightforward numpy implementation, independent of packages/asr/src/dsp/kaldi-fbank.ts, of
what torchaudio.compliance.kaldi.fbank computes with the settings speaker-embedding models use
(WeSpeaker: wespeaker/dataset/processor.py and wespeaker/bin/infer_onnx.py call it with
num_mel_bins=80, frame_length=25, frame_shift=10, dither=0, window_type='hamming',
use_energy=False on samples scaled by 1 << 15; 3D-Speaker's FBank leaves window_type at Kaldi's
default 'povey'):

- frames of 400 samples every 160 (snip_edges: only whole frames);
- per frame: subtract the mean, pre-emphasis 0.97 (the first sample against itself), multiply by
  the window: povey = (0.5 - 0.5 cos(2 pi n / (N - 1))) ** 0.85,
  hamming = 0.54 - 0.46 cos(2 pi n / (N - 1));
- zero-pad to 512, power spectrum |rfft|^2;
- 80 triangular filters equally spaced on the mel scale 1127 ln(1 + f / 700) from 20 Hz to
  8 kHz, over the FFT bins below Nyquist;
- natural log of the filter energies, floored at float32 epsilon. No mean normalization.

The input is 0.25 s at 16 kHz of two tones, a chirp and seeded noise, stored in the file as
16-bit integers (the float signal is signal16 / 32768).
"""
import json
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'packages', 'asr', 'fixtures', 'fbank-references.json')

RATE = 16000
FRAME = 400
SHIFT = 160
NFFT = 512
NMELS = 80
LOW, HIGH = 20.0, RATE / 2
EPS = float(np.finfo(np.float32).eps)


def signal():
    n = np.arange(int(0.25 * RATE))
    t = n / RATE
    rng = np.random.default_rng(20240601)
    x = 0.3 * np.sin(2 * np.pi * 220 * t) + 0.2 * np.sin(2 * np.pi * 1375 * t)
    x += 0.1 * np.sin(2 * np.pi * (300 + 6000 * t) * t)
    x += 0.05 * rng.standard_normal(len(n))
    return np.round(x * 32767).astype(np.int16)


def window(kind):
    n = np.arange(FRAME)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / (FRAME - 1))
    if kind == 'povey':
        return hann ** 0.85
    if kind == 'hamming':
        return 0.54 - 0.46 * np.cos(2 * np.pi * n / (FRAME - 1))
    raise ValueError(kind)


def mel(f):
    return 1127.0 * np.log(1.0 + f / 700.0)


def mel_bank():
    bins = NFFT // 2
    freqs = np.arange(bins) * RATE / NFFT
    m = mel(freqs)
    lo, hi = mel(LOW), mel(HIGH)
    delta = (hi - lo) / (NMELS + 1)
    bank = np.zeros((NMELS, bins + 1))
    for i in range(NMELS):
        left, centre, right = lo + i * delta, lo + (i + 1) * delta, lo + (i + 2) * delta
        up = (m - left) / (centre - left)
        down = (right - m) / (right - centre)
        bank[i, :bins] = np.maximum(0.0, np.minimum(up, down))
    return bank


def fbank(x16, kind):
    x = x16.astype(np.float64)  # the 16-bit scale WeSpeaker feeds
    frames = 1 + (len(x) - FRAME) // SHIFT
    w = window(kind)
    bank = mel_bank()
    out = np.zeros((frames, NMELS))
    for t in range(frames):
        f = x[t * SHIFT:t * SHIFT + FRAME].copy()
        f -= f.mean()
        f = np.concatenate(([f[0] - 0.97 * f[0]], f[1:] - 0.97 * f[:-1]))
        f *= w
        spec = np.abs(np.fft.rfft(f, NFFT)) ** 2
        out[t] = np.log(np.maximum(bank @ spec, EPS))
    return out


def main():
    x = signal()
    doc = {
        'description': 'Kaldi fbank (torchaudio.compliance.kaldi.fbank semantics, 80 mel, 25/10 ms, no dither, samples x 32768, no CMN) made by scripts/make-fbank-references.py with numpy',
        'sources': [
            'https://github.com/wenet-e2e/wespeaker/blob/dfa741957e5c11f477623b6e583d67d0af25ee88/wespeaker/dataset/processor.py',
            'https://github.com/wenet-e2e/wespeaker/blob/dfa741957e5c11f477623b6e583d67d0af25ee88/wespeaker/bin/infer_onnx.py',
            'https://github.com/modelscope/3D-Speaker/blob/main/speakerlab/process/processor.py',
            'https://github.com/pytorch/audio/blob/main/src/torchaudio/compliance/kaldi.py',
        ],
        'sampleRate': RATE,
        'nMels': NMELS,
        'signal16': [int(v) for v in x],
        'frames': int(1 + (len(x) - FRAME) // SHIFT),
    }
    for kind in ('povey', 'hamming'):
        doc[kind] = [round(float(v), 5) for v in fbank(x, kind).ravel()]
    with open(OUT, 'w') as f:
        json.dump(doc, f)
        f.write('\n')
    print(f"{doc['frames']} frames x {NMELS} mels -> {OUT}")


if __name__ == '__main__':
    main()
