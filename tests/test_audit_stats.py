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
from judgeaudit.judges.request import Request

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


# ---- issue 31/32: no answer no verdict, matched controls, few clusters, re-sizing

def _clipset():
    import pandas as pd

    from judgeaudit.study_a.classification import ClipSet

    clips = pd.DataFrame({"clip_id": ["c1", "c2", "c3"], "path": ["a.wav", "b.wav", "c.wav"],
                          "sha256": ["1" * 64, "2" * 64, "3" * 64],
                          "label": ["happy", "sad", "angry"], "pred": ["happy", "sad", "sad"],
                          "speaker": ["s1", "s1", "s2"]})
    return ClipSet("emotion", ("happy", "sad", "angry", "neutral"), clips)


def test_reference_controls_are_matched_by_placement():
    from judgeaudit.study_a.classification import _request, reference_trials
    from judgeaudit.vocab.study_a import PLACEMENTS

    cs = _clipset()
    trials = reference_trials(cs, [1, 2])
    contrasts, controls = battery.reference_contrasts(trials)
    by_id = {t["trial_id"]: t for t in [*trials, *controls]}
    match = {t["facts"]["clip_id"]: t for t in trials if t["condition"] == "match"}
    assert [c.name for c in contrasts] == list(PLACEMENTS)
    for c in contrasts:
        assert len(c.units) == 6  # 3 clips x 2 seeds
        for u in c.units:
            (wrong_id, _, _), (ctl_id, _, _) = u.terms
            wrong, ctl = by_id[wrong_id], by_id[ctl_id]
            clip = cs.clips.set_index("clip_id").loc[wrong["facts"]["clip_id"]]
            want = _request("emotion", cs.labels, clip, audio=True, reference=clip["label"],
                            placement=c.name)
            # the control is the true reference at the wrong reference's own placement
            assert Request.from_json(ctl["request"]).content_hash() == want.content_hash()
            assert ctl["gold"] == wrong["gold"] and ctl["facts"]["placement"] == c.name
            if c.name == "before":  # the shard's own control: same trial, same cache entry
                assert ctl_id == match[wrong["facts"]["clip_id"]]["trial_id"]
    # one control per clip and placement other than `before` (shared by the seeds)
    assert len(controls) == 3 * 3
    assert len({t["trial_id"] for t in controls}) == len(controls)


def test_paralinguistic_unit_averages_valid_answers_per_protocol():
    u = battery.Unit("i", "i", (("pw1", "X", 0.5), ("pw2", "Y", 0.5),
                                ("pt1", "X", -0.5), ("pt2", "Y", -0.5)), mode="arms")
    assert u.value({"pw1": "X", "pw2": "Y", "pt1": "X", "pt2": "n"}) == 0.5
    # one pointwise answer missing: the pointwise arm is its valid answer
    assert u.value({"pw1": "X", "pw2": "Y", "pt1": "X", "pt2": None}) == 0.0
    assert u.value({"pw1": None, "pw2": None, "pt1": "X", "pt2": "Y"}) is None


def test_cr2_bm_and_hall_interval():
    from judgeaudit.audit.sequential import hall_interval, look_stats

    vals = [1, 0, 0, 0, 0, 0, 1, 1, 0, 1]
    cl = ["a"] * 6 + ["b", "c", "d", "e"]
    s = look_stats(vals, cl)
    g = 5
    resid = np.bincount([0] * 6 + [1, 2, 3, 4], weights=np.array(vals) - np.mean(vals))
    cr1 = math.sqrt(g / (g - 1) * np.sum(resid ** 2)) / 10
    assert s.df < g - 1 and s.se != pytest.approx(cr1)  # unbalanced: CR2 and BM df differ
    lo, hi = hall_interval(0.3, 0.1, 2.0, 1.5, 8)  # right-skewed cluster totals
    assert lo == pytest.approx(0.1) and hi > 0.5  # the far side is lengthened only
    assert hall_interval(0.3, 0.1, 2.0, 0.0, 8) == pytest.approx((0.1, 0.5))


def test_grounded_needs_enough_clusters():
    from judgeaudit.audit.sequential import evaluate_look, min_clusters_grounded

    assert min_clusters_grounded(0.05, 0.2) == 14  # 0.8^14 = 0.044 <= 0.05 < 0.8^13
    assert min_clusters_grounded(0.0125, 0.2) == 20
    d = Design.make(80, 1, 0.05, 0.2)
    vals = [0.0] * 80
    few = evaluate_look(vals, [str(i % 8) for i in range(80)], d, 1, True)
    many = evaluate_look(vals, [str(i % 40) for i in range(80)], d, 1, True)
    assert few["verdict"] is None and few["would_be_grounded"] and few["clusters"] == 8
    assert many["verdict"] == "grounded"
    # a shortcut needs no minimum
    assert evaluate_look([1.0] * 80, [str(i % 8) for i in range(80)], d, 1, True)["verdict"] == "shortcut"


def test_resized_design_keeps_its_first_look_and_alpha(tmp_path, monkeypatch):
    from scipy.stats import multivariate_normal

    from judgeaudit.audit import sequential as seq

    d = Design.make(64, 8, 0.025, 0.2)
    r = d.resized(150, looks_done=1)
    assert r.looks[0] == d.looks[0] and r.crit[0] == d.crit[0] and r.n_max == 150
    t = np.array(r.looks) / r.n_max
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    total = 1 - multivariate_normal(np.zeros(len(t)), cov, seed=1).cdf(np.array(r.crit))
    assert total == pytest.approx(0.025, abs=5e-4)
    assert d.resized(30, 1) is d  # never shrinks
    # boundaries are computed once per design: kept on disk and read back
    seq.use_boundary_cache(tmp_path / "b.json")
    first = seq.boundaries([0.3, 0.6, 1.0], 0.0321)
    assert (tmp_path / "b.json").exists()
    seq._cached_boundaries.cache_clear()
    seq.use_boundary_cache(tmp_path / "b.json")
    monkeypatch.setattr(seq, "_boundaries", lambda *a: pytest.fail("recomputed"))
    assert seq.boundaries([0.3, 0.6, 1.0], 0.0321) == first
    seq.use_boundary_cache(None)


AUDIT = dict(stages=8, alpha=0.05, effect=0.2, power=0.8, sd=0.5, icc=0.2, spending="obf")


def test_no_answers_no_verdict_through_the_stopping_loop():
    from judgeaudit.audit.validate import simulate_protocol

    rng = np.random.default_rng(5)
    follow = [{"kind": "follow", "params": {"follow": 0.0, "base": 0.15}, "sided": "greater"}] * 2
    r = simulate_protocol(follow, n_clusters=24, per_cluster=8, rng=rng, early_stop=True,
                          shared_control=True, invalid=1.0, **AUDIT)
    assert r["verdict"] == "undecided"
    assert all("too many invalid answers" in s["reason"] and s["stage"] == 1 for s in r["contrasts"])
    slot = [{"kind": "slot", "params": {"first": 0.0, "second": 0.0}, "sided": "two"}] * 2
    assert simulate_protocol(slot, n_clusters=24, per_cluster=8, rng=rng, early_stop=True,
                             invalid=1.0, **AUDIT)["verdict"] == "undecided"
    # invalid answers on one arm only bias the difference: no verdict either
    r = simulate_protocol(follow, n_clusters=24, per_cluster=8, rng=rng, early_stop=True,
                          shared_control=True, invalid=0.0, invalid_plus=0.5, **AUDIT)
    assert r["verdict"] == "undecided"
    # a gold judge (consistent pairs) with 20% invalid answers is never a slot shortcut
    gold = [{"kind": "slot", "params": {"first": 0.0, "second": 0.0}, "sided": "two"}] * 2
    verdicts = [simulate_protocol(gold, n_clusters=24, per_cluster=8, rng=rng, early_stop=True,
                                  invalid=0.2, **AUDIT)["verdict"] for _ in range(40)]
    assert "shortcut" not in verdicts


def test_resizing_from_the_judge_decides_a_random_answerer():
    """A random answerer's pair difference has sd 0.71, not the planning 0.5: sized
    from its first look it gets the units it needs and is decided (grounded)."""
    from judgeaudit.audit.validate import simulate_protocol

    rand = [{"kind": "slot", "params": {"first": 0.25, "second": 0.25}, "sided": "two"}] * 2
    out = {}
    for resize in (True, False):
        rng = np.random.default_rng(9)
        runs = [simulate_protocol(rand, n_clusters=48, per_cluster=4, rng=rng, early_stop=True,
                                  prop_icc=0.0, audit_options={"resize": resize}, **AUDIT)
                for _ in range(60)]
        out[resize] = sum(r["verdict"] == "grounded" for r in runs) / len(runs)
    assert out[True] >= 0.6 and out[True] > out[False] + 0.4, out


def test_grounded_error_with_skewed_cluster_follow_rates():
    """Excess exactly at the bound, follow rates at ICC 0.5 (most clusters barely
    follow, a few nearly always): 8 clusters are too few to say grounded; at 24 the
    error stays within alpha (+3 Monte Carlo SE)."""
    from judgeaudit.audit.validate import simulate_protocol

    reps, a = 400, 0.05
    mcse = 3 * math.sqrt(a * (1 - a) / reps)
    c = [{"kind": "follow", "params": {"follow": 0.2 / 0.85, "base": 0.15}, "sided": "greater"}]
    for g, bound in ((8, 0.0), (24, a + mcse)):
        rng = np.random.default_rng(g)
        runs = [simulate_protocol(c, n_clusters=g, per_cluster=-(-160 // g), rng=rng,
                                  early_stop=True, prop_icc=0.5, shared_control=True,
                                  audit_options={"resize": False}, **AUDIT)
                for _ in range(reps)]
        rate = sum(r["verdict"] == "grounded" for r in runs) / reps
        assert rate <= bound, (g, rate)


def test_api_judge_without_prices_is_refused():
    from judgeaudit.audit.run import check_priced

    spec = {"provider": "openai", "model": "gpt-audio", "price_in_per_mtok": 0,
            "price_out_per_mtok": 0}
    with pytest.raises(ValueError, match="no prices set.*--allow-unpriced"):
        check_priced("gpt", {"A/emotion": spec}, allow_unpriced=False)
    check_priced("gpt", {"A/emotion": spec}, allow_unpriced=True)
    check_priced("gpt", {"A/emotion": dict(spec, price_in_per_mtok=2.5)}, allow_unpriced=False)
    check_priced("py", {"A/emotion": {"provider": "python",
                                      "function": "judgeaudit.audit.example_judge:copy_label"}},
                 allow_unpriced=False)  # a local function costs nothing
