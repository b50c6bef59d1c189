"""`judgeaudit.dnsmos_session.score` against `speechmos.dnsmos.run`, bit for bit (the
reply-balance table's DNSMOS columns must not move with the speed-up). speechmos'
sessions run the machine's core count of intra-op threads, which moves the last bits;
the reference here is speechmos with its sessions given the two threads
`dnsmos_session` fixes, so the check holds on any machine, and the scores are those
speechmos gives on a 2-core machine."""

import numpy as np
import pytest

from judgeaudit import dnsmos_session


@pytest.fixture
def speechmos_two_threads(monkeypatch):
    """`speechmos.dnsmos.run` whose ONNX sessions run two intra-op threads."""
    import onnxruntime as ort
    from speechmos import dnsmos

    real = ort.InferenceSession

    def session(path, *args, **kwargs):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = dnsmos_session.INTRA_OP_THREADS
        return real(path, opts)

    monkeypatch.setattr(dnsmos.ort, "InferenceSession", session)
    monkeypatch.setattr(dnsmos, "dnsmos", None)
    yield dnsmos.run
    dnsmos.dnsmos = None


def _clip(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    voiced = 0.3 * np.sin(2 * np.pi * 140 * t) * (np.sin(2 * np.pi * 3 * t) > 0)
    return np.clip(voiced + 0.02 * rng.standard_normal(t.size), -1, 1)


@pytest.mark.parametrize("seconds", [3.3, 7.6, 11.2])
def test_score_equals_speechmos_run_to_the_bit(seconds, speechmos_two_threads):
    x = _clip(seconds, seed=int(seconds * 10))
    ours = dnsmos_session.score(x, 16000)
    ref = speechmos_two_threads(x, 16000)
    for key in ("ovrl_mos", "sig_mos", "bak_mos"):
        assert float(ours[key]) == float(ref[key]), key
    assert set(ours) == {"ovrl_mos", "sig_mos", "bak_mos"}


def test_score_rejects_other_rates_and_out_of_range_samples():
    with pytest.raises(ValueError, match="16 kHz"):
        dnsmos_session.score(np.zeros(8000), 8000)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        dnsmos_session.score(np.full(16000, 1.5), 16000)


def test_the_session_runs_two_intra_op_threads_whatever_the_machine():
    """The scores' last bits depend on the thread count: fixed, not the core count."""
    opts = dnsmos_session.model().onnx_sess.get_session_options()
    assert opts.intra_op_num_threads == dnsmos_session.INTRA_OP_THREADS == 2


def test_the_dnsmos_shard_rule_declares_the_sessions_threads():
    """Snakemake schedules by declared threads: a shard that runs two ONNX threads but
    declares one oversubscribes the cores beside the other jobs."""
    import re
    from pathlib import Path

    rules = Path(__file__).resolve().parents[1] / "rules"
    blocks = [m.group(1) for f in sorted(rules.glob("*.smk"))
              for m in re.finditer(r"^rule study_b_reply_dnsmos:\n(.*?)(?=^rule |\Z)",
                                   f.read_text(), re.S | re.M)]
    assert len(blocks) == 1, "rule study_b_reply_dnsmos not found once in rules/*.smk"
    threads = re.search(r"^\s+threads:\s*(\d+)", blocks[0], re.M)
    assert threads and int(threads.group(1)) == dnsmos_session.INTRA_OP_THREADS
