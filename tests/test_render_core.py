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
