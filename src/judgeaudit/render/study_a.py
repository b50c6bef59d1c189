"""Study A tables (analogues of the paper's Tables II-V, contrasts, planted vs
estimated) and figures, built from the tidy metric tables with the generic
renderers in `tables.py` / `figures.py`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.render.figures import grouped_bars, save_figure, xy_errorbars
from judgeaudit.render.tables import fmt_ci, pivot_cells, write_table

RQ1 = ["audio_only", "skeleton", "acoustic_description", "true_block", "wrong_block",
       "wrong_no_frame", "wrong_with_audio", "wrong_with_audio_fallible"]
PLACEMENTS = ["system", "rubric", "before", "after"]
CONFLICT = ["follow_block", "follow_reference", "follow_gold", "follow_other"]
PAIR_METRICS = ["lock", "g", "consistent_correct", "consistent_wrong", "locked_first",
                "locked_second"]


def _pooled(m: pd.DataFrame) -> pd.DataFrame:
    return m[m["seed"].astype(str) == "all"]


def table_blueprint(m: pd.DataFrame, base: Path) -> None:
    d = _pooled(m)
    d = d[(d["family"] == "blueprint") & (d["metric"] == "accuracy")]
    write_table(pivot_cells(d, ["judge", "task"], "condition", order=RQ1), base,
                "Study A Table II analogue: accuracy by blueprint condition "
                "(seed-pooled, Wilson 95% CI)", tsv_frame=d)


def table_reference(m: pd.DataFrame, base: Path) -> None:
    d = _pooled(m)
    d = d[(d["family"] == "reference")]
    rf = d[d["metric"].isin(["rf", "rf_norm"]) & d["condition"].isin(PLACEMENTS)]
    rf = rf.assign(col=rf["metric"].map({"rf": "RF", "rf_norm": "RF~"}) + " " + rf["condition"])
    order = [f"{k} {p}" for k in ("RF", "RF~") for p in PLACEMENTS]
    wide = pivot_cells(rf, ["judge", "task"], "col", order=order)
    match = d[(d["condition"] == "match") & (d["metric"] == "accuracy")]
    cells = {(j, t): fmt_ci(e, lo, hi) for j, t, e, lo, hi in
             zip(match["judge"], match["task"], match["estimate"], match["ci_low"],
                 match["ci_high"], strict=True)}
    wide["accuracy match"] = [cells.get((j, t), "-") for j, t in
                              zip(wide["judge"], wide["task"], strict=True)]
    write_table(wide, base, "Study A Table III analogue: reference-follow rate RF and "
                "chance-normalised RF~ by placement; accuracy with the true reference",
                tsv_frame=d)


def table_conflict(m: pd.DataFrame, base: Path) -> None:
    d = _pooled(m)
    d = d[(d["family"] == "conflict") & d["metric"].isin(CONFLICT)]
    write_table(pivot_cells(d, ["judge", "task"], "metric", order=CONFLICT), base,
                "Study A Table IV analogue: cue conflict (wrong block vs wrong reference "
                "naming different labels): share of answers following each cue", tsv_frame=d)


def table_pairwise(m: pd.DataFrame, base: Path) -> None:
    d = m[(m["family"] == "pairwise") & m["metric"].isin(PAIR_METRICS)]
    d = d.assign(col=d["condition"] + " " + d["metric"])
    order = [f"{f} {k}" for f in ("concat", "native") for k in PAIR_METRICS]
    write_table(pivot_cells(d, ["judge", "task"], "col", order=order), base,
                "Study A Table V analogue: pairwise position lock, gold-aligned rate g and "
                "pair modes by format", tsv_frame=d)


def table_contrasts(c: pd.DataFrame, base: Path) -> None:
    cols = ["family", "judge", "task", "contrast", "n", "b", "c", "p_x", "p_y", "pvalue",
            "p_holm", "reject_holm", "method"]
    show = c[cols].copy() if len(c) else pd.DataFrame(columns=cols)
    write_table(show, base, "Study A paired contrasts (McNemar; Holm within family)",
                digits=3, tsv_frame=c)


def table_planted(p: pd.DataFrame, base: Path) -> None:
    show = p.copy()
    if len(show):
        show["estimate [95% CI]"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                                     zip(show["estimate"], show["ci_low"], show["ci_high"],
                                         strict=True)]
        show = show[["judge", "knob", "task", "metric", "planted", "estimate [95% CI]",
                     "ci_method", "n", "n_invalid", "inside"]]
        share = p["inside"].mean()
        caption = (f"Simulated judges: planted rate vs estimate; {int(p['inside'].sum())} of "
                   f"{len(p)} ({share:.0%}) inside their 95% CI")
    else:
        caption = "Simulated judges: planted rate vs estimate (no simulated judges configured)"
    write_table(show, base, caption, tsv_frame=p)


def all_tables(metrics: pd.DataFrame, contrasts: pd.DataFrame, planted: pd.DataFrame,
               out_dir: str | Path) -> None:
    out = Path(out_dir)
    table_blueprint(metrics, out / "study_a_table2_blueprint")
    table_reference(metrics, out / "study_a_table3_reference")
    table_conflict(metrics, out / "study_a_table4_conflict")
    table_pairwise(metrics, out / "study_a_table5_pairwise")
    table_contrasts(contrasts, out / "study_a_contrasts")
    table_planted(planted, out / "study_a_planted")


def _panel_corpus(m: pd.DataFrame) -> pd.DataFrame:
    """Figure panels name their corpus: task -> `task (corpus)`."""
    if "corpus" not in m.columns:
        return m
    return m.assign(task=m["task"].astype(str) + " (" + m["corpus"].astype(str) + ")")


def all_figures(metrics: pd.DataFrame, out_dir: str | Path) -> None:
    out = Path(out_dir)
    metrics = _panel_corpus(metrics)
    d = _pooled(metrics)
    ref = d[(d["family"] == "reference") & (d["metric"] == "rf")]
    save_figure(grouped_bars(ref, "condition", "judge", panel="task", x_order=PLACEMENTS,
                             ylabel="reference-follow rate RF (95% CI)", title="RQ2"),
                out / "study_a_follow_by_placement")
    acc = d[(d["family"] == "blueprint") & (d["metric"] == "accuracy")]
    save_figure(grouped_bars(acc, "condition", "judge", panel="task", x_order=RQ1,
                             ylabel="accuracy (95% CI)", title="RQ1"),
                out / "study_a_accuracy_by_blueprint")
    pw = metrics[(metrics["family"] == "pairwise") & metrics["metric"].isin(["lock", "g"])]
    rows = []
    for (judge, task, fmt), g in pw.groupby(["judge", "task", "condition"]):
        r = {"judge": judge, "task": task, "format": fmt}
        for metric in ("lock", "g"):
            x = g[g["metric"] == metric].iloc[0]
            r.update({metric: x["estimate"], f"{metric}_low": x["ci_low"],
                      f"{metric}_high": x["ci_high"]})
        rows.append(r)
    xy = pd.DataFrame(rows).dropna(subset=["lock", "g"]) if rows else pd.DataFrame(
        columns=["judge", "format", "lock", "g", "lock_low", "lock_high", "g_low", "g_high"])
    save_figure(xy_errorbars(xy, "lock", "g", "judge", "format", xlabel="position-lock rate",
                             ylabel="gold-aligned rate g", title="RQ3: lock vs g by format",
                             hline=0.5), out / "study_a_lock_vs_g")
