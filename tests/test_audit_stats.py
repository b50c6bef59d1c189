"""Audit statistics: alpha-spending boundaries, the verdict rule, the clustered mean,
the size calculation, the probe battery, and the stopping rule's type-I error and
final-interval coverage checked by the independent simulator (audit.simcheck)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from judgeaudit.audit import battery, simcheck
from judgeaudit.audit.power import design_effect, fixed_n
from judgeaudit.audit.sequential import Design, boundaries, clustered_mean, decide, run_sequential
from judgeaudit.audit.validate import replicate

SRC = Path(__file__).resolve().parents[1] / "src" / "judgeaudit" / "audit"


def test_obf_boundaries_match_published_values():
    # Lan-DeMets O'Brien-Fleming-type, one-sided 0.025, 4 equal looks: 4.33, 2.96, 2.36, 2.01
    # (Jennison & Turnbull 2000, table 7.6; gsDesign sfLDOF)
    c = boundaries([0.25, 0.5, 0.75, 1.0], 0.025, "obf")
    assert c == pytest.approx([4.333, 2.963, 2.359, 2.014], abs=0.01)
    # a single look is the fixed design
    assert boundaries([1.0], 0.05) == pytest.approx([1.6449], abs=1e-3)
    # Pocock-type spending: nearly flat boundaries, ~2.36 at one-sided 0.025, K=4
    p = boundaries([0.25, 0.5, 0.75, 1.0], 0.025, "pocock")
    assert max(p) - min(p) < 0.1 and p[-1] == pytest.approx(2.35, abs=0.05)
    with pytest.raises(ValueError, match="increase to 1"):
        boundaries([0.5, 0.4, 1.0], 0.05)


def test_fixed_size_formula_and_design_effect():
    # ((1.645 + 0.842) * 0.5 / 0.2)^2 = 38.6 -> 39 units; x deff
    assert fixed_n(0.2, 0.05, 0.8, 0.5) == 39
    assert fixed_n(0.2, 0.05, 0.8, 0.5, design_effect(4, 0.2)) == math.ceil(1.6 * 38.64)
    with pytest.raises(ValueError, match="effect"):
        fixed_n(0.0, 0.05, 0.8, 0.5)


def test_decide_rules():
    assert decide(0.5, 0.1, 2.0, 0.2, "greater")[0] == "shortcut"
    assert decide(0.0, 0.05, 2.0, 0.2, "greater")[0] == "grounded"
    assert decide(0.1, 0.1, 2.0, 0.2, "greater")[0] is None
    assert decide(-0.5, 0.1, 2.0, 0.2, "two")[0] == "shortcut"  # a lock on slot B
    assert decide(-0.5, 0.1, 2.0, 0.2, "greater")[0] == "grounded"
    v, lo, hi = decide(0.9, 0.2, 2.0, 0.2, "greater")
    assert v == "shortcut" and hi == 1.0  # reported clipped to the range of a difference


def test_clustered_mean_cr1_and_floor():
    est, se, df = clustered_mean([1, 1, 0, 0], ["a", "a", "b", "b"])
    # CR1: G/(G-1) * sum_g (resid sums)^2 / n^2 = 2 * (1 + 1) / 16
    assert est == 0.5 and se == pytest.approx(math.sqrt(0.25)) and df == 1
    est, se, df = clustered_mean([0] * 50, [str(i % 5) for i in range(50)])
    assert est == 0 and se == pytest.approx(math.sqrt(2) / 50)


def test_run_sequential_stops_early_and_fixed_runs_full():
    d = Design.make(100, 4, 0.05, 0.2)
    vals, cl = [1.0] * 100, [str(i % 10) for i in range(100)]
    r = run_sequential(vals, cl, d)
    assert r["verdict"] == "shortcut" and r["stage"] == 1 and r["units"] == 25
    f = run_sequential(vals, cl, d, early_stop=False)
    assert f["verdict"] == "shortcut" and f["units"] == 100 and f["n_stages"] == 1


def test_simulator_shares_no_code_with_the_estimator():
    tree = ast.parse((SRC / "simcheck.py").read_text())
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree)
             if isinstance(n, ast.ImportFrom) and n.module}
    assert mods <= {"numpy", "__future__"}, mods


@pytest.mark.parametrize("early", [True, False])
def test_stopping_rule_error_rates_and_coverage_by_simulation(early):
    """Under no excess P(shortcut) <= alpha; at excess = effect P(grounded) <= alpha;
    the final interval covers the simulator's true mean at >= its level (each up to
    3 Monte Carlo SEs); power near the planned 0.8."""
    reps, a, eff = 600, 0.05, 0.2
    kw = dict(n_max=fixed_n(eff, a, 0.8, 0.5, design_effect(4, 0.2)), per_cluster=4, stages=4,
              alpha=a, effect=eff, sided="greater", reps=reps, early_stop=early)
    mcse = 3 * math.sqrt(a * (1 - a) / reps)
    null = replicate("follow", {"follow": 0.0, "base": 0.15}, seed=11, **kw)
    alt = replicate("follow", {"follow": eff / 0.85, "base": 0.15}, seed=12, **kw)
    assert null["shortcut"] <= a + mcse and alt["grounded"] <= a + mcse
    assert null["coverage"] >= null["interval_level"] - 3 * math.sqrt(0.1 * 0.9 / reps)
    assert alt["coverage"] >= alt["interval_level"] - 3 * math.sqrt(0.1 * 0.9 / reps)
    assert alt["shortcut"] >= 0.7 and null["grounded"] >= 0.7
    # two-sided slot preference: a symmetric judge (no lock preference) is rarely called out
    two = replicate("slot", {"first": 0.25, "second": 0.25, "spread": 0.3}, seed=13,
                    **dict(kw, sided="two"))
    assert two["shortcut"] <= a + mcse
    if early:
        assert null["mean_units"] < kw["n_max"] and alt["mean_units"] < kw["n_max"]


def _trial(tid, cond, clip, speaker, seed=None, wrong=None, **extra):
    facts = {"clip_id": clip, "cluster": speaker, "cluster_unit": "speaker"}
    if seed is not None:
        facts.update(seed=seed, wrong_label=wrong)
    facts.update(extra)
    return {"trial_id": tid, "study": "A", "task": "emotion", "condition": cond,
            "gold": "happy", "facts": facts}


def test_battery_pairs_each_wrong_label_with_its_own_control():
    rows = [_trial("ao1", "audio_only", "c1", "s1"),
            _trial("w1", "wrong_with_audio", "c1", "s1", 1, "sad"),
            _trial("f1", "wrong_with_audio_fallible", "c1", "s1", 1, "sad"),
            _trial("w2", "wrong_with_audio", "c2", "s2", 1, "angry")]  # no control: left out
    c = battery.blueprint_contrasts(rows)
    assert [x.name for x in c] == ["with_audio", "fallible"] and len(c[0].units) == 1
    u = c[0].units[0]
    assert u.value({"w1": "sad", "ao1": "happy"}) == 1.0
    assert u.value({"w1": "sad", "ao1": "sad"}) == 0.0
    # no answer, no score: a unit with an invalid or missing answer is left out
    assert u.value({"w1": None, "ao1": "sad"}) is None
    assert u.value({"ao1": "sad"}) is None
    pairs = [{"trial_id": f"{p}{o}", "task": "pair_x", "condition": "native",
              "gold": "A", "facts": {"pair_id": p, "order": o, "cluster": "src" + p}}
             for p in "xy" for o in ("AB", "BA")]
    pc = battery.pairwise_contrasts({"native": pairs})
    assert [x.name for x in pc] == ["native"] and len(pc[0].units) == 2
    assert pc[0].units[0].value({"xAB": "A", "xBA": "A"}) == 1.0  # locked first
    assert pc[0].units[0].value({"xAB": "B", "xBA": "B"}) == -1.0  # locked second
    assert pc[0].units[0].value({"xAB": "A", "xBA": "B"}) == 0.0  # consistent
    # a pair counts only when both orders are answered (not as "B, B" = locked second)
    assert pc[0].units[0].value({"xAB": None, "xBA": None}) is None
    assert pc[0].units[0].value({"xAB": "A", "xBA": None}) is None


def test_interleave_spreads_clusters_and_is_seeded():
    units = [battery.Unit(f"u{i}", f"s{i % 4}", ()) for i in range(12)]
    order = battery.interleave(units, 3)
    assert {u.cluster for u in order[:4]} == {"s0", "s1", "s2", "s3"}
    assert [u.uid for u in order] == [u.uid for u in battery.interleave(units, 3)]
    assert sorted(u.uid for u in order) == sorted(u.uid for u in units)


def test_simcheck_truths():
    assert simcheck.follow_truth(0.5, 0.2) == pytest.approx(0.4)
    d, _ = simcheck.follow_units(np.random.default_rng(0), 5000, 4, 0.5, 0.2)
    assert d.mean() == pytest.approx(0.4, abs=0.02)
