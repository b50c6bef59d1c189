"""speechmos' DNSMOS (P.835 sig/bak/ovrl) with an ONNX session of two intra-op
threads that do not spin-wait between the small per-window calls.

`speechmos.dnsmos.run` builds its sessions with onnxruntime's defaults: intra-op
threads = the machine's cores, spinning on. The thread count fixes how each
operator's work is split, and so the last bits of the scores: measured with
onnxruntime 1.32 on the default Study B replies, 1 thread moves 84 of 900 DNSMOS
values by up to 9e-8 against 2 threads, and 4 or 16 threads move others. So the
session here runs two threads whatever the machine: the scores are those
`speechmos.dnsmos.run` gives on a 2-core machine (the numbers the reply-balance
table has always had there) on a 16-core machine too, where the workflow runs the
DNSMOS shards side by side instead (rule study_b_reply_dnsmos). Spinning off:
24.0 s -> 18.4 s CPU on the default replies of the time.

`score` walks the clip exactly as `speechmos.dnsmos.DNSMOS.__call__` does (the clip
doubled until it is one 9.01 s input long, then every 1 s hop) but runs only the
SIG/BAK/OVRL model: speechmos also computes the P.808 mel spectrogram and model on
every window, whose `p808_mos` no caller here reads (~6% of the CPU).
`tests/test_dnsmos_session.py` pins it to `speechmos.dnsmos.run` (its sessions given
the same two intra-op threads) bit for bit.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

SR = 16000
#: onnxruntime intra-op threads of the session (fixed: the scores' bits depend on it)
INTRA_OP_THREADS = 2


@functools.cache
def model():
    """A `speechmos.dnsmos.DNSMOS` with only its SIG/BAK/OVRL session (no P.808
    session: `score` never runs it), of two intra-op threads that do not spin."""
    import onnxruntime as ort
    from speechmos import dnsmos

    base = Path(dnsmos.__file__).parent / "dnsmos_models"
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = INTRA_OP_THREADS
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    m = dnsmos.DNSMOS.__new__(dnsmos.DNSMOS)
    m.primary_model_path = str(base / "sig_bak_ovr.onnx")
    m.onnx_sess = ort.InferenceSession(m.primary_model_path, opts)
    return m


def score(samples, sr: int = SR) -> dict:
    """DNSMOS of one mono clip (float in [-1, 1]) at 16 kHz: `ovrl_mos`, `sig_mos` and
    `bak_mos` as `speechmos.dnsmos.run(samples, sr)` returns them, to the bit."""
    if sr != SR:
        raise ValueError(f"DNSMOS needs 16 kHz audio, got {sr} Hz")
    from speechmos.dnsmos import INPUT_LENGTH

    audio = np.asarray(samples)
    if not ((audio >= -1).all() and (audio <= 1).all()):
        raise ValueError("DNSMOS: samples must lie in [-1, 1]")
    m = model()
    # the lines below follow speechmos.dnsmos.DNSMOS.__call__ (same arithmetic, same
    # dtypes), minus the P.808 branch
    len_samples = int(INPUT_LENGTH * sr)
    while len(audio) < len_samples:
        audio = np.append(audio, audio)
    num_hops = int(np.floor(len(audio) / sr) - INPUT_LENGTH) + 1
    sig, bak, ovr = [], [], []
    for idx in range(num_hops):
        seg = audio[int(idx * sr): int((idx + INPUT_LENGTH) * sr)]
        if len(seg) < len_samples:
            continue
        raw = m.onnx_sess.run(None, {"input_1": np.array(seg).astype("float32")[np.newaxis, :]})
        s, b, o = m.get_polyfit_val(*raw[0][0], False)
        sig.append(s)
        bak.append(b)
        ovr.append(o)
    return {"ovrl_mos": np.mean(ovr), "sig_mos": np.mean(sig), "bak_mos": np.mean(bak)}
