"""The features/specialists rules resolve into the expected DAG (dry run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _dry_run(tmp_path, *targets, overlays=()):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
           str(tmp_path), "-n", "--cores", "2", "--configfile", str(REPO / "config.yaml"),
           *map(str, overlays), "--", *targets]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_accuracy_table_dag(tmp_path):
    res = _dry_run(tmp_path, "results/tables/specialist_accuracy.tsv",
                   "results/features/synth_emotion.tsv")
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout + res.stderr
    for rule in ("specialists_train", "specialists_predict", "specialists_accuracy",
                 "features_table", "synth_emotion", "synth_speaker"):
        assert rule in out, rule
    assert "specialists_whisper_eval" not in out  # off by default


def test_whisper_backend_pulls_the_assembled_model(tmp_path):
    overlay = tmp_path / "whisper.yaml"
    overlay.write_text("specialists:\n  language:\n    backend: whisper\n")
    res = _dry_run(tmp_path, "results/specialists/language/synth_language/model.json",
                   overlays=(overlay,))
    assert res.returncode == 0, res.stderr[-2000:]
    assert "specialists_whisper_model" in res.stdout + res.stderr


def test_whisper_embed_emotion_backend_pulls_the_assembled_model(tmp_path):
    overlay = tmp_path / "whisper_embed.yaml"
    overlay.write_text("specialists:\n  emotion:\n    backend: whisper_embed\n")
    res = _dry_run(tmp_path, "results/specialists/emotion/synth_emotion/model.json",
                   overlays=(overlay,))
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout + res.stderr
    assert "specialists_whisper_model" in out and "specialists_train" in out
