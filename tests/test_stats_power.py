"""Power / MDE wrappers pinned to hand calculations (normal and noncentral t
formulas written out here, independently of statsmodels), and the cell sizing."""

import math

import pytest
from scipy.stats import nct, norm
from scipy.stats import t as tdist

from judgeaudit.stats import power as PW

CFG = {"alpha": 0.05, "power": 0.8, "icc": 0.2, "shortfall": "error", "fail_on_mde": False,
       "targets": {"follow": {"baseline": 0.1, "mde": 0.2}, "lock": {"baseline": 0.5, "mde": 0.3},
                   "accuracy": {"baseline": 0.5, "mde": 0.25},
                   "protocol_gap": {"baseline": 0.6, "mde": 0.2}}}


def _h(p1, p0):
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p0))


def _power_two_prop_hand(p0, p1, n, alpha=0.05):
    z = norm.ppf(1 - alpha / 2)
    shift = abs(_h(p1, p0)) * math.sqrt(n / 2)
    return norm.cdf(shift - z) + norm.cdf(-shift - z)


def test_design_effect_kish():
    assert PW.design_effect(5, 0.2) == pytest.approx(1.8)
    assert PW.design_effect(1, 0.9) == 1.0
    with pytest.raises(ValueError, match="ICC"):
        PW.design_effect(3, 1.5)


@pytest.mark.parametrize("p0,p1,n", [(0.5, 0.8, 24), (0.1, 0.3, 59), (0.5, 0.8, 40)])
def test_two_proportion_power_matches_hand_formula(p0, p1, n):
    assert PW.power_two_proportions(p0, p1, n) == pytest.approx(_power_two_prop_hand(p0, p1, n),
                                                                abs=1e-9)


def test_known_headline_values():
    # lock 0.8 vs 0.5 with 24 pairs per arm: 0.606; follow 0.3 vs 0.1 needs ~59 per arm
    assert PW.power_two_proportions(0.5, 0.8, 24) == pytest.approx(0.606, abs=1e-3)
    assert PW.power_two_proportions(0.1, 0.3, 59) == pytest.approx(0.800, abs=2e-3)


def test_two_proportion_mde_inverts_power():
    n = 38
    h, diff = PW.mde_two_proportions(n, 0.5)
    # ignoring the far tail, h = (z_{1-a/2} + z_{power}) sqrt(2/n)
    assert h == pytest.approx((norm.ppf(0.975) + norm.ppf(0.8)) * math.sqrt(2 / n), rel=1e-4)
    p1 = math.sin(math.asin(math.sqrt(0.5)) + h / 2) ** 2
    assert diff == pytest.approx(p1 - 0.5, abs=1e-9)
    assert _power_two_prop_hand(0.5, 0.5 + diff, n) == pytest.approx(0.8, abs=1e-4)
    # an MDE beyond p = 1 is reported as undetectable, not clipped
    assert math.isnan(PW.mde_two_proportions(3, 0.9)[1])


def _paired_power_hand(d, n, p0, m, icc, alpha=0.05):
    p1 = p0 + d
    psi = p0 * (1 - p1) + p1 * (1 - p0)
    sd = math.sqrt((psi - d * d) * (1 + (m - 1) * icc) / m)
    nc = d / sd * math.sqrt(n)
    crit = tdist.ppf(1 - alpha / 2, n - 1)
    return 1 - nct.cdf(crit, n - 1, nc) + nct.cdf(-crit, n - 1, nc)


@pytest.mark.parametrize("d,n,icc", [(0.2, 16, 0.2), (0.15, 16, 0.2), (0.2, 48, 0.0)])
def test_paired_gap_power_matches_noncentral_t(d, n, icc):
    assert PW.power_paired_gap(d, n, 0.6, 2, icc) == pytest.approx(
        _paired_power_hand(d, n, 0.6, 2, icc), abs=1e-6)


def test_paired_gap_mde_inverts_power():
    mde = PW.mde_paired_gap(30, 0.6, 2, 0.2)
    assert 0 < mde < 0.4
    assert _paired_power_hand(mde, 30, 0.6, 2, 0.2) == pytest.approx(0.8, abs=1e-4)
    assert math.isnan(PW.mde_paired_gap(3, 0.6, 2, 0.2))


def _cls_trial(i, clip, cond, gold="a", task="language"):
    return {"trial_id": f"t{i}", "study": "A", "task": task, "condition": cond, "gold": gold,
            "facts": {"family": "reference", "clip_id": clip}}


def _pair_trial(i, pid, a, b, fmt="concat"):
    return {"trial_id": f"p{i}", "study": "A", "task": "pair_cleanness", "condition": fmt,
            "gold": "A", "facts": {"family": "pairwise", "pair_id": pid, "format": fmt,
                                   "criterion": "cleanness", "better_clip": a,
                                   "clip_a": a, "clip_b": b, "reference_clip": None}}


def test_cells_cluster_by_clip_and_by_pair_source():
    trials = [_cls_trial(i, f"c{i % 10}", "after") for i in range(30)]  # 10 clips x 3 seeds
    trials += [_pair_trial(0, "p1", "s1", "d1"), _pair_trial(1, "p1", "s1", "d1"),
               _pair_trial(2, "p2", "s1", "d2"), _pair_trial(3, "p3", "s3", "d3")]
    cells = {c["cell"]: c for c in PW.trial_cells(trials)}
    assert (cells["after"]["n_units"], cells["after"]["n_clusters"]) == (30, 10)
    assert cells["after"]["metric"] == "follow"
    # p1 and p2 share the clean source clip s1: two clusters for three pairs
    assert (cells["concat"]["n_units"], cells["concat"]["n_clusters"]) == (3, 2)
    row = PW.evaluate_cell(cells["after"], CFG)
    assert row["deff"] == pytest.approx(1 + 2 * 0.2)
    assert row["n_eff"] == pytest.approx(30 / 1.4)
    assert row["power_at_target"] == pytest.approx(_power_two_prop_hand(0.1, 0.3, 30 / 1.4))
    assert row["meets_target"] is False


def test_report_flags_shortfall_and_names_the_cell():
    trials = [_cls_trial(i, f"c{i}", "after", gold="ab"[i % 2]) for i in range(16)]
    sizes = PW.delivered_sizes(trials, {"language": {"per_class": 20, "labels": ["a", "b"]},
                                        "pairwise": {"n_pairs": 24}}, None)
    assert sizes[("A", "language")] == (20, 8)
    trials += [_pair_trial(i, f"p{i}", f"s{i}", f"d{i}") for i in range(4)]  # no size: NaN
    frame = PW.report(trials, CFG, sizes)
    short, weak = PW.problems(frame)
    assert short == ["cell A/language: configured size 20 but the corpus delivered 8 (the "
                     "size is capped by the data)"]
    assert weak and "A/language/after" in weak[0]


def test_power_table_renders_flags_and_headline(tmp_path):
    from judgeaudit.render.power import power_table

    trials = [_cls_trial(i, f"c{i}", "after", gold="ab"[i % 2]) for i in range(16)]
    trials += [_pair_trial(i, f"p{i}", f"s{i}", f"d{i}") for i in range(40)]
    sizes = PW.delivered_sizes(trials, {"language": {"per_class": 20, "labels": ["a", "b"]},
                                        "pairwise": {"n_pairs": 40}}, None)
    frame = PW.report(trials, CFG, sizes)
    show = power_table(frame, tmp_path / "power")
    checks = dict(zip(show["cell"], show["check"], strict=True))
    assert checks["after"] == "WARN SHORT 8/20" and checks["concat"] == "ok"
    md = (tmp_path / "power.md").read_text()
    assert "NormalIndPower" in md and "ICC 0.2" in md
    assert "lock (0.5 -> 0.8): power 0.82" in md
    assert (tmp_path / "power.tex").exists() and (tmp_path / "power.tsv").exists()
