"""Small deterministic speech-like signals (source-filter vowels with syllable
envelopes) for unit tests and benchmarks, made with numpy alone."""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

VOWELS = {  # first three formants (Hz)
    "a": (730, 1090, 2440),
    "i": (270, 2290, 3010),
    "u": (300, 870, 2240),
    "e": (530, 1840, 2480),
    "o": (570, 840, 2410),
}


def _resonator(x: np.ndarray, freq: float, bw: float, sr: int) -> np.ndarray:
    r = np.exp(-np.pi * bw / sr)
    theta = 2 * np.pi * freq / sr
    a = [1.0, -2 * r * np.cos(theta), r * r]
    return lfilter([1 - r], a, x)


def voice(
    f0: float = 120.0,
    duration_s: float = 2.0,
    sr: int = 16000,
    f0_range: float = 0.15,
    syllable_rate: float = 4.0,
    level_db: float = -20.0,
    vowels: str = "aiueo",
    formant_shift: float = 1.0,
    noise: float = 0.0,
    seed: int = 0,
) -> np.ndarray:
    """A vowel sequence with a pitch contour and syllable-rate amplitude envelope.

    `f0_range` is the relative pitch excursion, `formant_shift` scales the
    formants (vocal-tract length: a different 'speaker'), `level_db` the RMS level."""
    rng = np.random.default_rng(seed)
    n = int(duration_s * sr)
    t = np.arange(n) / sr
    contour = f0 * (1 + f0_range * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6.28)))
    contour *= 1 + 0.01 * rng.standard_normal(n).cumsum() / np.sqrt(np.arange(1, n + 1))
    phase = np.cumsum(contour / sr)
    pulses = np.diff(np.floor(phase), prepend=0.0)
    src = lfilter([1.0], [1, -0.97], pulses)  # glottal-ish tilt
    seg_len = max(1, int(sr / syllable_rate))
    out = np.zeros(n)
    for k, start in enumerate(range(0, n, seg_len)):
        stop = min(n, start + seg_len)
        fs = VOWELS[vowels[k % len(vowels)]]
        seg = src[start:stop]
        y = sum(_resonator(seg, f * formant_shift, 80 + 0.05 * f, sr) for f in fs)
        env = np.sin(np.linspace(0, np.pi, stop - start)) ** 0.6
        out[start:stop] = y * env
    out += noise * rng.standard_normal(n)
    rms = np.sqrt(np.mean(out**2)) or 1.0
    out = out / rms * 10 ** (level_db / 20)
    return np.clip(out, -1, 1).astype(np.float32)
