#!/usr/bin/env python3
"""Write reference Wav2Lip mel spectrograms (packages/lips/fixtures/wav2lip-mel-references.json).

    python3 scripts/make-wav2lip-mel-references.py      (needs numpy and scipy)

A numpy/scipy implementation, independent of packages/lips/src/audio/mel.ts, of Wav2Lip's
audio.melspectrogram with its hparams.py
(https://github.com/Rudrabha/Wav2Lip/blob/5c90fa9b4a2c2a37d0b4ebf7633ac41534eb9941/audio.py and
hparams.py), under the librosa its requirements.txt pins (librosa==0.7.0):

- preemphasis: scipy.signal.lfilter([1, -0.97], [1], wav) (the first sample kept as it is);
- _stft: librosa.stft(y, n_fft=800, hop_length=200, win_length=800) with librosa 0.7.0's
  defaults window='hann' (scipy.signal.get_window('hann', 800, fftbins=True), periodic),
  center=True and pad_mode='reflect' (400 samples reflected on each side, the edge sample not
  repeated; librosa 0.10 changed the default to 'constant', but Wav2Lip's positional
  librosa.filters.mel call runs only on librosa < 0.10), frames = 1 + len // 200;
- np.abs(D), then _linear_to_mel: librosa.filters.mel(16000, 800, n_mels=80, fmin=55, fmax=7600)
  with 0.7.0's defaults htk=False, norm=1 (Slaney area normalisation) in float32, bin
  frequencies np.linspace(0, 8000, 401) (0.7.0's fft_frequencies)
  (https://github.com/librosa/librosa/blob/0.7.0/librosa/filters.py, core/spectrum.py,
  core/time_frequency.py);
- _amp_to_db: 20 log10(max(10^(-100/20), x)), minus ref_level_db 20;
- _normalize (signal_normalization, allow_clipping_in_normalization, symmetric_mels,
  max_abs_value 4, min_level_db -100): clip(8 (S + 100) / 100 - 4, -4, 4).

The arithmetic is float64 (librosa 0.7.0 keeps the STFT in complex64 and the mel product in
float32, so the original differs from these values by float32 rounding). The inputs are the
closed-form signals of scripts/reference_signals.py. The file keeps, per case, every band of a
few frames, the mean of every band over all frames and the mean over the bands of every frame.
"""
import json
import os

import numpy as np
from scipy import signal as sps

from reference_signals import checksum, make_signal, rounded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'packages', 'lips', 'fixtures', 'wav2lip-mel-references.json')

RATE = 16000
N_FFT = 800
HOP = 200
WIN = 800
N_MELS = 80
FMIN, FMAX = 55, 7600
PREEMPHASIS = 0.97
MIN_LEVEL_DB = -100
REF_LEVEL_DB = 20
MAX_ABS = 4.0
DIGITS = 7

CASES = [
    ('chirp, tone and noise with a silent stretch, 1.5 s and 77 samples',
     {'rate': RATE, 'length': 24077, 'chirp': {'amp': 0.4, 'f0': 80, 'f1': 7000, 'am': 0.4},
      'tones': [[0.1, 150]], 'noiseAmp': 0.03, 'seed': 11, 'silences': [[0.9, 1.1]]}),
    ('two tones and noise, 3213 samples (17 frames)',
     {'rate': RATE, 'length': 3213, 'tones': [[0.3, 440], [0.2, 2500]], 'noiseAmp': 0.01, 'seed': 3}),
    ('quiet noise at the floor, 0.3 s',
     {'rate': RATE, 'length': 4800, 'noiseAmp': 0.003, 'seed': 5}),
]


def hz_to_mel(f):
    f = np.asanyarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-300) / min_log_hz) / logstep, f / f_sp)


def mel_to_hz(m):
    m = np.asanyarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def librosa070_mel(sr, n_fft, n_mels, fmin, fmax):
    """librosa 0.7.0 filters.mel(sr, n_fft, n_mels, fmin, fmax), htk=False, norm=1, dtype float32."""
    weights = np.zeros((n_mels, int(1 + n_fft // 2)), dtype=np.float32)
    fftfreqs = np.linspace(0, float(sr) / 2, int(1 + n_fft // 2), endpoint=True)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, np.newaxis]
    return weights


def melspectrogram(wav, pad_mode='reflect'):
    y = sps.lfilter([1, -PREEMPHASIS], [1], wav.astype(np.float64))
    y = np.pad(y, N_FFT // 2, mode=pad_mode)
    window = sps.get_window('hann', WIN, fftbins=True)
    count = 1 + (len(y) - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(count)[:, None]
    D = np.fft.rfft(y[idx] * window, axis=1).T  # [bins, frames]
    S = librosa070_mel(RATE, N_FFT, N_MELS, FMIN, FMAX).astype(np.float64) @ np.abs(D)
    min_level = np.exp(MIN_LEVEL_DB / 20 * np.log(10))
    S = 20 * np.log10(np.maximum(min_level, S)) - REF_LEVEL_DB
    return np.clip((2 * MAX_ABS) * ((S - MIN_LEVEL_DB) / (-MIN_LEVEL_DB)) - MAX_ABS, -MAX_ABS, MAX_ABS)


def main():
    cases = []
    for name, spec in CASES:
        x = make_signal(spec)
        m = melspectrogram(x)
        n = m.shape[1]
        assert n == 1 + len(x) // HOP
        frames = sorted({v for v in (0, 1, 2, 3, n // 4, n // 2, 3 * n // 4, n - 4, n - 3, n - 2, n - 1) if 0 <= v < n})
        constant = melspectrogram(x, 'constant')
        cases.append({
            'name': name,
            'signal': spec,
            'checksum': checksum(x),
            'melFrames': n,
            'frames': frames,
            'values': [rounded(m[:, t], DIGITS) for t in frames],
            'melMeans': rounded(m.mean(axis=1), DIGITS),
            'frameMeans': rounded(m.mean(axis=0), DIGITS),
        })
        print(f'{name}: {n} frames, range [{m.min():.4f}, {m.max():.4f}]; '
              f"pad_mode='constant' would change the edge frames by up to {np.abs(constant - m).max():.3f}")
    doc = {
        'description': "Wav2Lip mel spectrograms (audio.melspectrogram with hparams.py, librosa 0.7.0's stft and filters.mel) made by scripts/make-wav2lip-mel-references.py with numpy/scipy in float64",
        'script': 'scripts/make-wav2lip-mel-references.py',
        'sources': [
            'https://github.com/Rudrabha/Wav2Lip/blob/5c90fa9b4a2c2a37d0b4ebf7633ac41534eb9941/audio.py',
            'https://github.com/Rudrabha/Wav2Lip/blob/5c90fa9b4a2c2a37d0b4ebf7633ac41534eb9941/hparams.py',
            'https://github.com/Rudrabha/Wav2Lip/blob/5c90fa9b4a2c2a37d0b4ebf7633ac41534eb9941/requirements.txt',
            'https://github.com/librosa/librosa/blob/0.7.0/librosa/core/spectrum.py',
            'https://github.com/librosa/librosa/blob/0.7.0/librosa/filters.py',
        ],
        'padMode': 'reflect (librosa 0.7.0 stft default)',
        'sampleRate': RATE,
        'nMels': N_MELS,
        'layout': 'values[k] holds every band of mel frame frames[k]; melMeans[m] is the mean of band m over all frames; frameMeans[t] the mean over the bands of frame t',
        'cases': cases,
    }
    with open(OUT, 'w') as fh:
        json.dump(doc, fh, separators=(',', ':'))
        fh.write('\n')
    print(f'{len(cases)} cases -> {OUT} ({os.path.getsize(OUT)} bytes)')


if __name__ == '__main__':
    main()
