"""Specialist metrics: the EER threshold comes from the train trials, and the
speaker / source-clustered intervals are wider than the naive ones on data with
strong cluster correlation."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from judgeaudit.specialists import evaluate
from judgeaudit.stats.clustered import anova_icc, cluster_bootstrap_ci, clustered_wilson


def _speaker_setup(train_shift=0.0):
    """2-dim embeddings: clip i of speaker s at angle s*step + noise. Train trials
    are built so that their EER threshold is known to lie at `train_thr`."""
    rng = np.random.default_rng(0)
    rows, man = [], []
    for s in range(12):
        for u in range(4):
            ang = s * 0.5 + rng.normal(0, 0.12)
            cid = f"s{s}_u{u}"
            rows.append({"clip_id": cid, "status": "ok", "emb_000": np.cos(ang),
                         "emb_001": np.sin(ang), "version": "v"})
            man.append({"clip_id": cid, "speaker": f"spk{s}", "split": "train" if s < 6
                        else "test"})
    emb, man = pd.DataFrame(rows), pd.DataFrame(man)
    trials = []
    for split, spks in (("train", range(6)), ("test", range(6, 12))):
        for s in spks:
            for u in range(3):
                trials.append({"clip_a": f"s{s}_u{u}", "clip_b": f"s{s}_u{u + 1}", "same": True,
                               "split": split})
                o = spks[(list(spks).index(s) + 1) % len(spks)]
                trials.append({"clip_a": f"s{s}_u{u}", "clip_b": f"s{o}_u{u}", "same": False,
                               "split": split})
    return emb, pd.DataFrame(trials), man


def _scores(emb, t):
    e = emb.set_index("clip_id")[["emb_000", "emb_001"]]
    a, b = e.loc[t["clip_a"]].to_numpy(), e.loc[t["clip_b"]].to_numpy()
    return np.sum(a * b, axis=1)


def test_speaker_eer_uses_the_train_threshold_not_the_test_one():
    from judgeaudit.specialists.speaker import eer

    emb, trials, man = _speaker_setup()
    row = evaluate.speaker("toy", emb, trials, 0.1, manifest=man, n_boot=200)
    train, test = trials[trials.split == "train"], trials[trials.split == "test"]
    thr = eer(_scores(emb, train), train["same"].to_numpy())[1]
    s, same = _scores(emb, test), test["same"].to_numpy().astype(bool)
    hter = ((s[~same] >= thr).mean() + (s[same] < thr).mean()) / 2
    assert row["estimate"] == pytest.approx(hter)
    assert "train-split EER threshold" in row["method"] and "speaker-clustered" in row["method"]
    # moving the test scores' optimum does not move the reported threshold: shifting the
    # train embeddings' spread changes the estimate, shifting only test trials' labels does not
    flipped = trials.copy()
    flipped.loc[flipped.split == "train", "same"] = True
    flipped.loc[(flipped.split == "train") & (flipped.index % 4 == 1), "same"] = False
    row2 = evaluate.speaker("toy", emb, flipped, 0.1, manifest=man, n_boot=200)
    thr2 = eer(_scores(emb, flipped[flipped.split == "train"]),
               flipped[flipped.split == "train"]["same"].to_numpy())[1]
    hter2 = ((s[~same] >= thr2).mean() + (s[same] < thr2).mean()) / 2
    assert row2["estimate"] == pytest.approx(hter2)
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]


def test_speaker_row_uses_the_threshold_the_model_stores():
    """With the model's metadata the table scores the model's own rule
    (`similarity.same_speaker` at meta["threshold"]), not a threshold refitted on
    the train trials: a stored threshold far from the train EER point moves the
    estimate to exactly that threshold's error."""
    from judgeaudit.similarity import same_speaker

    emb, trials, man = _speaker_setup()
    test = trials[trials.split == "test"]
    s, same = _scores(emb, test), test["same"].to_numpy().astype(bool)
    for thr in (0.2, 0.9):
        meta = {"threshold": thr, "threshold_fit": "speaker-crossfit"}
        row = evaluate.speaker("toy", emb, trials, 0.1, manifest=man, meta=meta, n_boot=200)
        accept = same_speaker(s, thr)
        assert row["estimate"] == pytest.approx(((accept[~same]).mean()
                                                 + (~accept[same]).mean()) / 2)
        assert f"model's stored threshold (speaker-crossfit) {thr:.4f}" in row["method"]
    assert evaluate.speaker("toy", emb, trials, 0.1, manifest=man, n_boot=200,
                            meta={"threshold": 0.2})["estimate"] != pytest.approx(
        evaluate.speaker("toy", emb, trials, 0.1, manifest=man, n_boot=200)["estimate"])


def test_speaker_without_train_trials_cross_fits_over_speakers():
    emb, trials, man = _speaker_setup()
    row = evaluate.speaker("toy", emb, trials[trials.split == "test"], None, manifest=man,
                           n_boot=200)
    assert "cross-fit" in row["method"] and 0 <= row["estimate"] <= 1


def _clustered_binary(g=10, m=20, seed=3):
    rng = np.random.default_rng(seed)
    x, c = [], []
    for k in range(g):
        p = 0.95 if k % 2 else 0.35  # strong speaker effect
        x += list((rng.random(m) < p).astype(float))
        c += [f"spk{k}"] * m
    return np.array(x), c


def test_cluster_bootstrap_wider_than_naive_on_clustered_data():
    x, c = _clustered_binary()
    codes = np.unique(c, return_inverse=True)[1]

    def mean_by_cluster(counts):
        w = counts[codes]
        return float(np.sum(w * x) / np.sum(w))

    clustered = cluster_bootstrap_ci(mean_by_cluster, 10, n_resamples=1000, seed=1)
    naive = cluster_bootstrap_ci(lambda cnt: float(np.sum(cnt * x) / np.sum(cnt)), len(x),
                                 n_resamples=1000, seed=1)
    assert (clustered["ci_high"] - clustered["ci_low"]) > 1.8 * (naive["ci_high"] - naive["ci_low"])


def test_clustered_wilson_matches_design_effect_and_wilson_when_independent():
    x, c = _clustered_binary()
    cw = clustered_wilson(x, c)
    n = len(x)
    assert cw["deff"] == pytest.approx(1 + (20 - 1) * cw["icc"])
    lo, hi = proportion_confint(x.mean() * n / cw["deff"], n / cw["deff"], method="wilson")
    assert (cw["ci_low"], cw["ci_high"]) == pytest.approx((lo, hi))
    wl, wh = proportion_confint(x.sum(), n, method="wilson")
    assert cw["ci_high"] - cw["ci_low"] > 2 * (wh - wl)
    # balanced toy: groups all-1 / all-0 -> ICC 1; no between-group variation -> ICC 0
    assert anova_icc([1, 1, 1, 0, 0, 0], list("aaabbb")) == pytest.approx(1.0)
    assert anova_icc([1, 0, 1, 0], list("aabb")) == 0.0
    ind = clustered_wilson([1, 0, 1, 0], list("aabb"))
    assert (ind["ci_low"], ind["ci_high"]) == pytest.approx(proportion_confint(2, 4,
                                                                               method="wilson"))


def test_naturalness_spearman_ci_clusters_degraded_copies_by_source():
    rng = np.random.default_rng(5)
    man, pred = [], []
    for s in range(12):  # 12 source clips, each with 6 near-identical degraded copies
        quality = rng.normal(3, 1)
        miss = rng.normal(0, 1)  # the predictor misjudges a whole source clip
        for lvl in range(6):
            cid = f"src{s}_l{lvl}"
            score = quality + rng.normal(0, 0.01)
            man.append({"clip_id": cid, "speaker": f"v{s % 3}", "split": "test",
                        "score": score, "source_clip": f"src{s}_l0"})
            pred.append({"clip_id": cid, "score": quality + miss + rng.normal(0, 0.01),
                         "status": "ok", "version": "v"})
    man, pred = pd.DataFrame(man), pd.DataFrame(pred)
    row = evaluate.naturalness("toy", pred, man, "score", 0.5, n_boot=1000)
    assert "source_clip-clustered" in row["method"]
    n = len(man)
    z, se = np.arctanh(row["estimate"]), 1 / np.sqrt(n - 3)
    fisher = np.tanh(z + 1.96 * se) - np.tanh(z - 1.96 * se)
    assert row["ci_low"] < row["estimate"] < row["ci_high"]
    assert row["ci_high"] - row["ci_low"] > 1.5 * fisher


def test_cluster_bootstrap_keeps_an_interval_when_some_resamples_are_undefined():
    x = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])

    def stat(counts):  # undefined when cluster 0 is not drawn
        return float(np.sum(counts * x) / counts.sum()) if counts[0] else float("nan")

    res = cluster_bootstrap_ci(stat, 6, n_resamples=500, seed=2)
    assert np.isfinite(res["ci_low"]) and res["ci_low"] < res["ci_high"]
    assert "resamples where the statistic is defined" in res["method"]
