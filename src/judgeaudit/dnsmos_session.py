"""speechmos' DNSMOS (P.835 sig/bak/ovrl + P.808) with ONNX sessions whose worker
threads sleep instead of spin-waiting between the small per-window calls.

`speechmos.dnsmos.run` builds the same two sessions with onnxruntime's defaults:
intra-op threads = the machine's cores, spinning on. The thread count is kept (it
fixes how each operator's work is split, so the scores are the same numbers to the
last bit); only `session.intra_op.allow_spinning` is off. Measured on the default
Study B replies (12 replies, 2-core machine): 24.0 s -> 18.4 s CPU, scores identical.
"""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def model():
    """A `speechmos.dnsmos.DNSMOS` (call it as `model()(samples, 16000, False)`, as
    `speechmos.dnsmos.run` does for one clip)."""
    import onnxruntime as ort
    from speechmos import dnsmos

    base = Path(dnsmos.__file__).parent / "dnsmos_models"
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    m = dnsmos.DNSMOS.__new__(dnsmos.DNSMOS)
    m.primary_model_path = str(base / "sig_bak_ovr.onnx")
    m.onnx_sess = ort.InferenceSession(m.primary_model_path, opts)
    m.p808_onnx_sess = ort.InferenceSession(str(base / "model_v8.onnx"), opts)
    return m


def score(samples, sr: int = 16000) -> dict:
    """DNSMOS of one mono clip (float in [-1, 1]) at 16 kHz: the dict
    `speechmos.dnsmos.run(samples, sr)` returns (ovrl_mos, sig_mos, bak_mos, p808_mos)."""
    if sr != 16000:
        raise ValueError(f"DNSMOS needs 16 kHz audio, got {sr} Hz")
    return model()(samples, sr, False)
