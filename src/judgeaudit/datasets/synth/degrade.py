"""Controlled degradations of the synthetic naturalness corpus.

Every function takes float samples, the sample rate, the level parameter and a
seeded Generator, and returns float32 samples of the same length.

| degradation   | parameter (mild -> severe)            | what it does                         |
|---------------|---------------------------------------|--------------------------------------|
| white_noise   | SNR in dB (e.g. 30, 20, 10, 0)         | additive Gaussian white noise        |
| babble_noise  | SNR in dB (e.g. 20, 10, 5, 0)          | additive mix of 4 other talkers      |
| clipping      | clip level / peak (0.5 ... 0.04)       | hard clipping, then RMS restored     |
| bandlimit     | low-pass cutoff Hz (4000 ... 500)      | 8th-order Butterworth low-pass       |
| phase_vocoder | share of STFT phase randomised (0-1)   | vocoder-like "phasiness"/buzz         |
| frame_drop    | share of 20 ms frames dropped (0-1)    | packet-loss style gaps (zeroed)      |

Score (1-5): a clean clip scores 5; level k (1-based) of K levels of any
degradation scores `5 - 4 * k / K` (with the default K = 4: 4, 3, 2, 1), so
within one degradation a more severe level always has a lower score.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.signal import butter, istft, sosfiltfilt, stft

from judgeaudit.datasets.synth.common import rms


def score(level: int, n_levels: int) -> float:
    """Score of severity `level` (0 = clean, 1..n_levels) on the 1-5 scale."""
    if level == 0:
        return 5.0
    if not 1 <= level <= n_levels:
        raise ValueError(f"severity {level} outside 1..{n_levels}")
    return round(5.0 - 4.0 * level / n_levels, 4)


def _mix_at_snr(x: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    noise = noise * (rms(x) / rms(noise)) * 10 ** (-float(snr_db) / 20)
    y = x + noise
    peak = np.max(np.abs(y))
    return (y / peak * 0.98 if peak > 0.98 else y).astype(np.float32)


def white_noise(x, sr, snr_db, rng, **_):
    return _mix_at_snr(x, rng.standard_normal(len(x)), snr_db)


def babble_noise(x, sr, snr_db, rng, babble: np.ndarray | None = None, **_):
    if babble is None or len(babble) == 0:
        raise ValueError("babble_noise needs a `babble` signal (mix of other talkers)")
    start = int(rng.integers(0, len(babble)))
    reps = int(np.ceil((len(x) + start) / len(babble))) + 1
    noise = np.tile(babble, reps)[start:start + len(x)]
    return _mix_at_snr(x, noise, snr_db)


def clipping(x, sr, level, rng, **_):
    thr = float(level) * float(np.max(np.abs(x)))
    y = np.clip(x, -thr, thr)
    return (y * (rms(x) / rms(y))).clip(-0.98, 0.98).astype(np.float32)


def bandlimit(x, sr, cutoff_hz, rng, **_):
    cutoff = min(float(cutoff_hz), 0.45 * sr)
    sos = butter(8, cutoff, btype="low", fs=sr, output="sos")
    return sosfiltfilt(sos, x).astype(np.float32)


def phase_vocoder(x, sr, amount, rng, **_):
    nper = int(0.032 * sr)
    _, _, z = stft(x, fs=sr, nperseg=nper, noverlap=nper * 3 // 4)
    phase = rng.uniform(-np.pi, np.pi, size=z.shape) * float(amount)
    _, y = istft(z * np.exp(1j * phase), fs=sr, nperseg=nper, noverlap=nper * 3 // 4)
    y = y[: len(x)]
    if len(y) < len(x):
        y = np.pad(y, (0, len(x) - len(y)))
    y = y * (rms(x) / rms(y))
    peak = np.max(np.abs(y))
    return (y / peak * 0.98 if peak > 0.98 else y).astype(np.float32)


def frame_drop(x, sr, share, rng, **_):
    frame = int(0.02 * sr)
    y = x.copy()
    n = int(np.ceil(len(x) / frame))
    drop = rng.random(n) < float(share)
    for i in np.nonzero(drop)[0]:
        y[i * frame:(i + 1) * frame] = 0.0
    return y.astype(np.float32)


DEGRADATIONS: dict[str, Callable[..., np.ndarray]] = {
    "white_noise": white_noise,
    "babble_noise": babble_noise,
    "clipping": clipping,
    "bandlimit": bandlimit,
    "phase_vocoder": phase_vocoder,
    "frame_drop": frame_drop,
}

__all__ = ["DEGRADATIONS", "score"]
