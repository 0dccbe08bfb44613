#!/usr/bin/python3
"""numpy references for the Spleeter front end of @dub/separation (src/dsp/spleeter-spectrogram.ts,
src/engines/spleeter.ts), written independently of it from kaldi-native-fbank's Stft/IStft and
k2-fsa/sherpa-onnx's offline-source-separation-spleeter-impl.h:

  stft   : zero-pad each channel by n_fft - hop on both sides, frames t*hop .. t*hop + n_fft
           (center false), periodic Hann window, numpy.fft.rfft (not normalized)
  istft  : numpy.fft.irfft of each frame, times the window, overlap-add, divided by the sum of
           squared windows where it is not zero, cropped to the segment
  mask   : (v^2 + eps/2) / (v^2 + a^2 + eps), eps = 1e-10, v and a the two graphs' outputs

Usage (the tests call it; float32 little-endian raw files, channel after channel):
  spleeter-reference.py stft IN OUT FRAMES BINS NFFT HOP
      IN: 2 x length samples; OUT: magnitudes [2][frames][bins], then re and im of channel 0 and
      of channel 1 [frames][n_fft/2+1] (float64 computed, written as float32)
  spleeter-reference.py separate IN OUT
      the stand-in graphs of scripts/make-tiny-spleeter.py (vocals y = G x, accompaniment
      y = (1 - G) x) on one segment of 512 frames; OUT: speech [2][length], background [2][length]
      (background = mix - speech)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


def segment_length(frames, nfft, hop):
    return (frames - 1) * hop + nfft - 2 * (nfft - hop)


def stft(x, frames, nfft, hop):
    pad = nfft - hop
    p = np.concatenate([np.zeros(pad), x.astype(np.float64), np.zeros(pad)])
    w = hann(nfft)
    return np.stack([np.fft.rfft(w * p[t * hop:t * hop + nfft]) for t in range(frames)])


def istft(spec, length, nfft, hop):
    pad = nfft - hop
    frames = spec.shape[0]
    w = hann(nfft)
    total = (frames - 1) * hop + nfft
    acc = np.zeros(total)
    den = np.zeros(total)
    for t in range(frames):
        acc[t * hop:t * hop + nfft] += w * np.fft.irfft(spec[t], nfft)
        den[t * hop:t * hop + nfft] += w * w
    out = np.where(den != 0, acc / np.where(den != 0, den, 1), 0)
    return out[pad:pad + length]


def main():
    mode = sys.argv[1]
    if mode == "stft":
        src, dst = sys.argv[2], sys.argv[3]
        frames, bins, nfft, hop = (int(v) for v in sys.argv[4:8])
        length = segment_length(frames, nfft, hop)
        x = np.fromfile(src, dtype="<f4").reshape(2, length)
        specs = [stft(x[c], frames, nfft, hop) for c in range(2)]
        mags = np.stack([np.abs(s[:, :bins]) for s in specs])
        parts = [mags.ravel()] + [v for s in specs for v in (s.real.ravel(), s.imag.ravel())]
        np.concatenate(parts).astype("<f4").tofile(dst)
    elif mode == "separate":
        from importlib import import_module

        gains = import_module("make-tiny-spleeter").STAND_IN_GAINS.astype(np.float64)
        src, dst = sys.argv[2], sys.argv[3]
        frames, bins, nfft, hop = 512, 1024, 4096, 1024
        length = segment_length(frames, nfft, hop)
        x = np.fromfile(src, dtype="<f4").reshape(2, length)
        eps = 1e-10
        speech = []
        for c in range(2):
            s = stft(x[c], frames, nfft, hop)
            mag = np.abs(s[:, :bins]).astype(np.float32).astype(np.float64)
            v = mag * gains
            a = mag * (1 - gains)
            m = (v * v + eps / 2) / (v * v + a * a + eps)
            full = np.zeros(s.shape)
            full[:, :bins] = m
            speech.append(istft(full * s, length, nfft, hop))
        speech = np.stack(speech)
        np.concatenate([speech.ravel(), (x - speech).ravel()]).astype("<f4").tofile(dst)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
