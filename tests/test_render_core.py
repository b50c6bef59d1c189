"""Generic table and figure rendering."""

import math

import pandas as pd

from judgeaudit.render.figures import grouped_bars, save_figure, xy_errorbars
from judgeaudit.render.tables import fmt_ci, pivot_cells, tex_escape, to_markdown, write_table


def test_formatting():
    assert fmt_ci(0.5, 0.25, 0.75) == "0.50 [0.25, 0.75]"
    assert fmt_ci(math.nan, 0, 1) == "-"
    assert tex_escape("rf_norm 50%") == r"rf\_norm 50\%"
    md = to_markdown(pd.DataFrame({"a": ["x|y"], "b": [0.123]}))
    assert md.splitlines()[2] == r"| x\|y | 0.12 |"


def test_write_table_and_pivot(tmp_path):
    df = pd.DataFrame({"judge": ["j1", "j1", "j2"], "cond": ["c1", "c2", "c1"],
                       "estimate": [0.5, 1.0, 0.0], "ci_low": [0.2, 0.9, 0.0],
                       "ci_high": [0.8, 1.0, 0.1]})
    wide = pivot_cells(df, ["judge"], "cond", order=["c2", "c1"])
    assert list(wide.columns) == ["judge", "c2", "c1"]
    assert wide.loc[wide["judge"] == "j2", "c2"].item() == "-"
    paths = write_table(wide, tmp_path / "t", caption="Cap_1", tsv_frame=df)
    assert [p.suffix for p in paths] == [".tsv", ".md", ".tex"]
    assert pd.read_csv(paths[0], sep="\t").shape == (3, 5)
    assert "**Cap_1**" in paths[1].read_text()
    tex = paths[2].read_text()
    assert r"\caption{Cap\_1}" in tex and "0.50 [0.20, 0.80]" in tex and r"\bottomrule" in tex


def test_figures_written_and_reproducible(tmp_path):
    df = pd.DataFrame({"x": ["a", "b", "a", "b"], "h": ["j1", "j1", "j2", "j2"],
                       "estimate": [0.2, 0.4, 0.6, 0.8], "ci_low": [0.1, 0.3, 0.5, 0.7],
                       "ci_high": [0.3, 0.5, 0.7, 0.9]})
    p1 = save_figure(grouped_bars(df, "x", "h", ylabel="rate"), tmp_path / "f1")
    p2 = save_figure(grouped_bars(df, "x", "h", ylabel="rate"), tmp_path / "f2")
    assert all(p.stat().st_size > 1000 for p in p1)
    assert p1[1].read_bytes() == p2[1].read_bytes()  # PDF without timestamps
    xy = pd.DataFrame({"lock": [1.0, 0.0], "lock_low": [0.9, 0.0], "lock_high": [1.0, 0.1],
                       "g": [0.5, 0.9], "g_low": [0.4, 0.8], "g_high": [0.6, 1.0],
                       "judge": ["a", "b"], "fmt": ["concat", "native"]})
    p3 = save_figure(xy_errorbars(xy, "lock", "g", "judge", "fmt"), tmp_path / "f3")
    assert p3[0].read_bytes()[:4] == b"\x89PNG"


def test_every_study_a_table_showing_a_twin_judge_is_labelled_a_simulation(tmp_path):
    """A table whose rows include a twin judge (planted table `simulates`) says in its
    caption that those rows are a SIMULATION OF THE PUBLISHED FIGURES; a table without
    twin rows does not."""
    from judgeaudit.render.tables import simulation_note
    from judgeaudit.study_a.render import _TWINS, twins_of
    from judgeaudit.study_a.render import write_table as study_a_write_table

    planted = pd.DataFrame({"judge": ["twin-af3", "sim-x"], "simulates": ["Audio-Flamingo-3", ""]})
    assert twins_of(planted) == {"twin-af3": "Audio-Flamingo-3"}
    frame = pd.DataFrame({"judge": ["twin-af3", "listener"], "task": ["emotion"] * 2,
                          "x": [0.1, 0.2]})
    note = simulation_note(frame, twins_of(planted))
    assert "SIMULATION OF THE PUBLISHED FIGURES" in note and "twin-af3 (Audio-Flamingo-3)" in note
    assert simulation_note(frame.iloc[1:], twins_of(planted)) == ""
    _TWINS.update(twins_of(planted))
    try:
        study_a_write_table(frame, tmp_path / "t", "A caption.")
        study_a_write_table(frame.iloc[1:], tmp_path / "u", "Other caption.")
    finally:
        _TWINS.clear()
    for ext in (".md", ".tex"):
        assert "SIMULATION OF THE PUBLISHED FIGURES" in (tmp_path / f"t{ext}").read_text()
        assert "SIMULATION" not in (tmp_path / f"u{ext}").read_text()
