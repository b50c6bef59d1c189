"""The report's paper-layout pivots and generated abstract, on small long tables made
here (no workflow run): rows per judge with the conditions as columns, controls after
the audited judges, states as 3-character strings, and abstract sentences that state
their interval and say so when it includes the null."""

from __future__ import annotations

import pandas as pd

from judgeaudit.report.abstract import abstract
from judgeaudit.report.layout import fill, pivots_of, states_as_text
from judgeaudit.report.paper import _printed_html

PANEL = {"listener": {"provider": "listener"}, "label-reader": {"provider": "label_reader"},
         "sim-a": {"provider": "simulated"}, "sim-b": {"provider": "simulated"}}


def _blueprint() -> pd.DataFrame:
    rows = []
    for judge, acc in (("listener", 0.9), ("label-reader", 0.0), ("sim-a", 0.3),
                       ("sim-b", 0.05)):
        for cond in ("audio_only", "wrong_with_audio", "wrong_block"):
            est = 0.9 if cond == "audio_only" else acc
            rows.append({"judge": judge, "task": "emotion", "family": "blueprint",
                         "condition": cond, "seed": "all", "metric": "accuracy",
                         "estimate": est, "ci_low": max(0, est - 0.1),
                         "ci_high": min(1, est + 0.1), "n": 40, "n_clusters": 8,
                         "cluster_unit": "speaker", "method": "wilson_cr2_bm"})
    return pd.DataFrame(rows)


def test_pivot_has_one_row_per_judge_conditions_as_columns_controls_last():
    p = fill(pivots_of("study_a_table2_blueprint")[0], _blueprint(), PANEL)
    assert [k[0] for k in p.header] == ["audio_only", "wrong_block", "wrong_with_audio"]
    judges = [rk[1] for rk, _, _ in p.body]
    assert judges == ["sim-a", "sim-b", "label-reader", "listener"]
    assert [ctrl for _, ctrl, _ in p.body] == [False, False, True, True]
    html = _printed_html("study_a_table2_blueprint", p)
    assert html.count("<tr class='control'>") == 2
    assert "control judges" in html and "cells/study_a_table2_blueprint.html#r" in html
    # each cell links to its own long-table row
    cell = p.body[1][2][2]  # sim-b, wrong_with_audio
    frame = _blueprint()
    assert frame.at[cell.row, "judge"] == "sim-b"
    assert frame.at[cell.row, "condition"] == "wrong_with_audio"


def test_states_keep_their_leading_zeros():
    f = pd.DataFrame({"state": [11, 0, 110, "101"], "estimate": [0.1, 0.2, 0.3, 0.4]})
    assert states_as_text(f)["state"].tolist() == ["011", "000", "110", "101"]


def test_abstract_states_the_interval_and_does_not_overclaim():
    frames = {"study_a_table2_blueprint": _blueprint()}
    c = pd.DataFrame([{"family": "wrong_with_audio_vs_audio_only",
                       "contrast": "accuracy(wrong_with_audio) - accuracy(audio_only)",
                       "judge": "sim-b", "task": "emotion", "estimate": -0.85,
                       "ci_low": -0.95, "ci_high": -0.75, "method": "paired_t_cr2_bm"}])
    frames["study_a_contrasts"] = c
    out = dict(abstract(frames, PANEL, lambda s, i, col: f"cells/{s}.html#r{i}.{col}")[0])
    s = out["rq1"]
    assert "<b>sim-b</b>" in s  # the most affected audited judge, not a control
    assert "0.05" in s and "interval excludes 0" in s and "<b>listener</b>" in s
    assert "cells/study_a_table2_blueprint.html#r" in s
    # an interval that straddles the null is said to
    frames["study_a_contrasts"] = c.assign(ci_low=-0.9, ci_high=0.1)
    s = dict(abstract(frames, PANEL, lambda s, i, col: "#")[0])["rq1"]
    assert "includes 0: no drop is shown" in s
