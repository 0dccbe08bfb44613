#!/usr/bin/env python3
"""Write reference OpenVoice spectrograms (packages/voice/fixtures/openvoice-spectrogram-references.json).

    python3 scripts/make-openvoice-spectrogram-references.py      (needs numpy)

A numpy implementation, independent of packages/voice/src/engines/openvoice.ts, of OpenVoice's
spectrogram_torch (https://github.com/myshell-ai/OpenVoice/blob/74a1d147b17a8c3092dd5430504bd83ef6c7eb23/openvoice/mel_processing.py),
which the tone-colour converter's extract_se and convert feed the models:

- torch.nn.functional.pad(y, (int((n_fft - hop) / 2),) * 2, mode='reflect') (the edge sample not
  repeated);
- torch.stft(y, n_fft, hop_length=hop, win_length=win, window=torch.hann_window(win),
  center=False, onesided=True): the periodic Hann window 0.5 - 0.5 cos(2 pi n / win), centred in
  the n_fft frame with (n_fft - win) // 2 zeros before it when win < n_fft; frames at every hop
  while a whole n_fft fits: 1 + (padded length - n_fft) // hop;
- sqrt(re^2 + im^2 + 1e-6).

The export's settings are those of its configuration.json (OpenVoice V2 converter: sampling_rate
22050, filter_length 1024, hop_length 256, win_length 1024; fixtures/openvoice-tiny/configuration.json
carries the same); a second case with win_length < filter_length exercises the centred window.
The arithmetic is float64 (torch runs in float32). The inputs are the closed-form signals of
scripts/reference_signals.py. The file keeps, per case, every bin of a few frames (8 significant
digits), the mean of every bin over all frames and the mean over the bins of every frame.
"""
import json
import os

import numpy as np

from reference_signals import checksum, make_signal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'packages', 'voice', 'fixtures', 'openvoice-spectrogram-references.json')

CASES = [
    ("the export's configuration (22050 Hz, n_fft 1024, hop 256, win 1024): chirp, tones and noise, 1 s and 101 samples",
     {'sampleRate': 22050, 'nFft': 1024, 'hop': 256, 'win': 1024},
     {'rate': 22050, 'length': 22151, 'chirp': {'amp': 0.4, 'f0': 90, 'f1': 9000, 'am': 0.5},
      'tones': [[0.1, 220], [0.05, 3100]], 'noiseAmp': 0.02, 'seed': 314159}),
    ('a window shorter than the FFT (16000 Hz, n_fft 512, hop 128, win 400): tones and noise with a silent stretch',
     {'sampleRate': 16000, 'nFft': 512, 'hop': 128, 'win': 400},
     {'rate': 16000, 'length': 8007, 'tones': [[0.3, 300], [0.2, 4100]], 'noiseAmp': 0.05, 'seed': 42,
      'silences': [[0.2, 0.3]]}),
]


def sig(v, digits=8):
    return float(f'{v:.{digits}g}')


def spectrogram(y, n_fft, hop, win):
    pad = int((n_fft - hop) / 2)
    x = np.pad(y.astype(np.float64), pad, mode='reflect')
    window = np.zeros(n_fft)
    left = (n_fft - win) // 2
    window[left:left + win] = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win) / win)
    count = 1 + (len(x) - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(count)[:, None]
    spec = np.fft.rfft(x[idx] * window, axis=1)  # [frames, bins]
    return np.sqrt(spec.real ** 2 + spec.imag ** 2 + 1e-6)


def main():
    cases = []
    for name, config, spec in CASES:
        x = make_signal(spec)
        s = spectrogram(x, config['nFft'], config['hop'], config['win'])
        n = s.shape[0]
        frames = sorted({v for v in (0, 1, 2, n // 2, n - 2, n - 1) if 0 <= v < n})
        cases.append({
            'name': name,
            'config': config,
            'signal': spec,
            'checksum': checksum(x),
            'spectrogramFrames': n,
            'bins': s.shape[1],
            'frames': frames,
            'values': [[sig(v) for v in s[t]] for t in frames],
            'binMeans': [sig(v) for v in s.mean(axis=0)],
            'frameMeans': [sig(v) for v in s.mean(axis=1)],
        })
        print(f'{name}: {n} frames x {s.shape[1]} bins, range [{s.min():.4g}, {s.max():.4g}]')
    doc = {
        'description': 'OpenVoice linear spectrograms (mel_processing.py spectrogram_torch) made by scripts/make-openvoice-spectrogram-references.py with numpy in float64',
        'script': 'scripts/make-openvoice-spectrogram-references.py',
        'sources': [
            'https://github.com/myshell-ai/OpenVoice/blob/74a1d147b17a8c3092dd5430504bd83ef6c7eb23/openvoice/mel_processing.py',
            'https://github.com/myshell-ai/OpenVoice/blob/74a1d147b17a8c3092dd5430504bd83ef6c7eb23/openvoice/api.py',
        ],
        'layout': 'values[k] holds every bin of frame frames[k] (8 significant digits); binMeans[b] is the mean of bin b over all frames; frameMeans[t] the mean over the bins of frame t',
        'cases': cases,
    }
    with open(OUT, 'w') as fh:
        json.dump(doc, fh, separators=(',', ':'))
        fh.write('\n')
    print(f'{len(cases)} cases -> {OUT} ({os.path.getsize(OUT)} bytes)')


if __name__ == '__main__':
    main()
