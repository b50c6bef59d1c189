"""Cleanness on real speech (issue 21): configs/paper_a.yaml builds its cleanness
pairs from clean clips of the real emotion corpus (RAVDESS) and degraded copies of
them (data/real_degraded), each degradation recorded in the manifest; a real-mode
run whose cleanness falls back to the synthetic corpus warns like every attribute."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml
from real_layouts import ravdess_layout

from judgeaudit.config import validate_config
from judgeaudit.datasets.real import ingest
from judgeaudit.datasets.real.degraded import build
from judgeaudit.datasets.sources import corpus_sources, warn_fallbacks
from judgeaudit.datasets.validate import validate_manifest
from judgeaudit.io import write_tsv_atomic
from judgeaudit.study_a.pair_sources import cleanness_pairs
from judgeaudit.workflow import Plan, PlanError

REPO = Path(__file__).resolve().parents[1]
SEED = 20260715


def _paper_a(**datasets) -> dict:
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    over = yaml.safe_load((REPO / "configs" / "paper_a.yaml").read_text())
    for k, v in over.items():
        base[k] = {**base.get(k, {}), **v} if isinstance(v, dict) else v
    for name, cfg in datasets.items():
        base["datasets"][name] = {**base["datasets"].get(name, {}), **cfg}
    return validate_config(base)


def _fallback_msgs(plan: Plan) -> list[str]:
    param = json.loads(plan.corpus_sources_param())
    frame = corpus_sources({a: tuple(v) for a, v in param["attributes"].items()},
                           param["sources"], param["used"])
    return warn_fallbacks(frame, logging.getLogger("test"))


def test_paper_a_plans_cleanness_from_real_ravdess():
    cfg = _paper_a()
    p = Plan(cfg, REPO)
    assert p.study_a_dataset("cleanness") == "real_degraded"
    assert p.study_a_pair_specialist_name("cleanness") == "naturalness@real_degraded"
    assert "data/real_degraded/manifest.tsv" in p.real_targets()
    assert p.derived_input("real_degraded") == {"base": "data/ravdess/manifest.tsv"}
    # empty degradations = exactly the synthetic corpus's kinds and levels
    params = json.loads(p.derived_params("real_degraded"))
    assert params["degradations"] == cfg["datasets"]["synth_naturalness"]["degradations"]
    assert not any("'cleanness'" in w for w in p.real_mode_fallbacks())
    assert not any("'cleanness'" in m for m in _fallback_msgs(p))


def test_synthetic_cleanness_in_real_mode_warns(caplog):
    p = Plan(_paper_a(real_degraded={"source": "synthetic"}), REPO)
    assert p.study_a_dataset("cleanness") == "synth_naturalness"
    warned = [w for w in p.real_mode_fallbacks() if "'cleanness'" in w]
    assert len(warned) == 1 and "REAL-MODE FALLBACK" in warned[0]
    assert "synth_naturalness" in warned[0]
    with caplog.at_level(logging.WARNING):
        msgs = [m for m in _fallback_msgs(p) if "'cleanness'" in m]
    assert len(msgs) == 1 and msgs[0].startswith("REAL-MODE FALLBACK")
    assert "datasets.real_degraded.source is synthetic" in msgs[0]
    assert any("'cleanness'" in r.getMessage() for r in caplog.records)
    # the default (all-synthetic) workflow: no real mode, no warning, no EmoDB
    default = Plan(validate_config({}), REPO)
    assert default.dataset_for("cleanness") == "synth_naturalness"
    assert default.real_mode_fallbacks() == [] and default.real_targets() == []


def test_derived_from_a_synthetic_base_is_a_plan_error():
    cfg = _paper_a(ravdess={"source": "synthetic"})
    with pytest.raises(PlanError, match="datasets.ravdess.source is 'synthetic'"):
        Plan(cfg, REPO).derived_input("real_degraded")


def test_real_degraded_pairs_come_from_real_clips(tmp_path, emodb_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lay = ravdess_layout(tmp_path / "ravdess_src", emodb_dir, per_speaker=4)
    rcfg = validate_config({"datasets": {"ravdess": {"source": "local_dir",
                                                     "local_dir": str(lay.root),
                                                     **lay.cfg}}})["datasets"]["ravdess"]
    written = ingest("ravdess", lay.root, tmp_path / "data" / "ravdess", rcfg, seed=SEED,
                     cache_dir=tmp_path / "cache", workdir=tmp_path)
    base = pd.read_csv(written["manifest.tsv"], sep="\t", dtype=str, keep_default_na=False)
    degs = {"white_noise": [20, 0], "babble_noise": [10], "bandlimit": [1000]}
    cfg = {"base": "ravdess", "sources_per_split": 4, "base_column": "", "base_values": []}
    out = tmp_path / "data" / "real_degraded"
    tables = build(written["manifest.tsv"], cfg, out, SEED, degs, root=tmp_path)
    for name, frame in tables.items():
        write_tsv_atomic(out / name, frame)
    m = validate_manifest(out / "manifest.tsv", "real_degraded", root=tmp_path)
    clean = m[m.degradation == "clean"]
    assert len(clean) == 8 and set(clean.split) == {"train", "test"}
    # every clean source is a real RAVDESS clip: same samples, its sha256 recorded
    by_id = base.set_index("clip_id")
    for r in clean.itertuples():
        assert r.base_sha256 == by_id.loc[r.base_clip, "sha256"]
        src = tmp_path / by_id.loc[r.base_clip, "path"]
        assert hashlib.sha256(src.read_bytes()).hexdigest() == r.base_sha256
        a, _ = sf.read(src, dtype="float32")
        b, _ = sf.read(tmp_path / r.path, dtype="float32")
        assert np.allclose(a.reshape(len(a), -1).mean(axis=1), b, atol=1e-4)
        assert r.speaker == by_id.loc[r.base_clip, "speaker"]
        assert r.split == by_id.loc[r.base_clip, "split"]
    # each degraded copy: kind, level parameter, its source, sha256 of its own bytes
    deg = m[m.degradation != "clean"]
    assert len(deg) == 8 * 4
    for r in deg.itertuples():
        params = json.loads(r.degradation_params)
        assert r.source_clip in set(clean.clip_id)
        assert params[{"white_noise": "snr_db", "babble_noise": "snr_db",
                       "bandlimit": "cutoff_hz"}[r.degradation]] in degs[r.degradation]
        assert hashlib.sha256((tmp_path / r.path).read_bytes()).hexdigest() == r.sha256
        if r.degradation == "babble_noise":  # other talkers of the same split
            others = by_id.loc[params["babble_clips"]]
            assert not (others.speaker == r.speaker).any()
            assert (others.split == r.split).all()
    # a degraded copy differs from its clean source (the 0 dB noise copy by a lot)
    x, _ = sf.read(tmp_path / clean.iloc[0].path, dtype="float32")
    y, _ = sf.read(tmp_path / f"data/real_degraded/clips/{clean.iloc[0].clip_id}"
                   f"_white_noise_2.wav", dtype="float32")
    assert float(np.mean((x - y) ** 2)) > 0.1 * float(np.mean(x ** 2))
    # the Study A cleanness pairs: test-split real clean clip vs its degraded copy
    pairs = cleanness_pairs(pd.read_csv(out / "manifest.tsv", sep="\t"), 12, SEED)
    test_clean = set(clean[clean.split == "test"].clip_id)
    assert len(pairs) == 12
    for pr in pairs:
        assert pr.better.clip_id in test_clean
        assert pr.worse.clip_id.startswith(pr.better.clip_id + "_")
    assert len({pr.better.clip_id for pr in pairs}) == len(test_clean)  # spread over sources
