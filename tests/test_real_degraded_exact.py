"""Issue 35: the clean copies of `real_degraded` are the real clips, bit for bit,
including samples near full scale (one PCM scale for read and write)."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pandas as pd
import soundfile as sf

from judgeaudit.datasets.audio import from_pcm16, to_pcm16
from judgeaudit.datasets.real.degraded import build
from judgeaudit.io import write_tsv_atomic


def _clip(path, pcm):
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), pcm, 16000, subtype="PCM_16", format="WAV")  # as the ingest writes
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_int16_value_round_trips():
    k = np.arange(-32768, 32768, dtype=np.int64).astype(np.int16)
    assert np.array_equal(to_pcm16(from_pcm16(k)), k)


def test_full_scale_clean_copies_are_bit_identical(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for i, (spk, split) in enumerate([("a", "train"), ("b", "test")]):
        n = 8000
        pcm = (rng.normal(0, 0.3, n) * 32767).clip(-32768, 32767).astype(np.int16)
        # full scale and just above half scale, where 32768 vs 32767 differ by one LSB
        pcm[:6] = [32767, -32768, 32766, -32767, 16385, -16385]
        pcm[100:200] = rng.integers(16384, 32768, 100)
        path = tmp_path / "data" / "base" / "clips" / f"c{i}.wav"
        rows.append({"clip_id": f"c{i}", "path": f"data/base/clips/c{i}.wav",
                     "sha256": _clip(path, pcm), "speaker": spk, "split": split})
    write_tsv_atomic(tmp_path / "data" / "base" / "manifest.tsv", pd.DataFrame(rows))
    tables = build(tmp_path / "data" / "base" / "manifest.tsv",
                   {"base": "base", "sources_per_split": 1, "base_column": "",
                    "base_values": []}, tmp_path / "data" / "real_degraded", 1,
                   {"white_noise": [20]}, root=tmp_path)
    m = tables["manifest.tsv"]
    clean = m[m["degradation"] == "clean"]
    assert len(clean) == 2
    for r in clean.itertuples():
        src = tmp_path / f"data/base/clips/{r.base_clip}.wav"
        out = tmp_path / r.path
        assert r.sha256 == r.base_sha256
        assert out.read_bytes() == src.read_bytes()
        a, _ = sf.read(io.BytesIO(src.read_bytes()), dtype="int16")
        b, _ = sf.read(io.BytesIO(out.read_bytes()), dtype="int16")
        assert np.array_equal(a, b) and a.max() == 32767 and a.min() == -32768
