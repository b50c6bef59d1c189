"""`judgeaudit.dnsmos_session.score` against `speechmos.dnsmos.run`, bit for bit (the
reply-balance table's DNSMOS columns must not move with the speed-up)."""

import numpy as np
import pytest

from judgeaudit import dnsmos_session


def _clip(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    voiced = 0.3 * np.sin(2 * np.pi * 140 * t) * (np.sin(2 * np.pi * 3 * t) > 0)
    return np.clip(voiced + 0.02 * rng.standard_normal(t.size), -1, 1)


@pytest.mark.parametrize("seconds", [3.3, 7.6, 11.2])
def test_score_equals_speechmos_run_to_the_bit(seconds):
    from speechmos import dnsmos

    x = _clip(seconds, seed=int(seconds * 10))
    ours = dnsmos_session.score(x, 16000)
    ref = dnsmos.run(x, 16000)
    for key in ("ovrl_mos", "sig_mos", "bak_mos"):
        assert float(ours[key]) == float(ref[key]), key
    assert set(ours) == {"ovrl_mos", "sig_mos", "bak_mos"}


def test_score_rejects_other_rates_and_out_of_range_samples():
    with pytest.raises(ValueError, match="16 kHz"):
        dnsmos_session.score(np.zeros(8000), 8000)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        dnsmos_session.score(np.full(16000, 1.5), 16000)
