"""`study_a.metrics.classification_metrics` and `pair_table` read each group's columns
once as arrays (a speed-up: the validation study calls them once per replicate). Pinned
here to the per-subset pandas code they replaced (kept below as the reference), on
trials from the real builders with invalid answers, refusals, missing labels and
clusters missing for some rows: every row must be equal, value for value."""

import math

import numpy as np
import pandas as pd
import pytest

from judgeaudit.study_a import metrics as sa
from judgeaudit.study_a.pairwise import pair_trials
from judgeaudit.study_a.rates import pair_mode
from judgeaudit.vocab.study_a import CLS_SHARDS
from tests.test_stats_study_a import LANGS, _pairs, respond, trials_all


def _reference_rate(keys, metric, grp, hit, n_boot=0):
    valid = grp["valid"].astype(bool)
    y = hit[valid].astype(int).to_numpy()
    clusters = grp.loc[valid, "cluster"].astype(str).to_numpy()
    est = sa.clustered_proportion(y, clusters)
    boot = None
    if n_boot > 0 and est.n > 0 and est.n_clusters >= 2:
        boot = sa.cluster_bootstrap_bca(y, clusters, n_resamples=n_boot, seed=0)
    units = sorted({str(u) for u in grp["cluster_unit"].dropna()}) if len(grp) else []
    unit = "/".join(units) if units else "trial"
    return sa.estimate_row(keys, metric, est, int((~valid).sum()), unit, boot)


def _reference_classification(df, n_boot):
    rows = []
    cls = df[df["family"].isin(CLS_SHARDS)]
    a = df[(df["condition"] == "audio_only") & df["valid"]]
    own = {(t, c): p for t, c, p in zip(a["task"], a["clip_id"], a["parsed"], strict=True)}
    wrong_conds = (*sa.WRONG_CONDITIONS, *sa.PLACEMENTS, *sa.FALLIBLE_PLACEMENTS)
    for (judge, task, family, cond), grp in df.loc[cls.index].groupby(
            ["judge", "task", "family", "condition"], sort=True):
        seeds = sorted(s for s in grp["seed"].unique() if s != sa.POOLED)
        subsets = [(sa.POOLED, grp)] + [(s, grp[grp["seed"] == s]) for s in seeds]
        k = int(grp["k"].iloc[0])
        for seed, sub in subsets:
            keys = {"judge": judge, "task": task, "family": family, "condition": cond,
                    "seed": seed, "k": k}
            boot = n_boot if seed == sa.POOLED else 0
            rows.append(_reference_rate(keys, "accuracy", sub, sub["parsed"] == sub["gold"],
                                        boot))
            if cond in wrong_conds:
                label = sub["wrong_label"]
                rf = _reference_rate(keys, "rf", sub, sub["parsed"] == label, boot)
                rows += [rf, sa.rf_norm_row(rf, k)]
                heard = pd.Series([own.get((t, c)) for t, c in zip(sub["task"], sub["clip_id"],
                                                                    strict=True)],
                                  index=sub.index, dtype=object)
                eligible = heard.notna() & (heard != label)
                if eligible.any():
                    adj = sub[eligible]
                    rows.append(_reference_rate(keys, "rf_adj", adj,
                                                adj["parsed"] == adj["wrong_label"], boot))
            if cond == "match":
                rows.append(_reference_rate(keys, "follow_true_reference", sub,
                                            sub["parsed"] == sub["reference_label"], boot))
            if family == "conflict":
                shares = {"follow_block": sub["parsed"] == sub["block_label"],
                          "follow_reference": sub["parsed"] == sub["reference_label"],
                          "follow_gold": sub["parsed"] == sub["gold"]}
                shares["follow_other"] = ~(shares["follow_block"] | shares["follow_reference"]
                                           | shares["follow_gold"])
                for metric, hit in shares.items():
                    rows.append(_reference_rate(keys, metric, sub, hit, boot))
    return rows


def _reference_pair_table(grp):
    out = []
    for pid, p in grp.groupby("pair_id", sort=True):
        choice = {o: (c if v else None) for o, c, v in
                  zip(p["order"], p["parsed"], p["valid"], strict=True)}
        better = str(p["better_slot_ab"].iloc[0])
        out.append({"pair_id": pid, "ab": choice.get("AB"), "ba": choice.get("BA"),
                    "better_ab": better, "cluster": str(p["cluster"].iloc[0]),
                    "cluster_unit": p["cluster_unit"].iloc[0],
                    "mode": pair_mode(choice.get("AB"), choice.get("BA"), better)})
    return pd.DataFrame(out, columns=["pair_id", "ab", "ba", "better_ab", "cluster",
                                      "cluster_unit", "mode"])


def _reference_pairwise(df, n_boot):
    rows = []
    pw = df[df["family"] == "pairwise"]
    for (judge, task, fmt), grp in pw.groupby(["judge", "task", "condition"], sort=True):
        keys = {"judge": judge, "task": task, "family": "pairwise", "condition": fmt,
                "seed": sa.POOLED}
        unsupported = int((grp["status"] == "unsupported").sum())
        pairs = _reference_pair_table(grp).assign(valid=lambda d: d["mode"].notna())
        start = len(rows)
        rows.append(_reference_rate(keys, "lock", pairs, pairs["mode"].isin(
            ["locked_first", "locked_second"]), n_boot))
        for mode in sa.PAIR_MODES:
            rows.append(_reference_rate(keys, mode, pairs, pairs["mode"] == mode, n_boot))
        rows.append(_reference_rate(keys, "g", grp, grp["parsed"] == grp["gold"], n_boot))
        lays = sorted({str(x) for x in grp.get("layout", pd.Series(dtype=object)).dropna()})
        for r in rows[start:]:
            r["n_unsupported"] = unsupported
            r["layout"] = "+".join(lays)
    return rows


def _same_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g) == list(w)
        for key in w:
            a, b = g[key], w[key]
            if isinstance(b, float) and math.isnan(b):
                assert isinstance(a, float) and math.isnan(a), key
            else:
                assert a == b and type(a) is type(b), (key, a, b)


def _noisy(seed):
    rng = np.random.default_rng(seed)

    def answer(t):
        u = rng.random()
        if u < 0.08:
            return (None, "invalid_json")
        if u < 0.12:
            return (None, "refusal")
        f = t["facts"]
        pool = [t["gold"], f.get("wrong_label"), f.get("reference_label"),
                f.get("block_label"), *LANGS]
        return (pool[int(rng.integers(0, len(pool)))] or t["gold"], "valid")
    return answer


@pytest.mark.parametrize("seed", [0, 1])
def test_classification_metrics_equal_the_per_subset_pandas_code(seed):
    trials = trials_all()
    df = sa.join(trials, respond(trials, _noisy(seed)), "noisy")
    # some rows without a cluster unit, one cluster id that is not a string
    df.loc[df.index[::7], "cluster_unit"] = None
    df.loc[df.index[::11], "cluster"] = "42"
    got = sa.classification_metrics(df, n_boot=30)
    want = _reference_classification(df, n_boot=30)
    assert {r["metric"] for r in got} >= {"accuracy", "rf", "rf_norm", "rf_adj",
                                          "follow_true_reference", "follow_other"}
    _same_rows(got, want)


def test_pair_table_equals_the_groupby_loop(tmp_path):
    pairs = _pairs(tmp_path, n=12)
    trials = pair_trials("pair_naturalness", pairs, "native", 1)
    df = sa.join(trials, respond(trials, _noisy(3)), "noisy")
    df = df.sample(frac=1.0, random_state=0)  # frame order is not pair order
    df.loc[df.index[:2], "pair_id"] = None  # rows without a pair id are dropped
    got, want = sa.pair_table(df), _reference_pair_table(df)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert sa.pair_table(df.iloc[0:0]).empty and _reference_pair_table(df.iloc[0:0]).empty
    trials += pair_trials("pair_naturalness", pairs, "concat", 1, concat_dir=tmp_path / "cc")
    df = sa.join(trials, respond(trials, _noisy(4)), "noisy")
    _same_rows(sa.pairwise_metrics(df, n_boot=30), _reference_pairwise(df, n_boot=30))
