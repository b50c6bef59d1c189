"""The report's audio copies are encoded by the trace jobs, side by side, not by the
report job (the run's last, on its critical path): `encode_cited_audio` fills the
content-addressed store with exactly the clips the pages will play, and the report
then only links them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import soundfile as sf

from judgeaudit.io import sha256_file
from judgeaudit.report.audio import AudioCopies
from judgeaudit.report.cellpages import TraceFailed, encode_cited_audio


@dataclass
class _Trace:  # what `encode_cited_audio` reads of a cell trace: its trial rows
    trials: list = field(default_factory=list)


def _clip(path, seconds: float, seed: int) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    x = np.random.default_rng(seed).uniform(-0.3, 0.3, int(16000 * seconds))
    sf.write(path, x.astype("float32"), 16000, subtype="PCM_16")
    return sha256_file(path)


def test_trace_jobs_fill_the_store_and_the_report_only_links(tmp_path):
    a = _clip(tmp_path / "data" / "c" / "a.wav", 1.0, 1)
    b = _clip(tmp_path / "data" / "c" / "b.wav", 0.5, 2)
    _clip(tmp_path / "data" / "c" / "unused.wav", 0.5, 3)
    part = {"kind": "audio", "path": "data/c/a.wav", "sha256": a}
    traces = [
        [_Trace([{"request_parts": [part, {"kind": "text", "text": "q"}]}]),
         # a second trace of the same row: the pages read the first only
         _Trace([{"request_parts": [{"kind": "audio", "path": "data/c/unused.wav"}]}])],
        TraceFailed("no such cell"),
        [],
        [_Trace([{"request_parts": [part, {"kind": "audio", "path": "data/c/b.wav",
                                           "sha256": b}]}])],
    ]
    assert encode_cited_audio(traces, tmp_path) == 2
    store = sorted(p.name for p in (tmp_path / "results" / "audio_store").rglob("*.opus"))
    assert store == sorted([f"{a[:24]}.opus", f"{b[:24]}.opus"])
    assert encode_cited_audio(traces, tmp_path) == 0  # a second trace job encodes nothing
    out = tmp_path / "results" / "report"
    copies = AudioCopies(tmp_path, out)
    for path, sha in (("data/c/a.wav", a), ("data/c/b.wav", b)):
        copies.add(path, sha)
    stats = copies.write()
    assert stats["encoded"] == 0 and stats["reused"] == stats["clips"] == 2
    assert sorted(p.name for p in (out / "audio").iterdir()) == store
    info = sf.info(str(out / "audio" / f"{a[:24]}.opus"))
    assert info.format == "OGG" and info.subtype == "OPUS" and abs(info.duration - 1.0) < 0.05


def test_the_tiny_runs_report_encodes_no_clip_itself(tiny_run):
    rec = json.loads((tiny_run.root / "results" / "report" / "index.html.prov.json")
                     .read_text())
    audio = rec["extra"]["summary"]["audio"]
    assert audio["clips"] > 0
    assert audio["encoded"] == 0 and audio["reused"] == audio["clips"] - audio["copied"]
