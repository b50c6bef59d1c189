"""Study B tables and figures (the analogues of the paper's outputs).

Tables (TSV with full precision, n, n_clusters and n_invalid; Markdown and LaTeX
with `estimate [ci_low, ci_high] n=.. G=..` cells, G = items, the sampling unit):
- study_b_accuracy: rows judges; columns Single Pointwise none/soft/hard, Single
  Pairwise none/soft/hard, Positional Pointwise none/transition, Positional
  Pairwise none/transition (+ Conversation columns when that task runs);
- study_b_protocol_gap: Pairwise - Pointwise per judge x task x cue;
- study_b_balance: R0 vs R1 quality gaps per task and metric;
- study_b_potemkin: conditional Potemkin rate, staging accuracy, P and O accuracy.
Figures: study_b_states (stacked bars of the 8 states per judge x task) and
study_b_heatmap (conditional Potemkin rate, protocol collapse, cue dependence).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.render.figures import plt, save_figure
from judgeaudit.render.tables import (
    CELL_LEGEND,
    INVALID_LEGEND,
    fmt_ci,
    fmt_rate_cell,
    write_table,
)
from judgeaudit.stats.clustered import (
    METHOD_DIFFERENCE,
    METHOD_PROPORTION,
    METHOD_TEXT,
    caption_method,
)
from judgeaudit.vocab.study_b import CONTRASTED_CUES, CUES, NO_CUE, PROTOCOLS, TASKS

TASK_LABEL = {"single": "Single", "positional": "Positional", "conversation": "Conversation"}
TASK_ORDER = TASKS
CUE_ORDER = CUES
STATE_ORDER = ("111", "110", "101", "100", "011", "010", "001", "000")
STATE_COLORS = {"111": "#1a9850", "110": "#d73027", "101": "#91cf60", "100": "#fc8d59",
                "011": "#d9ef8b", "010": "#fee08b", "001": "#c7eae5", "000": "#7f7f7f"}


def _colname(task: str, protocol: str, cue: str) -> str:
    return f"{TASK_LABEL.get(task, task)} {protocol.capitalize()} {cue}"


def _caption(title: str, frame: pd.DataFrame, invalid: bool = True) -> str:
    methods = frame["method"].dropna().astype(str).tolist() if "method" in frame else []
    g = frame["n_clusters"].tolist() if "n_clusters" in frame else None
    parts = [title, caption_method(methods, g, unit="item (its two renderings / orders are "
                                   "one cluster)"),
             CELL_LEGEND.replace("n = valid trials (or pairs)", "n = valid trials or renderings")]
    if invalid:
        parts.append(INVALID_LEGEND)
    return ". ".join(parts) + "."


def accuracy_table(acc: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    j = acc[acc["protocol"].isin(PROTOCOLS)].copy()
    order = [_colname(t, p, c) for t in TASK_ORDER for p in PROTOCOLS
             for c in CUE_ORDER]
    j["column"] = [_colname(t, p, c) for t, p, c in zip(j["task"], j["protocol"], j["cue"],
                                                         strict=True)]
    j["cell"] = [fmt_rate_cell(r, invalid=True) for r in j.to_dict("records")]
    index = [c for c in ("corpus",) if c in j.columns] + ["judge"]
    wide = j.pivot_table(index=index, columns="column", values="cell",
                         aggfunc="first").reset_index()
    keep = [c for c in order if c in wide.columns]
    wide = wide[[*index, *keep]].fillna("-")
    tsv = j.drop(columns=["cell"]).sort_values(["judge", "task", "protocol", "cue"])
    write_table(wide, base, caption=_caption("Study B end-to-end accuracy", j), tsv_frame=tsv)
    return wide


def gap_table(gap: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    g = gap.copy()
    sided = g["one_sided"] if "one_sided" in g else pd.Series([""] * len(g), index=g.index)
    g["Pairwise - Pointwise"] = [
        fmt_ci(e, lo, hi) + (" 1-sided" if isinstance(o, str) and o else "")
        for e, lo, hi, o in zip(g["estimate"], g["ci_low"], g["ci_high"], sided, strict=True)]
    for name in PROTOCOLS:
        if f"{name}_ci_low" in g:
            g[name] = [fmt_rate_cell({"estimate": r[name], "ci_low": r[f"{name}_ci_low"],
                                      "ci_high": r[f"{name}_ci_high"], "n": r[f"{name}_n"],
                                      "n_clusters": r[f"{name}_n_clusters"],
                                      "one_sided": r[f"{name}_one_sided"]})
                       for r in g.to_dict("records")]
    cols = ["judge", "task", "cue", "pointwise", "pairwise", "Pairwise - Pointwise", "pvalue",
            "n", "n_clusters"]
    show = g[[c for c in cols if c in g.columns]].sort_values(["task", "cue", "judge"])
    write_table(show, base, caption=(
        "Study B protocol gap: mean over items of per-item Pairwise - Pointwise accuracy; 95% "
        "CI: " + METHOD_TEXT[METHOD_DIFFERENCE] + ", each item one cluster (n = n_clusters = "
        "items valid under both protocols); the paired cluster bootstrap over items (BCa) is in "
        "the TSV (boot_low, boot_high). Per-protocol accuracies: "
        + caption_method([METHOD_PROPORTION], unit="item") + ". " + CELL_LEGEND),
        tsv_frame=gap)
    return show


def balance_table(bal: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    b = bal.copy()
    b["gap R1 - R0"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                        zip(b["gap"], b["gap_ci_low"], b["gap_ci_high"], strict=True)]
    b["|gap|"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                  zip(b["abs_gap"], b["abs_gap_ci_low"], b["abs_gap_ci_high"], strict=True)]
    show = b[["task", "metric", "mean_r0", "mean_r1", "gap R1 - R0", "|gap|", "n_items"]]
    write_table(show, base, caption=(
        "Study B reply balance: mean of each quality metric for R0 and R1, the gap R1 - R0 "
        "and the mean |R1 - R0| over items; 95% CI: " + METHOD_TEXT[METHOD_DIFFERENCE]
        + ", each item one cluster (rows of an item averaged first; for |gap| the mean "
        "with the same CR2 variance, lower bound cut at 0); the paired item bootstrap "
        "(BCa) of the gap is in the TSV (boot_low, boot_high)."), tsv_frame=bal)
    return show


def potemkin_table(pot: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    tidy = pot.copy()
    tidy["cell"] = [fmt_rate_cell(r, invalid=True) for r in tidy.to_dict("records")]
    if "reported" in tidy:  # the chance gate (stats.chance.gate_potemkin)
        unrep = tidy["reported"].astype(str).str.lower().eq("false")
        tidy.loc[unrep, "cell"] = "not reported: " + tidy.loc[unrep, "reason"].astype(str)
    wide = tidy.pivot_table(index=["judge", "task"], columns="metric", values="cell",
                            aggfunc="first").reset_index().fillna("-")
    wide.columns = [str(c) for c in wide.columns]
    write_table(wide, base, caption=_caption(
        "Study B probes per rendering: P, O, J rates, conditional Potemkin rate "
        "P(J=0 | P=1, O=1) (reported only when P is above chance and n(P=1, O=1) is "
        "large enough), staging accuracy", tidy), tsv_frame=tidy.drop(columns=["cell"]))
    return wide


CHANCE_ROW = "chance (uniform)"


def _with_chance(dist: pd.DataFrame, chance: pd.DataFrame | None) -> pd.DataFrame:
    """The observed distribution plus one pseudo-judge per task: the distribution
    expected from a judge answering P, O and J uniformly at random."""
    dist = dist.assign(state=dist["state"].astype(str).str.zfill(3))  # "010" read as 10
    if chance is None or chance.empty:
        return dist
    ch = chance.assign(state=chance["state"].astype(str).str.zfill(3), judge=CHANCE_ROW,
                       estimate=chance["chance"], ci_low=float("nan"), ci_high=float("nan"))
    return pd.concat([dist, ch[["judge", "task", "state", "estimate", "ci_low", "ci_high"]]],
                     ignore_index=True)


def states_table(dist: pd.DataFrame, chance: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """Observed state shares (Wilson 95% CI) per judge x task beside the chance row."""
    both = _with_chance(dist, chance)
    both["name"] = both["state"].map(lambda s: f"{s}")
    wide = both.assign(cell=[fmt_ci(e, lo, hi) if pd.notna(lo) else f"{e:.2f} (chance)"
                             for e, lo, hi in zip(both["estimate"], both["ci_low"],
                                                  both["ci_high"], strict=True)])
    wide = wide.pivot_table(index=["task", "judge"], columns="state", values="cell",
                            aggfunc="first").reset_index()
    wide.columns = [str(c) for c in wide.columns]
    keep = [s for s in STATE_ORDER if s in wide.columns]
    wide = wide[["task", "judge", *keep]].fillna("-")
    wide["_o"] = wide["judge"].eq(CHANCE_ROW)
    wide = wide.sort_values(["task", "_o", "judge"]).drop(columns="_o")
    write_table(wide, base, caption="Study B (P, O, J) state distribution per judge and task "
                "(Wilson 95% CI over renderings) beside the distribution expected from a judge "
                "answering every probe uniformly at random (P among the K classes, per scored "
                "turn; O and J between R1 and R2)", tsv_frame=both.drop(columns=["name"]))
    return wide


def states_figure(dist: pd.DataFrame, base: str | Path,
                  chance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Stacked bars (one bar per judge, plus the chance distribution of each task);
    returns the stacked height per task x judge (1.0 when every state was drawn)."""
    dist = _with_chance(dist, chance)
    tasks = [t for t in TASK_ORDER if t in set(dist["task"])]
    judges = sorted(set(dist["judge"]) - {CHANCE_ROW})
    judges += [CHANCE_ROW] if CHANCE_ROW in set(dist["judge"]) else []
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks) + 1.5, 3.2),
                             sharey=True, squeeze=False)
    heights = {}
    for ax, task in zip(axes[0], tasks, strict=True):
        d = dist[dist["task"] == task]
        bottom = np.zeros(len(judges))
        for s in STATE_ORDER:
            vals = np.array([float(d[(d["judge"] == j) & (d["state"] == s)]["estimate"]
                                   .fillna(0).sum()) for j in judges])
            ax.bar(range(len(judges)), vals, bottom=bottom, color=STATE_COLORS[s], label=s,
                   edgecolor="white", linewidth=0.4)
            bottom += vals
        heights[task] = dict(zip(judges, bottom, strict=True))
        ax.set_xticks(range(len(judges)), judges, rotation=45, ha="right")
        ax.set_title(TASK_LABEL.get(task, task) + _corpus_of(d))
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("share of renderings")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, [f"{lab} (P O J)" if i == 0 else lab for i, lab in enumerate(labels)],
               loc="center right", fontsize=7, title="state")
    fig.subplots_adjust(right=0.82)
    save_figure(fig, base)
    return pd.DataFrame(heights)


def _corpus_of(frame: pd.DataFrame) -> str:
    """` (corpus)` for a panel/column title when the rows name their corpus."""
    if "corpus" not in frame.columns or not len(frame):
        return ""
    # chance-baseline rows carry no corpus (pandas 3 keeps NaN through astype(str))
    names = sorted({str(c) for c in frame["corpus"].dropna()})
    return " (" + ", ".join(names) + ")" if names else ""


def heatmap_figure(pot: pd.DataFrame, gap: pd.DataFrame, cue: pd.DataFrame,
                   base: str | Path) -> pd.DataFrame:
    """Rows judges; columns task x {conditional Potemkin, protocol collapse
    (Pairwise - Pointwise, no cue), cue dependence (Pointwise, each contrasted cue - no
    cue)}."""
    cols, data = [], {}
    p = pot[pot["metric"] == "conditional_potemkin"]
    g = gap[gap["cue"] == NO_CUE]
    c = cue[cue["protocol"] == "pointwise"]
    tasks = [t for t in TASK_ORDER if t in set(pot["task"]) | set(gap["task"])]
    for task in tasks:
        # one cue-dependence column per contrasted cue the task ran (CONTRASTED_CUES)
        cues = [(f"cue dependence ({cue})", c[c["cue"] == cue])
                for cue in CONTRASTED_CUES if cue in set(c[c["task"] == task]["cue"])]
        for name, frame in (("Potemkin", p), ("protocol collapse", g), *cues):
            sub = frame[frame["task"] == task]
            col = f"{TASK_LABEL.get(task, task)}{_corpus_of(sub)}\n{name}"
            cols.append(col)
            data[col] = dict(zip(sub["judge"], sub["estimate"], strict=True))
    judges = sorted(set(pot["judge"]) | set(gap["judge"]))
    mat = pd.DataFrame({col: [data[col].get(j, np.nan) for j in judges] for col in cols},
                       index=judges)
    fig, ax = plt.subplots(figsize=(1.1 * len(cols) + 2, 0.45 * len(judges) + 1.6))
    im = ax.imshow(mat.to_numpy(dtype=float), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(judges)), judges)
    for i in range(len(judges)):
        for k in range(len(cols)):
            v = mat.iat[i, k]
            ax.text(k, i, "-" if np.isnan(v) else f"{v:.2f}", ha="center", va="center",
                    fontsize=7)
    fig.colorbar(im, ax=ax, fraction=0.03)
    save_figure(fig, base)
    return mat


__all__ = ["accuracy_table", "balance_table", "gap_table", "heatmap_figure", "potemkin_table",
           "states_figure", "states_table"]
