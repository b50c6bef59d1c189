"""Study B chance baselines: the chance state distribution sums to 1, matches a
Monte-Carlo judge answering every probe uniformly at random (run through the real
state code), and gates the conditional Potemkin rate."""

import numpy as np
import pandas as pd
import pytest

from judgeaudit.study_b import chance as CH
from judgeaudit.study_b import metrics as SB

CLASSES = ["angry", "happy", "neutral", "sad"]


def _single(i):
    e0, e1 = CLASSES[i % 4], CLASSES[(i + 1) % 4]
    return {"item_id": f"single-{i}", "family": "single", "key_turns": [1],
            "classes": CLASSES, "turns": [{"turn": 1, "role": "user", "emotions": [e0, e1]}]}


def _positional(i):
    # user turns 1, 3, 5; start neutral; shift to angry at 3 (A0) or 5 (A1)
    emos = {1: ["neutral", "neutral"], 3: ["angry", "neutral"], 5: ["angry", "angry"]}
    turns = [{"turn": t, "role": "user" if t % 2 else "assistant",
              "emotions": emos.get(t, [None, None])} for t in range(1, 6)]
    return {"item_id": f"positional-{i}", "family": "positional", "key_turns": [3],
            "span_turns": [3, 5], "shift_turns": [3, 5], "shift_emotion": "angry",
            "classes": CLASSES, "turns": turns}


def _random_judge(items, rng, judge="random"):
    rows = []

    def row(item, **kw):
        base = {"judge": judge, "task": item["family"], "item_id": item["item_id"],
                "protocol": "", "probe": "", "cue": "", "turn": np.nan, "oracle": False,
                "stated_label": None, "valid": True}
        base.update(kw)
        base["correct"] = float(base["parsed"] == base["gold"])
        return base

    for item in items:
        for v in (0, 1):
            for t in item["turns"]:
                if t["role"] == "user":
                    rows.append(row(item, probe="P", rendering=v, turn=t["turn"],
                                    gold=t["emotions"][v], parsed=str(rng.choice(CLASSES))))
            gold = "R1" if v == 0 else "R2"
            rows.append(row(item, probe="O", rendering=v, oracle=True, stated_label="x",
                            gold=gold, parsed=str(rng.choice(["R1", "R2"]))))
            rows.append(row(item, protocol="pointwise", probe="J", cue="none", rendering=v,
                            gold=gold, parsed=str(rng.choice(["R1", "R2"]))))
    return pd.DataFrame(rows)


def test_state_probabilities_sum_to_one_and_factor():
    p = CH.state_probabilities(0.25, 0.5, 0.5)
    assert sum(p.values()) == pytest.approx(1.0)
    assert p["110"] == pytest.approx(0.25 * 0.5 * 0.5)
    assert p["000"] == pytest.approx(0.75 * 0.25)


def test_chance_distribution_sums_to_one_per_task():
    items = [_single(i) for i in range(8)] + [_positional(i) for i in range(4)]
    ch = CH.chance_distribution(items)
    assert ch.groupby("task")["chance"].sum().to_numpy() == pytest.approx([1.0, 1.0])
    pos = ch[ch["task"] == "positional"].iloc[0]
    assert pos["p_P_uniform"] == pytest.approx(0.25 ** 3)  # 3 span turns
    single = ch[ch["task"] == "single"].iloc[0]
    assert single["p_P_uniform"] == pytest.approx(0.25)
    assert single["p_P_constant"] == pytest.approx(0.25)  # balanced classes


@pytest.mark.parametrize("family", ["single", "positional"])
def test_chance_matches_monte_carlo_random_judge(family):
    make = _single if family == "single" else _positional
    items = [make(i) for i in range(20)]
    rng = np.random.default_rng(7)
    reps = 40
    counts = pd.Series(0.0, index=list(CH.STATES))
    total = 0
    for _ in range(reps):
        st = SB.states(_random_judge(items, rng), items)
        vc = st["state"].value_counts()
        counts = counts.add(vc.reindex(counts.index, fill_value=0), fill_value=0)
        total += len(st)
    mc = counts / total
    ch = CH.chance_distribution(items).set_index("state")["chance"]
    se = np.sqrt(ch * (1 - ch) / total)
    assert (np.abs(mc - ch) <= 4 * se + 1e-9).all(), pd.DataFrame({"mc": mc, "chance": ch})


def test_best_constant_uses_class_counts():
    golds = [("happy",)] * 6 + [("sad",)] * 2
    assert CH.best_constant(golds) == pytest.approx(0.75)


def _pot_and_states(p_bits, pot_n):
    # two renderings per item (the gate clusters on items)
    st = pd.DataFrame({"judge": "j", "task": "single", "P": p_bits,
                       "item_id": [f"single-{k // 2}" for k in range(len(p_bits))]})
    pot = pd.DataFrame([{"judge": "j", "task": "single", "metric": "conditional_potemkin",
                         "estimate": 0.6, "ci_low": 0.3, "ci_high": 0.8, "n": pot_n},
                        {"judge": "j", "task": "single", "metric": "probe_P",
                         "estimate": 0.25, "ci_low": 0.1, "ci_high": 0.4, "n": len(p_bits)}])
    ch = CH.chance_distribution([_single(i) for i in range(8)])
    return pot, st, ch


def test_gate_blanks_potemkin_at_chance_and_names_the_reason():
    pot, st, ch = _pot_and_states([1.0] * 8 + [0.0] * 24, 12)  # P = 0.25 = chance
    out = CH.gate_potemkin(pot, st, ch, alpha=0.05, min_n=10)
    row = out[out["metric"] == "conditional_potemkin"].iloc[0]
    assert row["reported"] is False and np.isnan(row["estimate"])
    assert row["raw_estimate"] == 0.6 and "not above chance 0.25" in row["reason"]


def test_gate_reports_above_chance_but_refuses_tiny_n():
    pot, st, ch = _pot_and_states([1.0] * 28 + [0.0] * 4, 12)
    row = CH.gate_potemkin(pot, st, ch).query("metric == 'conditional_potemkin'").iloc[0]
    assert row["reported"] is True and row["estimate"] == 0.6
    pot, st, ch = _pot_and_states([1.0] * 28 + [0.0] * 4, 2)
    row = CH.gate_potemkin(pot, st, ch).query("metric == 'conditional_potemkin'").iloc[0]
    assert row["reported"] is False and "n(P=1, O=1) = 2 < 10" in row["reason"]


def test_states_table_and_figure_show_chance_beside_observed(tmp_path):
    from judgeaudit.study_b import render as R

    items = [_single(i) for i in range(6)]
    st = SB.states(_random_judge(items, np.random.default_rng(1)), items)
    dist = SB.state_distribution(st)
    ch = CH.chance_distribution(items)
    wide = R.states_table(dist, ch, tmp_path / "tab")
    assert list(wide["judge"]) == ["random", R.CHANCE_ROW]
    assert wide.iloc[1]["110"] == "0.06 (chance)"  # 1/4 * 1/2 * 1/2
    assert "uniformly at random" in (tmp_path / "tab.md").read_text()
    heights = R.states_figure(dist, tmp_path / "fig", ch)
    assert heights.loc[R.CHANCE_ROW, "single"] == pytest.approx(1.0)
    assert (tmp_path / "fig.png").stat().st_size > 0


def test_potemkin_table_prints_the_reason_where_not_reported(tmp_path):
    from judgeaudit.study_b import render as R

    pot, st, ch = _pot_and_states([1.0] * 8 + [0.0] * 24, 12)
    wide = R.potemkin_table(CH.gate_potemkin(pot, st, ch), tmp_path / "pot")
    assert wide.iloc[0]["conditional_potemkin"].startswith("not reported: P 8/32")


def test_gate_test_is_clustered_on_items():
    """The chance gate's binomial test counts an item's two renderings once when
    they agree (CR2 effective sample size over items), so perfectly correlated
    renderings are less significant than the same rate over independent ones."""
    from scipy.stats import binomtest

    bits = [1.0] * 12 + [0.0] * 12  # 12 items: 6 both right, 6 both wrong
    items = [f"i{k // 2}" for k in range(len(bits))]
    p_clu, k_eff, n_eff, deff = CH.clustered_binomtest(bits, items, 0.25)
    # CR2 with G = 12 items: deff = 2 * G / (G - 1); n_eff = floor(24 / deff) = 11
    assert deff == pytest.approx(2.0 * 12 / 11) and n_eff == 11 and k_eff == round(5.5)
    assert p_clu == pytest.approx(binomtest(k_eff, 11, 0.25, alternative="greater").pvalue)
    p_iid, _, n_iid, deff_iid = CH.clustered_binomtest(bits, [f"u{k}" for k in range(24)], 0.25)
    assert n_iid == 23 and deff_iid == pytest.approx(24 / 23) and p_iid < p_clu  # CR2 G/(G-1)
    # at a boundary rate the whole item counts once
    _, k1, n1, d1 = CH.clustered_binomtest([1.0] * 8, [f"i{k // 2}" for k in range(8)], 0.25)
    assert (k1, n1, d1) == (4, 4, 2.0)
