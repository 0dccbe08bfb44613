#!/usr/bin/env python3
"""Write reference Whisper log-mel features (packages/asr/fixtures/whisper-mel-references.json).

    python3 scripts/make-whisper-mel-references.py      (needs numpy)

A numpy implementation, independent of packages/asr/src/dsp/whisper-mel.ts, of openai/whisper's
whisper/audio.py as its README decodes a clip: log_mel_spectrogram(pad_or_trim(audio), n_mels)
(https://github.com/openai/whisper/blob/c0d2f624c09dc18e709e37c2ad90c039a4eb72a2/whisper/audio.py):

- pad_or_trim: the float32 audio cut or zero-padded to 480000 samples (30 s at 16 kHz);
- torch.stft(audio, 400, 160, window=torch.hann_window(400), return_complex=True) with its
  defaults center=True, pad_mode='reflect': 200 samples reflected on each side (the edge sample not
  repeated), periodic Hann window 0.5 - 0.5 cos(2 pi n / 400), 3001 frames of rfft;
- magnitudes = |stft|^2 without the last frame (3000 frames);
- filters @ magnitudes with filters = mel_filters.npz, which whisper saved from
  librosa.filters.mel(sr=16000, n_fft=400, n_mels=80 or 128): Slaney mel scale (linear below
  1 kHz at 200/3 Hz per mel, logarithmic above with step ln(6.4) / 27), n_mels + 2 points evenly
  spaced in mel from 0 to 8 kHz, triangles over the rfft bin frequencies, each scaled by
  2 / (upper - lower edge in Hz) (norm='slaney'), built as librosa builds it in a float32 array
  (https://github.com/librosa/librosa/blob/b7e7bf486353821311f68d756e487f65d09cf319/librosa/filters.py,
  librosa/core/convert.py hz_to_mel, mel_to_hz, mel_frequencies, fft_frequencies);
- log10(clamp(min=1e-10)), then maximum(x, x.max() - 8), then (x + 4) / 4.

The arithmetic is float64 (torch runs in float32, so openai's own output differs from these
values by float32 rounding, ~1e-7). The inputs are the closed-form signals of
scripts/reference_signals.py. The file keeps, per case, every mel value of a few frames (the
edges, the middle and where the signal ends), the mean of every mel band over the 3000 frames,
the mean over the bands of each of the first frames, and the overall max, min and mean.
"""
import json
import os

import numpy as np

from reference_signals import checksum, make_signal, rounded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'packages', 'asr', 'fixtures', 'whisper-mel-references.json')

SOURCE = 'https://github.com/openai/whisper/blob/c0d2f624c09dc18e709e37c2ad90c039a4eb72a2/whisper/audio.py'
RATE = 16000
N_FFT = 400
HOP = 160
N_SAMPLES = 30 * RATE
N_FRAMES = N_SAMPLES // HOP
DIGITS = 8

CASES = [
    ('chirp, tones and noise, 2.5 s and 37 samples', 80,
     {'rate': RATE, 'length': 40037, 'chirp': {'amp': 0.3, 'f0': 120, 'f1': 6500, 'am': 0.4},
      'tones': [[0.1, 220], [0.04, 3150]], 'noiseAmp': 0.05, 'seed': 20240601}),
    ('the same signal through 128 mel bands', 128,
     {'rate': RATE, 'length': 40037, 'chirp': {'amp': 0.3, 'f0': 120, 'f1': 6500, 'am': 0.4},
      'tones': [[0.1, 220], [0.04, 3150]], 'noiseAmp': 0.05, 'seed': 20240601}),
    ('a short tone with noise, 1603 samples', 80,
     {'rate': RATE, 'length': 1603, 'tones': [[0.5, 1000]], 'noiseAmp': 0.02, 'seed': 7}),
    ('30.5 s of a quiet chirp with a silent second (cut to 30 s; the end is reflected signal)', 80,
     {'rate': RATE, 'length': 488000, 'chirp': {'amp': 0.2, 'f0': 50, 'f1': 7900, 'am': 0.5},
      'noiseAmp': 0.01, 'seed': 99, 'silences': [[12.0, 13.0]]}),
    ('silence, 0.5 s', 80, {'rate': RATE, 'length': 8000}),
]


def hz_to_mel(f):
    f = np.asanyarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-300) / min_log_hz) / logstep, mels)


def mel_to_hz(m):
    m = np.asanyarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    freqs = f_sp * m
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), freqs)


def librosa_mel(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    """librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin, fmax), htk=False, norm='slaney', float32."""
    if fmax is None:
        fmax = float(sr) / 2
    weights = np.zeros((n_mels, int(1 + n_fft // 2)), dtype=np.float32)
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
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


def log_mel_spectrogram(audio, n_mels):
    audio = audio.astype(np.float32)
    audio = audio[:N_SAMPLES] if len(audio) > N_SAMPLES else np.pad(audio, (0, N_SAMPLES - len(audio)))
    x = np.pad(audio.astype(np.float64), N_FFT // 2, mode='reflect')
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    count = 1 + (len(x) - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(count)[:, None]
    stft = np.fft.rfft(x[idx] * window, axis=1)  # [frames, bins]
    magnitudes = (np.abs(stft) ** 2)[:-1].T  # [bins, 3000]
    filters = librosa_mel(RATE, N_FFT, n_mels).astype(np.float64)
    mel_spec = filters @ magnitudes
    log_spec = np.log10(np.maximum(mel_spec, 1e-10))
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def main():
    cases = []
    for name, n_mels, spec in CASES:
        x = make_signal(spec)
        f = log_mel_spectrogram(x, n_mels)
        assert f.shape == (n_mels, N_FRAMES)
        last = min(N_FRAMES, -(-len(x) // HOP))
        frames = sorted({v for v in (0, 1, 2, last // 4, last // 2, 3 * last // 4, last - 2, last - 1, last, last + 1, 1500, N_FRAMES - 1) if 0 <= v < N_FRAMES})
        head = min(N_FRAMES, last + 2, 300)
        cases.append({
            'name': name,
            'nMels': n_mels,
            'signal': spec,
            'checksum': checksum(x),
            'frames': frames,
            'values': [rounded(f[:, t], DIGITS) for t in frames],
            'melMeans': rounded(f.mean(axis=1), DIGITS),
            'frameMeans': rounded(f[:, :head].mean(axis=0), DIGITS),
            'max': round(float(f.max()), DIGITS),
            'min': round(float(f.min()), DIGITS),
            'mean': round(float(f.mean()), DIGITS),
        })
        print(f'{name}: {n_mels} mels, range [{f.min():.4f}, {f.max():.4f}]')
    doc = {
        'description': 'Whisper log-mel features (log_mel_spectrogram(pad_or_trim(audio), n_mels)) made by scripts/make-whisper-mel-references.py with numpy in float64',
        'script': 'scripts/make-whisper-mel-references.py',
        'sources': [SOURCE, 'https://github.com/librosa/librosa/blob/b7e7bf486353821311f68d756e487f65d09cf319/librosa/filters.py'],
        'sampleRate': RATE,
        'nFrames': N_FRAMES,
        'layout': 'values[k] holds every mel band of frame frames[k]; melMeans[m] is the mean of band m over all frames; frameMeans[t] the mean over the bands of frame t',
        'cases': cases,
    }
    with open(OUT, 'w') as fh:
        json.dump(doc, fh, separators=(',', ':'))
        fh.write('\n')
    print(f'{len(cases)} cases -> {OUT} ({os.path.getsize(OUT)} bytes)')


if __name__ == '__main__':
    main()
