"""The power report simulates the printed estimator at each cell's own design: the
cells take the clusters the printed interval uses, the test is the interval's own
(p-value dual to it), Holm is statsmodels' step-down, the simulation holds its size
under the null and its power moves with the clusters, not the trials."""

import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from judgeaudit.stats import power as PW
from judgeaudit.stats.clustered import clustered_proportion, proportion_pvalue
from judgeaudit.stats.contrasts import holm, holm_reject

CFG = {"alpha": 0.05, "power": 0.8, "icc": 0.2, "icc_source": "assumed for the test",
       "pilot_metrics": [], "replicates": 200, "mde_replicates": 40, "seed": 1,
       "shortfall": "error", "fail_on_mde": False,
       "targets": {"follow": {"baseline": 0.1, "mde": 0.2}, "lock": {"baseline": 0.5, "mde": 0.3},
                   "concat_vs_native": {"baseline": 0.5, "mde": 0.3},
                   "fallible_vs_wrong": {"baseline": 0.3, "mde": 0.2},
                   "protocol_gap": {"baseline": 0.6, "mde": 0.2}}}


def _cls_trial(i, clip, cond, spk, gold="a", task="language", seed=0):
    return {"trial_id": f"t{i}-{cond}", "study": "A", "task": task, "condition": cond,
            "gold": gold, "facts": {"family": "blueprint", "clip_id": clip, "seed": seed,
                                    "cluster": spk, "cluster_unit": "speaker"}}


def _pair_trial(i, pid, src, fmt="concat", order="AB"):
    return {"trial_id": f"p{i}-{fmt}-{order}", "study": "A", "task": "pair_cleanness",
            "condition": fmt, "gold": "A",
            "facts": {"family": "pairwise", "pair_id": pid, "format": fmt,
                      "cluster": src, "cluster_unit": "source clip"}}


def _gap_trial(i, item, proto, rep):
    return {"trial_id": f"b{i}-{proto}-{rep}", "study": "B", "task": "single",
            "condition": proto, "gold": "R1",
            "facts": {"protocol": proto, "cue": "none", "item_id": item}}


def test_proportion_pvalue_is_dual_to_the_printed_interval():
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(600):
        g = int(rng.integers(2, 25))
        n = int(rng.integers(g, 150))
        cl = rng.integers(0, g, n)
        y = (rng.random(n) < rng.choice([0.0, 0.1, 0.4, 0.95, 1.0])).astype(float)
        est = clustered_proportion(y, cl)
        p0 = float(rng.uniform(0.02, 0.98))
        if min(abs(p0 - est.lo), abs(p0 - est.hi)) < 1e-7:
            continue
        assert (proportion_pvalue(est, p0) < 0.05) == (p0 < est.lo or p0 > est.hi)
        checked += 1
    assert checked > 500
    with pytest.raises(ValueError, match="p0"):
        proportion_pvalue(est, 0.0)


def test_holm_reject_is_statsmodels_holm_row_by_row():
    rng = np.random.default_rng(0)
    p = rng.random((200, 6)) ** 3
    p[3, 1] = np.nan
    rej = holm_reject(p, 0.05)
    for i in range(200):
        assert list(rej[i]) == holm(list(p[i]), 0.05)[1]


def test_cells_take_the_printed_clusters():
    trials = [_cls_trial(i, f"c{i % 12}", "after", f"s{i % 4}") for i in range(36)]
    trials += [_cls_trial(i, f"c{i}", cond, f"s{i % 3}", seed=i % 2)
               for cond in ("wrong_with_audio", "wrong_with_audio_fallible") for i in range(12)]
    trials += [_cls_trial(i, f"c{i}", "audio_only", "s0") for i in range(5)]  # no test
    trials += [_pair_trial(i, f"p{i}", f"src{i // 2}", fmt, o) for i in range(6)
               for fmt in ("concat", "native") for o in ("AB", "BA")]
    trials += [_gap_trial(i, f"i{i}", proto, r) for i in range(5)
               for proto in ("pointwise", "pairwise") for r in range(2)]
    cells = {(c.test, c.cell): c for c in PW.trial_cells(trials)}
    after = cells[("follow_vs_null", "after")]
    assert (after.n_units, after.n_clusters, after.cluster_unit) == (36, 4, "speaker")
    assert ("follow_vs_null", "audio_only") not in cells
    fal = cells[("fallible_vs_wrong", "wrong_with_audio_fallible - wrong_with_audio")]
    assert (fal.n_units, fal.n_clusters) == (12, 3)
    lock = cells[("lock_vs_null", "concat")]
    assert (lock.n_units, lock.n_clusters, lock.cluster_unit) == (6, 3, "source clip")
    assert cells[("concat_vs_native_lock", "concat - native")].n_units == 6
    gap = cells[("protocol_gap", "gap-none")]
    assert (gap.n_clusters, gap.reps, gap.cluster_unit) == (5, (2, 2), "item")


def _cell(n_clusters, per_cluster, test="follow_vs_null"):
    codes = np.repeat(np.arange(n_clusters), per_cluster)
    return PW.Cell("A", "emotion", "after", test, "speaker", codes.size, codes)


def test_simulation_holds_its_size_under_the_null():
    c = _cell(24, 10)
    d = PW.draws(c, 400, 3)
    rate = float(np.mean(PW.pvalues(c, d, 0.1, 0.0, 0.2, 0.05) < 0.05))
    assert 0.01 <= rate <= 0.10
    p = _cell(24, 2, "concat_vs_native_lock")
    rate = float(np.mean(PW.pvalues(p, PW.draws(p, 400, 5), 0.5, 0.0, 0.2, 0.05) < 0.05))
    assert 0.01 <= rate <= 0.10


def test_power_follows_the_clusters_not_the_trials():
    few, many = _cell(6, 20), _cell(24, 5)  # 120 trials each
    pw = {}
    for name, c in (("few", few), ("many", many)):
        d = PW.draws(c, 300, 7)
        pw[name] = float(np.mean(PW.pvalues(c, d, 0.1, 0.15, 0.3, 0.05) < 0.05))
    assert pw["many"] > pw["few"] + 0.15
    # without clustering the simulation meets the closed form (one-sample Cohen's h)
    c = _cell(120, 1)
    sim = float(np.mean(PW.pvalues(c, PW.draws(c, 400, 9), 0.1, 0.1, 0.0, 0.05) < 0.05))
    h = abs(float(proportion_effectsize(0.2, 0.1)))
    closed = NormalIndPower().power(effect_size=h, nobs1=120, alpha=0.05, ratio=0)
    assert sim == pytest.approx(closed, abs=0.08)
    assert PW.closed_form_power(c, 0.1, 0.1, 0.0, 0.05) == pytest.approx(closed)


def test_holm_power_sits_between_bonferroni_and_unadjusted():
    c = _cell(24, 10)
    pv = {k: PW.pvalues(c, PW.draws(c, 300, 11 + k), 0.1, 0.12, 0.2, 0.05) for k in range(3)}
    ph = PW.holm_power(pv, 2, 0.05)
    for k in range(3):
        assert np.mean(pv[k] < 0.05 / 6) - 0.02 <= ph[k] <= np.mean(pv[k] < 0.05) + 1e-9


def test_report_rows_name_method_unit_family_and_flag_problems(tmp_path):
    from judgeaudit.render.power import power_table

    trials = [_cls_trial(i, f"c{i}", "after", f"s{i % 4}", gold="ab"[i % 2]) for i in range(16)]
    trials += [_pair_trial(i, f"p{i}", f"src{i}", fmt, o) for i in range(40)
               for fmt in ("concat", "native") for o in ("AB", "BA")]
    sizes = PW.delivered_sizes(trials, {"language": {"per_class": 20, "labels": ["a", "b"]},
                                        "pairwise": {"n_pairs": 40}}, None)
    frame = PW.report(trials, CFG, sizes, {"A": 1})
    assert list(frame.columns) == PW.COLUMNS
    after = frame[frame["cell"] == "after"].iloc[0]
    assert (after["n_clusters"], after["cluster_unit"]) == (4, "speaker")
    assert "clustered_proportion" in after["method"] and "Holm" in after["method"]
    assert after["variance_source"] == "configured icc"
    assert after["icc_source"] == "assumed for the test"
    lock = frame[frame["test"] == "lock_vs_null"]
    assert set(lock["family_size"]) == {2} and set(lock["n_clusters"]) == {40}
    assert (lock["power_at_target"] > 0.8).all()
    short, weak = PW.problems(frame)
    assert short == ["cell A/language: configured size 20 but the corpus delivered 8 (the "
                     "size is capped by the data)"]
    assert any("A/language/after" in w and "4 speaker clusters" in w for w in weak)
    show = power_table(frame, tmp_path / "power")
    checks = dict(zip(show["cell"], show["check"], strict=True))
    assert checks["after"] == "WARN SHORT 8/20" and checks["concat"] == "ok"
    md = (tmp_path / "power.md").read_text()
    assert "Holm" in md and "assumed for the test" in md and "lock_vs_null" in md


def test_pilot_deff_sets_the_icc_and_both_powers_are_shown():
    import pandas as pd

    pilot = pd.DataFrame([{"task": "language", "condition": "after", "metric": "rf",
                           "seed": "all", "n": 80, "n_clusters": 8, "deff": 4.6}])
    deff, rho = PW.pilot_icc(pilot, [("language", "after", "rf")])
    assert deff == pytest.approx(4.6) and rho == pytest.approx(3.6 / 9)
    trials = [_cls_trial(i, f"c{i}", "after", f"s{i % 8}") for i in range(80)]
    frame = PW.report(trials, CFG, {}, {"A": 1}, pilot)
    r = frame.iloc[0]
    assert r["variance_source"] == "pilot deff" and r["icc_used"] == pytest.approx(0.4)
    assert math.isfinite(r["power_pilot"]) and math.isfinite(r["power_configured"])
    assert r["power_pilot"] < r["power_configured"]
