"""Every rendered rate cell of both studies prints its cluster-robust interval with n and
the number of clusters, and the captions name the method (tables built from scripted
judges, no workflow run)."""

import numpy as np
import pandas as pd
import pytest
from ratecells import check_rate_cells

from judgeaudit.stats.ci import wilson
from judgeaudit.study_a import metrics as sa
from judgeaudit.study_a import outputs as A
from judgeaudit.study_a.classification import (
    ClipSet,
    blueprint_trials,
    conflict_trials,
    reference_trials,
)
from judgeaudit.study_b import metrics as SB
from judgeaudit.study_b import render as RB

LANGS = ("en", "es", "fr", "de")


class BP:
    template_sha256 = "0" * 64

    def skeleton(self):
        return "Acoustic description."

    def description(self, clip_id):
        return "Acoustic description: loud."

    def block(self, label, framed):
        return f"A classifier labelled this clip as {label}." if framed else f"Label: {label}."

    def fallible(self):
        return "Labels are fallible."


def test_study_a_tables_print_n_and_clusters(tmp_path):
    rows = [{"clip_id": f"{lab}{i}", "path": "x.wav", "sha256": f"{lab}{i}", "label": lab,
             "pred": lab, "speaker": f"v{i % 6}"} for lab in LANGS for i in range(12)]
    cs = ClipSet("language", LANGS, pd.DataFrame(rows))
    trials = (blueprint_trials(cs, BP(), [1, 2, 3]) + reference_trials(cs, [1, 2])
              + conflict_trials(cs, BP(), [1]))
    rng = np.random.default_rng(4)

    def judge(t):
        f = t["facts"]
        if rng.random() < 0.05:
            return None, "invalid_json"
        if f.get("wrong_label") and rng.random() < 0.3 + 0.1 * int(f["speaker"][1:]):
            return f["wrong_label"], "valid"
        return t["gold"], "valid"

    resp = []
    for t in trials:
        parsed, status = judge(t)
        resp.append({"trial_id": t["trial_id"], "parsed": parsed, "status": status})
    df = sa.join(trials, resp, "sim")
    m = sa.metrics(df)
    assert (m["cluster_unit"] == "speaker").all() and (m["n_clusters"] <= 6).all()
    c = sa.contrasts_table(sa.contrast_rows(df) + [sa.capability_test(sa.capability_table(m))])
    A.render_tables({"metrics": m, "contrasts": c, "planted": sa.planted_table(m, {}),
                     "twoway": pd.DataFrame(sa.twoway_rates(df, {}),
                                            columns=sa.TWOWAY_COLUMNS)}, tmp_path)
    counted = {p.stem: check_rate_cells(p) for p in sorted(tmp_path.glob("*.md"))}
    assert counted["study_a_table2_blueprint"] == 9
    assert counted["study_a_follow_blueprint"] == 5 * 4  # accuracy, RF, rf_adj, RF~
    # per placement: plain and +fallible accuracy, RF, rf_adj, RF~; match accuracy
    assert counted["study_a_table3_reference"] == 4 * 4 * 2 + 1
    assert counted["study_a_contrasts"] > 0
    # seed stability: accuracy and RF of the 5 wrong conditions, 3 seeds + pooled each
    assert counted["study_a_seed_stability"] == 5 * 2 * 4
    # the TSV holds the traceable metric rows (per seed and pooled); the spread is in the md
    seeds = pd.read_csv(tmp_path / "study_a_seed_stability.tsv", sep="\t", dtype={"seed": str})
    assert set(seeds["seed"]) == {"1", "2", "3", "all"} and "seed_spread" not in seeds
    assert "seed_spread" in (tmp_path / "study_a_seed_stability.md").read_text()
    # the TSV: the seed-pooled metric rows behind the one judge x task cell (traceable)
    cap = pd.read_csv(tmp_path / "study_a_capability.tsv", sep="\t", dtype={"seed": str})
    assert sorted(zip(cap["condition"], cap["metric"], strict=True)) == [
        ("audio_only", "accuracy"), ("wrong_with_audio", "rf"), ("wrong_with_audio", "rf_adj"),
        ("wrong_with_audio", "rf_norm")]
    assert (cap["seed"] == "all").all() and (cap["k"] == len(LANGS)).all()
    assert sa.capability_table(m)["chance"].iloc[0] == pytest.approx(1 / len(LANGS))
    capmd = (tmp_path / "study_a_capability.md").read_text()
    assert "not computed (too few cells: 1 audited cells)" in capmd
    caption = (tmp_path / "study_a_table3_reference.md").read_text().splitlines()[0]
    assert "clusters = speaker" in caption and "only 6 clusters" in caption
    assert "inv:" in (tmp_path / "study_a_table3_reference.md").read_text()


def _study_b_scored(n_items=30, seed=0):
    """Both renderings (and both pairwise orders) of an item share its outcome: the
    item, not the trial, is the unit."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        hard = rng.random() < 0.5  # item-level difficulty
        for proto in ("pointwise", "pairwise"):
            ok = (not hard) or proto == "pairwise"
            for v in (0, 1):
                rows.append({"judge": "j", "task": "single", "protocol": proto, "cue": "none",
                             "item_id": f"i{i}", "rendering": v, "valid": True,
                             "correct": float(ok), "probe": "", "oracle": None})
    return pd.DataFrame(rows)


def test_study_b_counts_each_item_once_and_tables_print_clusters(tmp_path):
    sc = _study_b_scored()
    acc = SB.accuracy(sc).set_index("protocol").loc["pointwise"]
    assert (acc["n"], acc["n_clusters"], acc["cluster_unit"]) == (60, 30, "item")
    # renderings of an item agree perfectly: design effect 2 (x t(29)/z), not Wilson over 60
    k = int(round(acc["estimate"] * 60))
    lo, hi = wilson(k, 60)
    ratio = (acc["ci_high"] - acc["ci_low"]) / (hi - lo)
    assert acc["deff"] == pytest.approx(2 * 30 / 29, rel=1e-9)  # CR2 = CR1 here (equal sizes): G/(G-1)
    assert ratio == pytest.approx(np.sqrt(acc["deff"]) * 2.045 / 1.96, rel=0.05)
    RB.accuracy_table(SB.accuracy(sc), tmp_path / "acc")
    gap = SB.protocol_gap(sc, n_boot=200)
    assert gap.iloc[0]["n"] == 30 and gap.iloc[0]["pvalue"] < 0.01
    assert gap.iloc[0]["boot_low"] <= gap.iloc[0]["estimate"] <= gap.iloc[0]["boot_high"]
    RB.gap_table(gap, tmp_path / "gap")
    st = pd.DataFrame([{"judge": "j", "task": "single", "item_id": f"i{i // 2}",
                        "rendering": i % 2, "P": 1.0, "O": 1.0, "J": float(i % 4 < 2),
                        "state": "111" if i % 4 < 2 else "110", "staging": 1.0}
                       for i in range(40)])
    pot = SB.potemkin(st)
    cp = pot.set_index("metric").loc["conditional_potemkin"]
    assert (cp["n"], cp["n_clusters"], cp["estimate"]) == (40, 20, 0.5)
    RB.potemkin_table(pot, tmp_path / "pot")
    dist = SB.state_distribution(st)
    assert set(dist["n_clusters"]) == {20}
    for name in ("acc", "gap", "pot"):
        assert check_rate_cells(tmp_path / f"{name}.md") > 0, name
