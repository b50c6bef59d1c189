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
         "first-slot": {"provider": "first_slot"},
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
    assert "control judges" in html.lower() and "cells/study_a_table2_blueprint.html#r" in html
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


# ------------------------------------------------------------------ issue 30: tables
def _conflict() -> pd.DataFrame:
    rows = []
    for judge in ("listener", "label-reader", "sim-a", "sim-b"):
        for cond in ("conflict", "conflict_fallible"):
            for metric in ("follow_block", "follow_reference", "follow_gold", "follow_other"):
                rows.append({"judge": judge, "task": "emotion", "family": "conflict",
                             "condition": cond, "seed": "all", "metric": metric,
                             "estimate": 0.25, "ci_low": 0.1, "ci_high": 0.4, "n": 40,
                             "n_clusters": 8, "method": "wilson_cr2_bm"})
    return pd.DataFrame(rows)


def _tables(html: str) -> list[str]:
    return html.split("<table")[1:]


def test_controls_are_a_panel_of_their_own_after_every_audited_row():
    """A.S2: the audited judges' conflict_fallible rows are never under the control
    header; every control row is in a table after the audited one."""
    from judgeaudit.report.paper import _printed_html

    p = fill(pivots_of("study_a_table4_conflict")[0], _conflict(), PANEL)
    html = _printed_html("study_a_table4_conflict", p, PANEL)
    audited, control = _tables(html)
    assert "sim-a" in audited and "sim-b" in audited and "conflict_<wbr>fallible" in audited
    assert "listener" not in audited and "label-reader" not in audited
    assert "sim-a" not in control and "sim-b" not in control
    assert control.count("class='control'") == 4  # 2 controls x 2 conditions
    assert html.index("Control judges") < html.index("<table", html.index("Control judges"))


def _contrasts() -> pd.DataFrame:
    rows = []
    for judge, role in (("first-slot", "control"), ("listener", "control"),
                        ("sim-a", "audited"), ("sim-b", "audited")):
        rows.append({"family": "wrong_with_audio_vs_audio_only", "task": "emotion",
                     "contrast": "accuracy(wrong_with_audio) - accuracy(audio_only)",
                     "judge": judge, "estimate": -0.5, "ci_low": -0.7, "ci_high": -0.3,
                     "one_sided": "", "pvalue": 0.004, "method": "paired_t_cr2_bm",
                     "role": role, "p_holm": 0.008 if role == "audited" else float("nan"),
                     "reject_holm": role == "audited"})
        rows.append({"family": "placement_rf", "task": "emotion",
                     "contrast": "RF(system) = RF(rubric) = RF(before) = RF(after)",
                     "judge": judge, "estimate": 0.3, "ci_low": float("nan"),
                     "ci_high": float("nan"), "one_sided": "",
                     "pvalue": 0.02 if role == "audited" else float("nan"),
                     "method": "ols_within_cr1_wald_f" if role == "audited" else
                     "ols_within_cr1_wald_f:too_few_clusters", "role": role,
                     "p_holm": 0.04 if role == "audited" else float("nan"),
                     "reject_holm": role == "audited"})
    return pd.DataFrame(rows)


def test_contrasts_print_holm_p_and_decision_and_controls_apart():
    """A.S3: audited judges' columns first, controls' columns in a panel of their own;
    every tested cell prints its Holm-adjusted p and the decision; a Wald row prints
    no "[-, -]" and says why when it has no test."""
    from judgeaudit.report.paper import _printed_html

    p = fill(pivots_of("study_a_contrasts")[0], _contrasts(), PANEL)
    html = _printed_html("study_a_contrasts", p, PANEL)
    audited, control = _tables(html)
    assert "sim-a" in audited and "first-slot" not in audited and "listener" in control
    assert audited.count("p<sub>H</sub>") == 4 and audited.count("<b>rej.</b>") == 4
    assert "#r0.p_holm" not in html and "p_holm'>" in audited
    assert "[-, -]" not in html
    assert control.count("no test: too few clusters") == 2  # the controls' Wald rows
    assert control.count("p <a") == 2  # their paired rows: the unadjusted p


def test_a_wide_layout_is_split_into_panels_that_fit():
    from judgeaudit.report.layout import Pivot
    from judgeaudit.report.paper import MAX_VALUE_COLUMNS, _printed_html

    rows = [{"judge": j, "task": t, "protocol": pr, "cue": c, "estimate": 0.5,
             "ci_low": 0.4, "ci_high": 0.6}
            for j in ("sim-a", "listener") for t in ("single", "positional", "conversation")
            for pr in ("pointwise", "pairwise", "text") for c in ("none", "soft", "hard")]
    piv = Pivot(rows=("judge",), cols=("task", "protocol", "cue"))
    p = fill(piv, pd.DataFrame(rows), PANEL)
    assert len(p.header) == 27
    html = _printed_html("study_b_accuracy", p, PANEL)
    tables = _tables(html)
    assert len(tables) == 6  # 3 panels (one per task) x audited / control
    for t in tables:
        first_row = t.split("</tr>")[2]  # the third header level: one th per column
        assert first_row.count("<th") <= MAX_VALUE_COLUMNS
    assert "task: single" in html and "task: conversation" in html


def test_table3_main_panel_is_rf_and_rf_tilde_is_clipped_beside():
    from judgeaudit.report.paper import _printed_html

    rows = []
    for metric, est in (("rf", 0.2), ("rf_norm", -0.49), ("accuracy", 0.7)):
        for cond in ("system", "after", "match"):
            if cond == "match" and metric != "accuracy":
                continue
            rows.append({"judge": "sim-a", "task": "emotion", "condition": cond,
                         "seed": "all", "metric": metric, "estimate": est,
                         "ci_low": est - 0.1, "ci_high": est + 0.1})
    frame = pd.DataFrame(rows)
    panels = [fill(p, frame, PANEL) for p in pivots_of("study_a_table3_reference")]
    assert [frame.at[p.body[0][2][0].row, "metric"] for p in panels] == [
        "rf", "rf_norm", "accuracy"]
    rf_tilde = _printed_html("study_a_table3_reference", panels[1], PANEL)
    assert "-0.49" not in rf_tilde.replace("unclipped -0.49", "")
    assert "0.00\u2193" in rf_tilde and "unclipped -0.49" in rf_tilde
    assert ">0.20<" in _printed_html("study_a_table3_reference", panels[0], PANEL)


def _planted() -> pd.DataFrame:
    rows = []
    for judge in ("sim-a", "sim-b"):
        for k in range(40):
            planted = 0.0 if k % 10 == 0 else 0.3
            rows.append({"judge": judge, "simulates": float("nan"), "knob": f"knob{k:02d}",
                         "task": "emotion", "condition": "wrong_block", "metric": "rf",
                         "planted": planted, "estimate": 0.31, "ci_low": 0.2,
                         "ci_high": 0.4 if k != 5 else 0.29, "ci_method": "wilson_cr2_bm",
                         "n": 40, "n_clusters": 8, "n_invalid": 0,
                         "inside": "True" if k != 5 else "False",
                         "counted": "True" if planted else "False"})
    return pd.DataFrame(rows)


def test_planted_table_is_evidence_every_row_with_its_count():
    from judgeaudit.report.planted import coverage, planted_html

    frame = _planted()
    cov = coverage(frame)
    assert (cov.inside, cov.counted, cov.apart) == (70, 72, 8)
    assert cov.by_judge == (("sim-a", 35, 36), ("sim-b", 35, 36))
    html = planted_html(frame, lambda i, c: f"cells/study_a_planted.html#r{i}.{c}")
    assert "70 of 72 nonzero planted rates inside their 95% CI" in html
    for col in ("planted", "estimate [95% CI]", "inside", "counted"):
        assert f">{col}</th>" in html
    assert html.count("<tr class='audited'>") + html.count("<tr class='apart'>") == 80
    assert all(f"#r{i}.estimate'" in html for i in range(80))  # no row hidden
    assert "nan" not in html.lower() and "sim-a</b>" in html
    assert html.count("<tr class='grp'>") == 2  # one judge header per judge, not per row
    import pytest

    with pytest.raises(ValueError, match="counted"):
        coverage(frame.drop(columns=["counted"]))


def test_trace_page_keeps_state_codes_and_says_when_a_row_has_no_trials(tmp_path):
    """A (P, O, J) state read from the TSV as 11 / 0 prints as 011 / 000 on its trace
    page; a row without trials says it is not recomputed instead of "from the 0
    trials"."""
    from collections import Counter

    from judgeaudit.report.cellpages import CELL_JS, Store, write_table_pages

    frame = pd.DataFrame({"judge": ["sim-a", "sim-a"], "state": [11, 0],
                          "estimate": [0.25, 0.5]})
    out = tmp_path / "report"
    (out / "cells").mkdir(parents=True)
    write_table_pages("study_b_state_distribution", "t.tsv", frame, tmp_path, out,
                      Store(tmp_path, out), Counter(), "", "../index.html", trace=False)
    page = (out / "cells" / "study_b_state_distribution.html").read_text()
    assert "id='r0.state' class=nt>011" in page and "id='r1.state' class=nt>000" in page
    assert "if (all.length)" in CELL_JS and "Not recomputed from trials" in CELL_JS
