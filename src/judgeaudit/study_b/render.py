"""Study B tables and figures (the analogues of the paper's outputs).

Tables (TSV with full precision, n, n_clusters and n_invalid; Markdown and LaTeX
with `estimate [ci_low, ci_high] n=.. G=..` cells, G = items, the sampling unit):
- study_b_accuracy: rows judges; columns Single Pointwise none/soft/hard, Single
  Pairwise none/soft/hard, Positional Pointwise none/transition, Positional
  Pairwise none/transition (+ Conversation columns when that task runs);
  Text columns = the text-only baseline T (the pointwise request without audio)
  beside Pointwise and Pairwise for every task and cue;
- study_b_protocol_gap: Pairwise - Pointwise per judge x task x cue (p Holm per judge);
- study_b_text_gap: Pointwise - Text (J - T: what listening adds) per judge x task x
  cue, paired over items (p Holm per judge);
- study_b_balance: R0 vs R1 quality gaps per task and metric;
- study_b_potemkin: conditional and staged Potemkin rates, P, O, staging, J and T
  rates, and J successes that need no listening P(T=1 | J=1).
Figures: study_b_states (stacked bars of the 8 states per judge x task),
study_b_heatmap (conditional Potemkin rate, protocol collapse, cue dependence),
study_b_text_gap (J - T with its 95% CI per judge, one panel per task, one marker
per cue) and study_b_probes (P, O, staging, J and T rates with CIs per judge x task).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.render.figures import pyplot, save_figure
from judgeaudit.render.tables import (
    CELL_LEGEND,
    INVALID_LEGEND,
    fmt_ci,
    fmt_rate_cell,
)
from judgeaudit.render.tables import write_table as _write_table_files
from judgeaudit.stats.clustered import (
    METHOD_DIFFERENCE,
    METHOD_PROPORTION,
    METHOD_TEXT,
    caption_method,
)
from judgeaudit.stats.corpus import voice_clause
from judgeaudit.stats.methods import describe
from judgeaudit.study_b.chance import GATE_KEY
from judgeaudit.study_b.metrics import HOLM_KEY
from judgeaudit.vocab.study_b import (
    CHANCE_JUDGE,
    CONTRASTED_CUES,
    CUES,
    NO_CUE,
    PROTOCOLS,
    STATES,
    TASKS,
)

TASK_LABEL = {"single": "Single", "positional": "Positional", "conversation": "Conversation"}
TASK_ORDER = TASKS
CUE_ORDER = CUES
STATE_ORDER = STATES
STATE_COLORS = {"111": "#1a9850", "110": "#d73027", "101": "#91cf60", "100": "#fc8d59",
                "011": "#d9ef8b", "010": "#fee08b", "001": "#c7eae5", "000": "#7f7f7f"}


def voices_sentence(frame: pd.DataFrame) -> str:
    """What the rows' item-clustered intervals are conditional on: the voices the
    items are rendered with (`stats.corpus.voice_clause`, from the rows' `n_voices`,
    counted from the run's item files); "" without that column."""
    if "n_voices" not in frame or "task" not in frame or not len(frame):
        return ""
    return voice_clause(frame["n_voices"], frame["task"], frame.get("voice_per_item"),
                        frame.get("cluster_unit"))


def write_table(frame: pd.DataFrame, base: str | Path, caption: str = "", digits: int = 2,
                tsv_frame: pd.DataFrame | None = None) -> list[Path]:
    """`render.tables.write_table`, the caption ending with what the intervals are
    conditional on (`voices_sentence` of the long rows)."""
    voices = voices_sentence(frame if tsv_frame is None else tsv_frame)
    if voices:
        caption = f"{caption.rstrip('.')}. {voices}." if caption else f"{voices}."
    return _write_table_files(frame, base, caption, digits, tsv_frame)


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


def accuracy_table(accuracy: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    j = accuracy[accuracy["protocol"].isin(PROTOCOLS)].copy()
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
    write_table(wide, base, caption=_caption(
        "Study B end-to-end accuracy; Text = the text-only baseline T (the Pointwise "
        "request with its audio removed: same instruction, transcript and candidates; "
        "1/2 by construction for a judge answering the same request the same way)", j),
        tsv_frame=tsv)
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
            "p_holm", "n", "n_clusters"]
    show = g[[c for c in cols if c in g.columns]].sort_values(["task", "cue", "judge"])
    write_table(show, base, caption=(
        "Study B protocol gap: mean over items of per-item Pairwise - Pointwise accuracy; 95% "
        "CI: " + METHOD_TEXT[METHOD_DIFFERENCE] + ", each item one cluster (n = n_clusters = "
        "items valid under both protocols); the paired cluster bootstrap over items (BCa) is in "
        "the TSV (boot_low, boot_high). p_holm: " + describe(HOLM_KEY).description
        + ". Per-protocol accuracies: "
        + caption_method([METHOD_PROPORTION], unit="item") + ". " + CELL_LEGEND),
        tsv_frame=gap)
    return show


def text_gap_table(text_gap: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """Pointwise (J), Text (T) and J - T per judge x task x cue."""
    g = text_gap.copy()
    g["J - T"] = [fmt_ci(e, lo, hi) + (" 1-sided" if isinstance(o, str) and o else "")
                  for e, lo, hi, o in zip(g["estimate"], g["ci_low"], g["ci_high"],
                                          g["one_sided"].fillna("") if "one_sided" in g
                                          else [""] * len(g), strict=True)]
    for name in ("pointwise", "text"):
        g[name] = [fmt_rate_cell({"estimate": r[name], "ci_low": r[f"{name}_ci_low"],
                                  "ci_high": r[f"{name}_ci_high"], "n": r[f"{name}_n"],
                                  "n_clusters": r[f"{name}_n_clusters"],
                                  "one_sided": r[f"{name}_one_sided"]})
                   for r in g.to_dict("records")]
    cols = ["judge", "task", "cue", "pointwise", "text", "J - T", "pvalue", "p_holm", "n",
            "n_clusters"]
    show = g[[c for c in cols if c in g.columns]].sort_values(["task", "cue", "judge"])
    write_table(show, base, caption=(
        "Study B: what listening adds. J - T = mean over items of per-item Pointwise "
        "accuracy (with audio) - Text accuracy (the same request without its audio); "
        "95% CI: " + METHOD_TEXT[METHOD_DIFFERENCE] + ", each item one cluster (n = "
        "n_clusters = items valid under both); p_holm: " + describe(HOLM_KEY).description
        + ". A judge answering the text-only request the same "
        "way for both renderings of an item scores Text = 1/2 by construction. "
        "Per-protocol accuracies: " + caption_method([METHOD_PROPORTION], unit="item")
        + ". " + CELL_LEGEND), tsv_frame=text_gap)
    return show


def text_gap_figure(text_gap: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """J - T with its 95% CI per judge (rows), one panel per task, one marker per cue;
    returns the plotted estimates (judge x task|cue)."""
    tasks = [t for t in TASK_ORDER if t in set(text_gap["task"])]
    judges = sorted(set(text_gap["judge"]))
    fig, axes = pyplot().subplots(1, max(1, len(tasks)), figsize=(3.4 * max(1, len(tasks)) + 1,
                                                            0.45 * len(judges) + 1.6),
                             sharey=True, squeeze=False)
    marks = dict(zip(CUE_ORDER, ("o", "s", "^", "D"), strict=True))
    plotted = {}
    for ax, task in zip(axes[0], tasks, strict=False):
        d = text_gap[text_gap["task"] == task]
        cues = [c for c in CUE_ORDER if c in set(d["cue"])]
        for k, cue in enumerate(cues):
            sub = d[d["cue"] == cue].set_index("judge")
            y = np.arange(len(judges)) + (k - (len(cues) - 1) / 2) * 0.18
            est = np.array([sub["estimate"].get(j, np.nan) for j in judges], dtype=float)
            lo = np.array([sub["ci_low"].get(j, np.nan) for j in judges], dtype=float)
            hi = np.array([sub["ci_high"].get(j, np.nan) for j in judges], dtype=float)
            ax.errorbar(est, y, xerr=[est - lo, hi - est], fmt=marks.get(cue, "o"), ms=4,
                        capsize=2, lw=0.8, label=cue)
            plotted.update({(j, f"{task}|{cue}"): e for j, e in zip(judges, est, strict=True)})
        ax.axvline(0, color="#777", lw=0.6)
        ax.set_xlim(-1.05, 1.05)
        ax.set_title(TASK_LABEL.get(task, task) + _corpus_of(d), fontsize=9)
        ax.set_xlabel("J - T (Pointwise - Text)")
        ax.legend(fontsize=6, title="cue", title_fontsize=6, loc="lower right")
    axes[0][0].set_yticks(range(len(judges)), judges)
    save_figure(fig, base)
    return pd.Series(plotted, dtype=float).unstack() if plotted else pd.DataFrame()


PROBE_METRICS = (("probe_P", "P"), ("probe_O", "O"), ("staging_accuracy", "staging"),
                 ("probe_J", "J"), ("probe_T", "T"))


def probes_figure(potemkin: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """P, O, staging, J and T rates (95% CI over items) per judge, one panel per task:
    O (stated label, text) beside staging (P's own label, text) beside J (audio) shows
    the modality gap; returns the plotted estimates."""
    tasks = [t for t in TASK_ORDER if t in set(potemkin["task"])]
    judges = sorted(set(potemkin["judge"]))
    metrics = [(m, lab) for m, lab in PROBE_METRICS if m in set(potemkin["metric"])]
    fig, axes = pyplot().subplots(1, max(1, len(tasks)), figsize=(3.4 * max(1, len(tasks)) + 1.2,
                                                            3.2), sharey=True, squeeze=False)
    width = 0.8 / max(1, len(metrics))
    plotted = {}
    for ax, task in zip(axes[0], tasks, strict=False):
        d = potemkin[potemkin["task"] == task]
        for k, (m, lab) in enumerate(metrics):
            sub = d[d["metric"] == m].set_index("judge")
            x = np.arange(len(judges)) + (k - (len(metrics) - 1) / 2) * width
            est = np.array([sub["estimate"].get(j, np.nan) for j in judges], dtype=float)
            lo = np.array([sub["ci_low"].get(j, np.nan) for j in judges], dtype=float)
            hi = np.array([sub["ci_high"].get(j, np.nan) for j in judges], dtype=float)
            ax.bar(x, np.nan_to_num(est), width, label=lab)
            ax.errorbar(x, est, yerr=[est - lo, hi - est], fmt="none", ecolor="#333",
                        lw=0.7, capsize=1.5)
            plotted.update({(j, f"{task}|{lab}"): e for j, e in zip(judges, est, strict=True)})
        ax.set_xticks(range(len(judges)), judges, rotation=45, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_title(TASK_LABEL.get(task, task) + _corpus_of(d), fontsize=9)
    axes[0][0].set_ylabel("rate over renderings")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=7, title="probe")
    fig.subplots_adjust(right=0.85)
    save_figure(fig, base)
    return pd.Series(plotted, dtype=float).unstack() if plotted else pd.DataFrame()


def writer_ablation_table(ablation: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """Rows judge x task; columns the accuracy under each writer and their difference."""
    t = ablation.copy()
    acc = t[t["row"] == "accuracy"]
    dif = t[t["row"] == "difference"]
    cells = [{"judge": r["judge"], "task": r["task"], "column": f"Pointwise none, {r['writer']}",
              "cell": fmt_rate_cell(r, invalid=True)} for r in acc.to_dict("records")]
    cells += [{"judge": r["judge"], "task": r["task"], "column": r["writer"],
               "cell": fmt_ci(r["estimate"], r["ci_low"], r["ci_high"])
               + (" 1-sided" if isinstance(r.get("one_sided"), str) and r["one_sided"] else "")}
              for r in dif.to_dict("records")]
    frame = pd.DataFrame(cells)
    wide = frame.pivot_table(index=["task", "judge"], columns="column", values="cell",
                             aggfunc="first").reset_index().fillna("-")
    order = ([f"Pointwise none, {w}" for w in dict.fromkeys(acc["writer"])]
             + list(dict.fromkeys(dif["writer"])))
    wide = wide[["task", "judge", *[c for c in order if c in wide.columns]]]
    write_table(wide, base, caption=(
        "Study B writer swap: native Pointwise accuracy (cue none) per judge with the "
        "replies written by the run's writer and re-written by a second writer (same items, "
        "audio, reply order and question); accuracies: "
        + caption_method([METHOD_PROPORTION], unit="item") + "; difference: "
        + METHOD_TEXT[METHOD_DIFFERENCE] + ", each item one cluster. " + CELL_LEGEND),
        tsv_frame=ablation)
    return wide


def balance_table(balance: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    b = balance.copy()
    b["gap R1 - R0"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                        zip(b["gap"], b["gap_ci_low"], b["gap_ci_high"], strict=True)]
    b["|gap|"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                  zip(b["abs_gap"], b["abs_gap_ci_low"], b["abs_gap_ci_high"], strict=True)]
    cols = ["task", "metric", "mean_r0", "mean_r1", "gap R1 - R0", "|gap|", "n_items"]
    if "paper_gap" in b and b["paper_gap"].notna().any():
        b["paper |gap|"] = [f"{v:.2f}" if pd.notna(v) else "-" for v in b["paper_gap"]]
        b["above paper"] = [("yes" if str(v).lower() == "true" else "no") if pd.notna(p)
                            else "-" for v, p in zip(b["exceeds_paper"], b["paper_gap"],
                                                     strict=True)]
        cols += ["paper |gap|", "above paper"]
    show = b[cols]
    write_table(show, base, caption=(
        "Study B reply balance: mean of each quality metric for R0 and R1, the gap R1 - R0 "
        "and the mean |R1 - R0| over items; 95% CI: " + METHOD_TEXT[METHOD_DIFFERENCE]
        + ", each item one cluster (rows of an item averaged first; for |gap| the mean "
        "with the same CR2 variance, lower bound cut at 0); the paired item bootstrap "
        "(BCa) of the gap is in the TSV (boot_low, boot_high). llm_* = the LLM scorer's "
        "1-5 ratings (helpfulness, relevance, specificity, naturalness); 'above paper' "
        "flags a mean |gap| larger than the paper's (0.41 / 0.74 / 0.51 / 0.69). DNSMOS "
        "on the replies spoken in voices drawn per item (the same voice for R0 and R1)."),
        tsv_frame=balance)
    return show


def potemkin_table(potemkin: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    tidy = potemkin.copy()
    tidy["cell"] = [fmt_rate_cell(r, invalid=True) for r in tidy.to_dict("records")]
    if "reported" in tidy:  # the chance gate (study_b.chance.gate_potemkin)
        unrep = tidy["reported"].astype(str).str.lower().eq("false")
        tidy.loc[unrep, "cell"] = "not reported: " + tidy.loc[unrep, "reason"].astype(str)
    wide = tidy.pivot_table(index=["judge", "task"], columns="metric", values="cell",
                            aggfunc="first").reset_index().fillna("-")
    wide.columns = [str(c) for c in wide.columns]
    write_table(wide, base, caption=_caption(
        "Study B probes per rendering: P, O, staging, J and T (text-only) bit rates "
        "(probe_*, staging_accuracy), the conditional Potemkin rate P(J=0 | P=1, O=1) "
        "(conditional_potemkin), the staged Potemkin rate P(J=0 | P=1, staging=1) "
        "(staged_potemkin) and the J successes the transcript alone also gets "
        "P(T=1 | J=1) (j_no_listening). Chance gate: " + describe(GATE_KEY).description,
        tidy), tsv_frame=tidy.drop(columns=["cell"]))
    return wide


CHANCE_ROW = CHANCE_JUDGE


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


def states_table(distribution: pd.DataFrame, chance: pd.DataFrame,
                 base: str | Path) -> pd.DataFrame:
    """Observed state shares (Wilson 95% CI) per judge x task beside the chance row."""
    both = _with_chance(distribution, chance)
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


def states_figure(distribution: pd.DataFrame, base: str | Path,
                  chance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Stacked bars (one bar per judge, plus the chance distribution of each task);
    returns the stacked height per task x judge (1.0 when every state was drawn)."""
    distribution = _with_chance(distribution, chance)
    tasks = [t for t in TASK_ORDER if t in set(distribution["task"])]
    judges = sorted(set(distribution["judge"]) - {CHANCE_ROW})
    judges += [CHANCE_ROW] if CHANCE_ROW in set(distribution["judge"]) else []
    fig, axes = pyplot().subplots(1, len(tasks), figsize=(3.2 * len(tasks) + 1.5, 3.2),
                             sharey=True, squeeze=False)
    heights = {}
    for ax, task in zip(axes[0], tasks, strict=True):
        d = distribution[distribution["task"] == task]
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


def heatmap_figure(potemkin: pd.DataFrame, gap: pd.DataFrame, cue: pd.DataFrame,
                   base: str | Path) -> pd.DataFrame:
    """Rows judges; columns task x {conditional Potemkin, protocol collapse
    (Pairwise - Pointwise, no cue), cue dependence (Pointwise, each contrasted cue - no
    cue)}."""
    cols, data = [], {}
    p = potemkin[potemkin["metric"] == "conditional_potemkin"]
    g = gap[gap["cue"] == NO_CUE]
    c = cue[cue["protocol"] == "pointwise"]
    tasks = [t for t in TASK_ORDER if t in set(potemkin["task"]) | set(gap["task"])]
    for task in tasks:
        # one cue-dependence column per contrasted cue the task ran (CONTRASTED_CUES)
        cues = [(f"cue dependence ({cue})", c[c["cue"] == cue])
                for cue in CONTRASTED_CUES if cue in set(c[c["task"] == task]["cue"])]
        for name, frame in (("Potemkin", p), ("protocol collapse", g), *cues):
            sub = frame[frame["task"] == task]
            col = f"{TASK_LABEL.get(task, task)}{_corpus_of(sub)}\n{name}"
            cols.append(col)
            data[col] = dict(zip(sub["judge"], sub["estimate"], strict=True))
    judges = sorted(set(potemkin["judge"]) | set(gap["judge"]))
    mat = pd.DataFrame({col: [data[col].get(j, np.nan) for j in judges] for col in cols},
                       index=judges)
    fig, ax = pyplot().subplots(figsize=(1.1 * len(cols) + 2, 0.45 * len(judges) + 1.6))
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
           "probes_figure", "states_figure", "states_table", "text_gap_figure",
           "text_gap_table", "writer_ablation_table"]
