"""Test signals of the front-end reference scripts (make-whisper-mel-references.py,
make-wav2lip-mel-references.py, make-openvoice-spectrogram-references.py).

Each signal is a closed-form formula of its spec, written into the fixture, so the TypeScript
tests build the same samples without a random generator shared across languages:

    t = i / rate, T = length / rate
    chirp  = amp * (1 - am + am * sin(2 pi 3 t)) * sin(2 pi (f0 t + (f1 - f0) t^2 / (2 T)))
    tones  = sum of a * sin(2 pi hz t)
    noise  = noiseAmp * (2 u_i - 1), u_i = s_i / 2^32 with s_{i+1} = (1664525 s_i + 1013904223) mod 2^32,
             s_0 = seed (the state is advanced before each sample)
    x_i    = float32(chirp + tones + noise), or 0 inside a [start, end) span of `silences` (seconds)

in float64, rounded to float32 at the end (the TypeScript side stores it in a Float32Array).
"""
import math

import numpy as np


def make_signal(spec):
    rate, n = spec['rate'], spec['length']
    total = n / rate
    c = spec.get('chirp')
    tones = spec.get('tones', [])
    noise_amp = spec.get('noiseAmp', 0.0)
    s = spec.get('seed', 1) & 0xFFFFFFFF
    silences = [(int(math.floor(a * rate)), int(math.floor(b * rate))) for a, b in spec.get('silences', [])]
    out = np.zeros(n, dtype=np.float32)
    for i in range(n):
        t = i / rate
        v = 0.0
        if c:
            env = 1 - c['am'] + c['am'] * math.sin(2 * math.pi * 3 * t)
            v += c['amp'] * env * math.sin(2 * math.pi * (c['f0'] * t + (c['f1'] - c['f0']) * t * t / (2 * total)))
        for a, hz in tones:
            v += a * math.sin(2 * math.pi * hz * t)
        s = (1664525 * s + 1013904223) & 0xFFFFFFFF
        v += noise_amp * (2 * (s / 4294967296) - 1)
        if any(a <= i < b for a, b in silences):
            v = 0.0
        out[i] = v
    return out


def checksum(x):
    """Sums the TypeScript test compares first, to know it rebuilt the same samples."""
    x = x.astype(np.float64)
    return {'sum': float(x.sum()), 'sumAbs': float(np.abs(x).sum()), 'sumSquares': float((x * x).sum())}


def rounded(a, digits):
    return [round(float(v), digits) for v in np.ravel(a)]
