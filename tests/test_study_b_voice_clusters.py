"""Issue 32: Study B items that share voices cluster on the voice.

A task whose items are read in fewer voices than it has items (configs/paper_b.yaml's
500 items over the 72-voice roster) has its items nested in voices; its rates and
paired differences cluster on the voice (`study_b.metrics.item_clusters`), the rows say
so (`cluster_unit`, `n_clusters`) and the captions too (`stats.corpus.voice_clause`).
Each check here re-derives the units from the item rows with the test's own code.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgeaudit.stats.clustered import clustered_difference, clustered_proportion
from judgeaudit.stats.corpus import voice_clause
from judgeaudit.study_b import compute as C
from judgeaudit.study_b import metrics as SB


def _items(task: str, n_items: int, n_voices: int) -> list[dict]:
    return [{"family": task, "item_id": f"{task}{i}", "voice": f"v{i % n_voices}"}
            for i in range(n_items)]


def _scored(items: list[dict], seed: int = 3) -> pd.DataFrame:
    """Pointwise (2 renderings) and pairwise (2 orders) trials of each item, one
    answer each, 5% invalid; a voice effect on being right."""
    rng = np.random.default_rng(seed)
    voice_effect = {v: rng.normal(0, 1.0) for v in sorted({it["voice"] for it in items})}
    rows = []
    for it in items:
        p = 1 / (1 + np.exp(-(0.4 + voice_effect[it["voice"]])))
        for proto, n in (("pointwise", 2), ("pairwise", 2)):
            for k in range(n):
                valid = rng.random() > 0.05
                rows.append({"judge": "j", "task": it["family"], "item_id": it["item_id"],
                             "protocol": proto, "cue": "none", "probe": "", "valid": valid,
                             "correct": float(rng.random() < p) if valid else np.nan,
                             "oracle": False, "trial_id": f"{it['item_id']}-{proto}-{k}"})
    return pd.DataFrame(rows)


def test_items_sharing_voices_cluster_on_the_voice_own_or_few_voices_on_the_item():
    shared = _items("single", 40, 10)
    got = SB.item_clusters(shared + _items("positional", 12, 12) + _items("conv", 30, 4))
    # the test's own rule: a task with fewer voices than items and >= 8 voices
    want = {("single", it["item_id"]): "voice:" + it["voice"] for it in shared}
    assert got == want
    assert SB.MIN_VOICE_CLUSTERS == 8
    assert SB.item_clusters(_items("conv", 30, 4), min_voices=4) != {}
    assert SB.item_clusters([{"family": "s", "item_id": "a"}, {"family": "s", "item_id": "b"}]
                            ) == {}  # no voices named (recorded speech): the item


def test_voice_clustered_accuracy_is_the_rate_over_voices():
    """A rate clustered on voices is the product's clustered proportion with each
    voice one cluster: relabelling every item by its voice and clustering on the item
    must give the same row; the unit and the cluster count say voice."""
    items = _items("single", 40, 10)
    scored = _scored(items)
    acc = SB.accuracy(scored, SB.item_clusters(items))
    voice_of = {it["item_id"]: it["voice"] for it in items}
    relabelled = scored.assign(item_id=scored["item_id"].map(voice_of))
    plain = SB.accuracy(relabelled)
    assert set(acc["cluster_unit"]) == {"voice"}
    assert set(acc["n_clusters"]) == {10}
    cols = ["estimate", "ci_low", "ci_high", "n", "deff"]
    pd.testing.assert_frame_equal(acc[cols], plain[cols])
    # and it differs from the item-clustered row (the voices do cluster here)
    by_item = SB.accuracy(scored)
    assert set(by_item["n_clusters"]) == {40} and set(by_item["cluster_unit"]) == {"item"}
    assert not np.allclose(acc["ci_high"] - acc["ci_low"],
                           by_item["ci_high"] - by_item["ci_low"])
    # the test's own per-voice check of one cell
    pw = scored[(scored["protocol"] == "pairwise") & scored["valid"]]
    est = clustered_proportion(pw["correct"].to_numpy(float),
                               pw["item_id"].map(voice_of).to_numpy(object))
    row = acc[acc["protocol"] == "pairwise"].iloc[0]
    assert (row["ci_low"], row["ci_high"]) == (est.lo, est.hi)


def test_voice_clustered_protocol_gap_pairs_items_and_clusters_their_voices():
    items = _items("single", 40, 10)
    scored = _scored(items, seed=11)
    gap = SB.protocol_gap(scored, n_boot=200, seed=1, clusters=SB.item_clusters(items))
    row = gap.iloc[0]
    assert row["cluster_unit"] == "voice" and row["n_clusters"] == 10
    assert row["n_items"] == 40
    # re-derived: per-item accuracies over valid answers, differenced, voices as clusters
    v = scored[scored["valid"]]
    means = v.groupby(["item_id", "protocol"])["correct"].mean().unstack().dropna()
    voice_of = {it["item_id"]: it["voice"] for it in items}
    est = clustered_difference(means["pairwise"].to_numpy(), means["pointwise"].to_numpy(),
                               np.array([voice_of[i] for i in means.index], dtype=object))
    assert row["estimate"] == pytest.approx(est.estimate, abs=1e-15)
    assert (row["ci_low"], row["ci_high"], row["pvalue"]) == pytest.approx(
        (est.lo, est.hi, est.pvalue), abs=1e-12)
    # a voice mapping shuffled across items is another interval (the units matter)
    rng = np.random.default_rng(0)
    perm = dict(zip(voice_of, rng.permutation(list(voice_of.values())), strict=True))
    wrong = clustered_difference(means["pairwise"].to_numpy(), means["pointwise"].to_numpy(),
                                 np.array([perm[i] for i in means.index], dtype=object))
    assert (wrong.lo, wrong.hi) != pytest.approx((row["ci_low"], row["ci_high"]), abs=1e-9)
    assert np.isfinite(row["boot_low"]) and row["boot_low"] <= row["estimate"] <= row["boot_high"]


def test_own_voices_leave_every_row_as_before(tmp_path):
    """The default design (each item its own voice): the item files change nothing,
    row for row and bit for bit, against the rows computed without them."""
    items = [dict(it, voice=f"own{i}") for i, it in enumerate(_items("single", 30, 30))]
    scored = _scored(items)
    path = tmp_path / "single" / "items.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    inputs = C.load([scored], [str(path)])
    assert SB.item_clusters(inputs["items"]) == {}
    params = {"n_boot": 100, "seed": 2}
    for fn in (C.accuracy, C.protocol_gap):
        with_items = fn(inputs, params)
        without = fn({"scored": scored}, params)
        for name in with_items:
            pd.testing.assert_frame_equal(with_items[name], without[name])


def test_recipe_load_reads_the_voices_from_the_item_files(tmp_path):
    """The rule script and the trace both call the recipe's `load` with the item
    files, so both cluster a shared-voice task on its voices."""
    items = _items("single", 24, 8)
    path = tmp_path / "single" / "items.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    scored = _scored(items)
    out = C.accuracy(C.load([scored], [str(path)]), {})["accuracy"]
    assert set(out["cluster_unit"]) == {"voice"} and set(out["n_clusters"]) == {8}


def test_voice_caption_follows_each_rows_cluster_unit():
    clustered = voice_clause([10, 10], ["single", "single"], [False, False], ["voice", "voice"])
    assert clustered.startswith("Items share the voices they are rendered with (single: 10 "
                                "voices) and the intervals cluster on the voice"), clustered
    assert "conditional" not in clustered
    few = voice_clause([4], ["conv"], [False], ["item"])
    assert "conditional on the voices used (conv: the 4 voices used)" in few
    both = voice_clause([10, 4, 5], ["single", "conv", "pos"], [False, False, True],
                        ["voice", "item", "item"])
    assert both.index("Each item") < both.index("cluster on the voice") < both.index(
        "conditional on the voices used")
