"""Statistics wrappers pinned to externally computed values (closed forms and
published reference numbers), not to the wrappers' own output."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from judgeaudit.stats.ci import proportion, wilson
from judgeaudit.stats.clustered import chance_level, cluster_bootstrap_bca
from judgeaudit.stats.contrasts import holm
from judgeaudit.study_a.metrics import pairwise_metrics
from judgeaudit.study_a.rates import pair_mode
from judgeaudit.vocab.study_a import PAIR_MODES


def wilson_closed_form(k, n, alpha=0.05):
    z = norm.ppf(1 - alpha / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("k,n", [(7, 20), (0, 10), (10, 10), (233, 240), (1, 3)])
def test_wilson_matches_closed_form(k, n):
    lo, hi = wilson(k, n)
    elo, ehi = wilson_closed_form(k, n)
    assert lo == pytest.approx(max(0, elo), abs=1e-12)
    assert hi == pytest.approx(min(1, ehi), abs=1e-12)


def test_wilson_published_values():
    # Newcombe (1998), Table I: 0/10 -> (0, 0.2775); 5/10 -> (0.2366, 0.7634)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_proportion_row_and_errors():
    row = proportion(3, 4, n_invalid=2)
    assert row["estimate"] == 0.75 and row["n"] == 4 and row["n_invalid"] == 2
    assert row["method"] == "wilson"
    empty = proportion(0, 0)
    assert math.isnan(empty["estimate"]) and math.isnan(empty["ci_low"])
    with pytest.raises(ValueError, match="k <= n"):
        wilson(5, 4)


def test_holm_against_hand_computation():
    adj, rej = holm([0.01, 0.04, 0.03])
    assert adj == pytest.approx([0.03, 0.06, 0.06])
    assert rej == [True, False, False]
    adj, rej = holm([0.01, float("nan")])
    assert adj[0] == pytest.approx(0.01) and math.isnan(adj[1]) and rej == [True, False]


def test_holm_leaves_the_garbage_collector_as_it_found_it():
    """holm freezes the live objects around statsmodels' gc.collect() (a speed-up):
    afterwards nothing stays frozen, a caller's own freeze is left alone, and the
    adjusted values are statsmodels' own, bit for bit."""
    import gc

    from statsmodels.stats.multitest import multipletests

    p = [0.2, 0.001, 0.04, 0.03, 0.5]
    assert gc.get_freeze_count() == 0
    adj, rej = holm(p)
    assert gc.get_freeze_count() == 0
    r, padj, _, _ = multipletests(p, alpha=0.05, method="holm")
    assert adj == [float(v) for v in padj] and rej == [bool(v) for v in r]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert holm(p) == (adj, rej)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_chance_level():
    assert chance_level(8) == pytest.approx(1 / 7)
    assert chance_level(4) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        chance_level(2)


def _pair_frame(pairs) -> pd.DataFrame:
    """Pairwise trial rows (both orders of each pair) as study_a.metrics.join makes
    them, from (choice in AB order, choice in BA order, better slot in AB order)."""
    rows = []
    for i, (ab, ba, better) in enumerate(pairs):
        better_ba = "B" if better == "A" else "A"  # the better clip's slot in BA order
        for order, choice, gold in (("AB", ab, better), ("BA", ba, better_ba)):
            rows.append({"judge": "j", "task": "pair_t", "family": "pairwise",
                         "condition": "concat", "pair_id": f"p{i}", "order": order,
                         "parsed": choice, "gold": gold, "valid": choice is not None,
                         "status": "valid" if choice is not None else "invalid",
                         "better_slot_ab": better, "cluster": f"p{i}",
                         "cluster_unit": "pair"})
    return pd.DataFrame(rows)


def _pair_rates(pairs) -> dict[str, dict]:
    return {r["metric"]: r for r in pairwise_metrics(_pair_frame(pairs))}


def test_pair_modes():
    assert pair_mode("A", "A", "A") == "locked_first"
    assert pair_mode("B", "B", "A") == "locked_second"
    assert pair_mode("A", "B", "A") == "consistent_correct"
    assert pair_mode("B", "A", "A") == "consistent_wrong"
    assert pair_mode(None, "A", "A") is None
    # the metrics rule's own pair rates (study_a.metrics.pairwise_metrics)
    m = _pair_rates([("A", "A", "A"), ("A", "A", "B"), ("A", "B", "A"), ("B", None, "A")])
    assert {k: m[k]["estimate"] * m[k]["n"] for k in PAIR_MODES} == {
        "consistent_correct": 1, "consistent_wrong": 0, "locked_first": 2,
        "locked_second": 0}
    assert m["lock"]["estimate"] == pytest.approx(2 / 3)
    assert (m["lock"]["n"], m["lock"]["n_invalid"]) == (3, 1)
    # judgments: (A,A|A) 1 of 2, (A,A|B) 1 of 2, (A,B|A) 2 of 2, (B|A) 0 of 1 valid
    assert (m["g"]["estimate"] * m["g"]["n"], m["g"]["n"], m["g"]["n_invalid"]) == (
        pytest.approx(4), 7, 1)


def test_first_slot_judge_has_g_one_half():
    rng = np.random.default_rng(1)
    pairs = [("A", "A", rng.choice(["A", "B"])) for _ in range(100)]
    m = _pair_rates(pairs)
    assert m["lock"]["estimate"] == 1 and m["lock"]["n"] == 100
    assert m["g"]["estimate"] == 0.5


def test_cluster_bootstrap_bca_duplicates_do_not_shrink_ci():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, size=60).astype(float)
    single = cluster_bootstrap_bca(base, None, n_resamples=4000, seed=3)
    # every clip judged 5 times identically (e.g. five derangement seeds)
    rep = np.repeat(base, 5)
    clusters = np.repeat(np.arange(60), 5)
    clustered = cluster_bootstrap_bca(rep, clusters, n_resamples=4000, seed=3)
    naive = cluster_bootstrap_bca(rep, None, n_resamples=4000, seed=3)
    assert clustered.estimate == pytest.approx(base.mean())
    assert clustered.n_clusters == 60 and clustered.n == 300
    # same information as one judgment per clip (up to resampling noise)
    assert clustered.lo == pytest.approx(single.lo, abs=0.03)
    assert clustered.hi == pytest.approx(single.hi, abs=0.03)
    assert clustered.width > 1.8 * naive.width  # sqrt(5) ~ 2.24 in theory


def test_cluster_bootstrap_bca_matches_normal_theory_width():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, size=400).astype(float)
    res = cluster_bootstrap_bca(x, None, n_resamples=6000, seed=1)
    se = math.sqrt(x.mean() * (1 - x.mean()) / x.size)
    assert res.width == pytest.approx(2 * 1.96 * se, rel=0.08)



def test_sentences_used_name_the_population_of_crossed_tables(tmp_path):
    """Issue 32: a task whose speakers read the same sentences gets k (from its clips'
    manifest rows, one place) and every Study A table caption over it says its
    intervals are conditional on the k sentences used."""
    import pandas as pd

    from judgeaudit.stats.corpus import population_clause, sentences_by_task
    from judgeaudit.study_a import render

    manifest = pd.DataFrame({"clip_id": [f"c{i}" for i in range(8)],
                             "sentence_id": [str(i % 2) for i in range(8)],
                             "transcript": ["x"] * 8})
    trials = [{"task": "emotion", "facts": {"family": "blueprint", "clip_id": f"c{i}",
                                            "corpus": "synth_emotion",
                                            "cluster": f"s{i // 2}"}} for i in range(8)]
    trials += [{"task": "language", "facts": {"family": "blueprint", "clip_id": f"l{i}",
                                              "corpus": "synth_language",
                                              "cluster": f"s{i}"}} for i in range(3)]
    lang = pd.DataFrame({"clip_id": ["l0", "l1", "l2"], "transcript": ["a", "b", "c"]})
    pairs = [{"task": "pair_emotion", "facts": {"family": "pairwise", "clip_id": "c0"}}]
    got = sentences_by_task(trials + pairs, {"synth_emotion": manifest,
                                             "synth_language": lang})
    assert got == {"emotion": 2}  # language: every sentence read once, no crossing
    assert population_clause([2.0, 2.0, float("nan")]).startswith(
        "Speakers read the same sentences: every interval is conditional on the 2 sentences")
    assert population_clause([float("nan")]) == ""
    assert "conditional on the 1 sentence used" in population_clause([1])
    with pytest.raises(ValueError, match="manifest of bad"):
        sentences_by_task(trials, {"bad": pd.DataFrame({"clip_id": ["c0"]})})
    d = pd.DataFrame({"method": ["wilson_cr2_bm"], "n_clusters": [24],
                      "cluster_unit": ["speaker"], "n_sentences": [2]})
    assert "conditional on the 2 sentences used" in render._caption("T", d)
    assert "conditional" not in render._caption("T", d.drop(columns="n_sentences"))


def test_study_b_captions_name_the_voices_their_items_are_read_in(tmp_path):
    """Issue 32: Study B items are nested in the voices they are rendered with; the
    voices are counted from the items (one place, stats.corpus.voices_by_task) and every
    Study B table caption over them says its item-clustered intervals are conditional on
    them, per task."""
    import pandas as pd

    from judgeaudit.stats.corpus import voice_clause, voice_per_item_by_task, voices_by_task
    from judgeaudit.study_b import outputs as B

    items = {"single": [{"item_id": f"i{i}", "voice": f"sb_v{i % 3}"} for i in range(7)],
             "positional": [{"item_id": "d0", "voice": "sb_v9"}, {"item_id": "d1"}],
             "recorded": [{"item_id": "r0"}]}
    assert voices_by_task(items) == {"single": 3, "positional": 1}
    text = voice_clause([3, 3, 1, float("nan")], ["single", "single", "positional", "x"])
    assert "(positional: the 1 voice used; single: the 3 voices used)" in text
    assert text.startswith("Items are nested in the voices they are rendered with")
    assert voice_clause([float("nan")], ["x"]) == ""
    # each item its own voice: the item-clustered interval generalises over voices too
    own_items = {"single": [{"item_id": f"i{i}", "voice": f"sb_v{i}"} for i in range(5)],
                 "positional": [{"item_id": f"d{i}", "voice": "sb_v0"} for i in range(3)]}
    assert voice_per_item_by_task(own_items) == {"single": True, "positional": False}
    assert voice_per_item_by_task({"s": [{"item_id": "a", "voice": "v"}, {"item_id": "b"}]}
                                  ) == {"s": False}  # an item without a voice: not own
    mixed = voice_clause([5, 1], ["single", "positional"], [True, False])
    assert mixed.startswith("Each item is rendered in its own voice (single: 5 items, "
                            "5 voices) and the intervals cluster on the item, so they "
                            "generalise over items and over voices"), mixed
    assert "conditional on the voices used (positional: the 1 voice used)" in mixed
    assert "single: the" not in mixed
    assert voice_clause([5], ["single"], ["False"]).startswith("Items are nested")
    # rows without voices (a chance row) do not make a task's voices shared
    assert voice_clause([5, float("nan")], ["single", "single"], [True, float("nan")]
                        ).startswith("Each item is rendered in its own voice (single: 5")
    row = {"judge": "j", "task": "single", "cue": "none", "protocol": "pointwise",
           "metric": "accuracy", "estimate": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": 20,
           "n_clusters": 10, "cluster_unit": "item", "n_invalid": 0, "invalid_low": 0.5,
           "invalid_high": 0.5, "one_sided": "", "deff": 1.0, "method": "wilson_cr2_bm",
           "k": 10, "corpus": "synth_counterfactual"}
    entry = B.REGISTRY.table("study_b_accuracy")
    entry.render(accuracy=pd.DataFrame([{**row, "n_voices": 4}]), base=tmp_path / "a")
    cap = (tmp_path / "a.md").read_text().split("\n")[0]
    assert "conditional on the voices used (single: the 4 voices used)" in cap, cap
    entry.render(accuracy=pd.DataFrame([row]), base=tmp_path / "b")
    assert "voices used" not in (tmp_path / "b.md").read_text()
