"""Study A's tables (Paper A's Tables II-IV and A.S1-A.S7: follow rates, cue
conflict, contrasts, planted vs estimated, capability, seed stability, two-way speaker x sentence) and figures,
built from the tidy metric tables with the generic renderers in
`judgeaudit.render.tables` / `judgeaudit.render.figures`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pandas as pd

from judgeaudit.registry import Table
from judgeaudit.render.figures import grouped_bars, save_figure, xy_errorbars
from judgeaudit.render.tables import (
    CELL_LEGEND,
    INVALID_LEGEND,
    fmt_ci,
    pivot_cells,
    simulation_note,
)
from judgeaudit.render.tables import write_table as _write_table_files
from judgeaudit.stats.clustered import (
    METHOD_DIFFERENCE,
    METHOD_PROPORTION,
    METHOD_TEXT,
    caption_method,
)
from judgeaudit.stats.corpus import population_clause
from judgeaudit.study_a.metrics import (
    CAPABILITY_TEST_TEXT,
    PLACEMENT_WALD_TEXT,
    TWOWAY_MIN_SENTENCES,
    capability_table,
    seed_stability,
)
from judgeaudit.vocab import study_a as vocab_a

RQ1 = list(vocab_a.BLUEPRINT_CONDITIONS)
WRONG = list(vocab_a.WRONG_BLUEPRINT_CONDITIONS)
PLACEMENTS = list(vocab_a.PLACEMENTS)
# the metrics (columns) of each table (vocab.study_a, as the outputs registry lists them)
CONFLICT = list(vocab_a.CONFLICT_SHARES)
PAIR_METRICS = list(vocab_a.PAIR_METRICS)
FOLLOW = list(vocab_a.FOLLOW_METRICS)
# row keys of every long table; a teammate's extra key column (e.g. `corpus`) is
# picked up automatically when the metric frame has it
KEYS = ["judge", "task"]
EXTRA_KEYS = ["corpus"]


# judge -> the published judge it simulates (configs/paper_a_twin.yaml), read from the
# planted table while `all_tables` writes: every table showing such a judge says so
_TWINS: dict[str, str] = {}
# the tasks with a two-way (speaker x sentence) row and where that table is, read from
# the two-way rows while the tables are written: the captions over them point to it
_TWOWAY: dict[str, object] = {"tasks": (), "where": ""}


def write_table(frame: pd.DataFrame, base, caption: str = "", digits: int = 2,
                tsv_frame: pd.DataFrame | None = None):
    note = simulation_note(frame if tsv_frame is None else tsv_frame, _TWINS)
    if note and "SIMULATION OF THE PUBLISHED FIGURES" not in caption:
        caption = f"{caption.rstrip('.')}. {note}." if caption else f"{note}."
    return _write_table_files(frame, base, caption, digits, tsv_frame)


def twins_of(planted: pd.DataFrame) -> dict[str, str]:
    """judge -> `simulates` (twin_of) from the planted table."""
    if "simulates" not in planted or not len(planted):
        return {}
    sim = planted[planted["simulates"].fillna("").astype(str) != ""]
    return dict(zip(sim["judge"].astype(str), sim["simulates"].astype(str), strict=True))


def _pooled(m: pd.DataFrame) -> pd.DataFrame:
    return m[m["seed"].astype(str) == "all"]


def _keys(d: pd.DataFrame) -> list[str]:
    return [k for k in EXTRA_KEYS if k in d.columns] + KEYS


def _caption(title: str, d: pd.DataFrame, invalid: bool = False, note: str = "") -> str:
    units = sorted({str(u) for u in d.get("cluster_unit", pd.Series(dtype=str)).dropna()
                    if str(u) and str(u) != "nan"})
    parts = [title, caption_method(d["method"].dropna().astype(str).tolist() if len(d) else [],
                                   d["n_clusters"].tolist() if "n_clusters" in d else None,
                                   unit=", ".join(units)), CELL_LEGEND]
    if invalid:
        parts.append(INVALID_LEGEND)
    population = _population(d)
    if population:  # speakers crossed with sentences (stats.corpus.sentences_by_task)
        parts.append(population)
    if note:
        parts.append(note)
    return ". ".join(parts) + "."


def _population(d: pd.DataFrame, point: bool = True) -> str:
    """What the rows' intervals are conditional on, per task (`stats.corpus.
    population_clause`), a task with a two-way row pointed to its table (`point`: the
    rows are rates, which Table A.S7 repeats with the two-way interval)."""
    if "n_sentences" not in d or not len(d):
        return ""
    if "task" not in d:
        return population_clause(d["n_sentences"])
    return population_clause(d["n_sentences"], d["task"], _TWOWAY["tasks"] if point else (),
                             str(_TWOWAY["where"]) if point else "")


def table_blueprint(metrics: pd.DataFrame, base: Path, entry: Table) -> None:
    d = _pooled(metrics)
    d = d[(d["family"] == "blueprint") & (d["metric"] == "accuracy")]
    write_table(pivot_cells(d, _keys(d), "condition", order=RQ1, invalid=True), base,
                _caption(entry.file_caption, d, invalid=True), tsv_frame=d)


def follow_frame(d: pd.DataFrame, conditions: list[str], names: Mapping[str, str]
                 ) -> pd.DataFrame:
    """Long table: one row per judge x task x condition; one column per metric of
    `names` (metric -> header, in order; e.g. accuracy, RF, rf_adj, RF~) side by side
    (invalid bounds in each follow cell)."""
    d = d[d["condition"].isin(conditions)]
    metrics = list(names)
    d = d[d["metric"].isin(metrics)]
    d = d.assign(col=d["metric"].map(names))
    keys = [*_keys(d), "condition"]
    wide = pivot_cells(d, keys, "col", order=[names[x] for x in metrics], invalid=True)
    if len(wide):
        rank = {c: i for i, c in enumerate(conditions)}
        wide = wide.sort_values([*keys[:-1], "condition"],
                                key=lambda s: s.map(rank) if s.name == "condition" else s)
    return wide.reset_index(drop=True)


def table_follow_blueprint(metrics: pd.DataFrame, base: Path, entry: Table) -> None:
    d = _pooled(metrics)
    d = d[(d["family"] == "blueprint") & d["condition"].isin(WRONG)]
    names = entry.columns
    write_table(follow_frame(d, WRONG, names), base,
                _caption(entry.file_caption,
                         d[d["metric"].isin([m for m in names if m != "accuracy"])],
                         invalid=True, note=entry.file_notes["note"]),
                tsv_frame=d[d["metric"].isin(list(names))])


FALLIBLE_PLACEMENTS = list(vocab_a.FALLIBLE_PLACEMENTS)


def reference_frame(d: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """Table III analogue: one row per judge x task x placement (and `match`); plain and
    fallible accuracy, RF, rf_adj and RF~ side by side."""
    d = d[d["condition"].isin([*PLACEMENTS, *FALLIBLE_PLACEMENTS, "match"])]
    d = d[d["metric"].isin(list(names))]
    fall = d["condition"].str.endswith(vocab_a.FALLIBLE_SUFFIX)
    d = d.assign(placement=d["condition"].str.removesuffix(vocab_a.FALLIBLE_SUFFIX),
                 col=d["metric"].map(names) + fall.map({True: " +fallible", False: ""}))
    order = [c for m in names for c in (names[m], names[m] + " +fallible")]
    keys = [*_keys(d), "placement"]
    wide = pivot_cells(d, keys, "col", order=order, invalid=True)
    if len(wide):
        rank = {c: i for i, c in enumerate([*PLACEMENTS, "match"])}
        wide = wide.sort_values(keys, key=lambda s: s.map(rank) if s.name == "placement"
                                else s)
    return wide.reset_index(drop=True)


def table_reference(metrics: pd.DataFrame, base: Path, entry: Table) -> None:
    d = _pooled(metrics)
    d = d[(d["family"] == "reference")]
    d = d[d["condition"].isin([*PLACEMENTS, *FALLIBLE_PLACEMENTS, "match"])]
    write_table(reference_frame(d, entry.columns), base,
                _caption(entry.file_caption, d, invalid=True, note=entry.file_notes["note"]),
                tsv_frame=d)


def table_conflict(metrics: pd.DataFrame, base: Path, entry: Table) -> None:
    d = _pooled(metrics)
    d = d[(d["family"] == "conflict") & d["metric"].isin(CONFLICT)]
    write_table(pivot_cells(d, [*_keys(d), "condition"], "metric", order=CONFLICT,
                            invalid=True), base,
                _caption(entry.file_caption, d, invalid=True), tsv_frame=d)


def table_pairwise(metrics: pd.DataFrame, base: Path, entry: Table) -> None:
    d = metrics[(metrics["family"] == "pairwise") & metrics["metric"].isin(PAIR_METRICS)]
    d = d.rename(columns={"condition": "format"}) if len(d) else d.assign(format=[])
    write_table(pivot_cells(d, [*_keys(d), "format"], "metric", order=PAIR_METRICS,
                            invalid=True), base,
                _caption(entry.file_caption, d, invalid=True,
                         note=_layout_note(d, entry.file_notes["joined_layout"])), tsv_frame=d)


def _layout_note(d: pd.DataFrame, note: str) -> str:
    """Which speaker-concat cells used the joined layout (per judge, `auto`): `note`
    with its {cells} filled ("" when none did)."""
    if "layout" not in d or not len(d):
        return ""
    lay = d[d["layout"].fillna("").astype(str).str.contains("joined")]
    cells = sorted({f"{j} {t}/{f}" + (" (mixed)" if "+" in str(x) else "")
                    for j, t, f, x in zip(lay["judge"], lay["task"], lay["format"],
                                          lay["layout"], strict=True)})
    if not cells:
        return ""
    return note.format(cells="; ".join(cells))


def table_contrasts(contrasts: pd.DataFrame, base: Path, entry: Table) -> None:
    cols = ["family", "role", "judge", "task", "contrast", "unit", "n", "n_clusters",
            "p_a", "p_b", "difference [95% CI]", "pvalue", "p_holm", "reject_holm"]
    show = contrasts.copy()
    if len(show):
        show["difference [95% CI]"] = [
            fmt_ci(e, lo, hi) + (" 1-sided" if isinstance(o, str) and o else "")
            for e, lo, hi, o in zip(show["estimate"], show["ci_low"], show["ci_high"],
                                    show["one_sided"], strict=True)]
        show = show[cols]
    else:
        show = pd.DataFrame(columns=cols)
    units = sorted({str(u) for u in contrasts.get("cluster_unit", pd.Series(dtype=str)).dropna()})
    caption = entry.file_caption.format(
        method=METHOD_TEXT[METHOD_DIFFERENCE],
        clusters=entry.file_notes["clusters"].format(units=", ".join(units)) if units else "",
        wald=PLACEMENT_WALD_TEXT)
    population = _population(contrasts, point=False)  # A.S7 holds rates, not contrasts
    if population:
        caption = f"{caption}. {population}"
    write_table(show, base, caption, digits=3, tsv_frame=contrasts)


def table_planted(planted: pd.DataFrame, base: Path, entry: Table) -> None:
    show = planted.copy()
    if len(show):
        show["estimate [95% CI]"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                                     zip(show["estimate"], show["ci_low"], show["ci_high"],
                                         strict=True)]
        cols = ["judge", "simulates", "knob", "task", "metric", "planted", "estimate [95% CI]", "ci_method",
                "n", "n_clusters", "n_invalid", "inside", "counted"]
        show = show[[c for c in cols if c in show.columns]]
        counted = planted[planted["counted"]] if "counted" in planted else planted
        share = counted["inside"].mean() if len(counted) else float("nan")
        caption = entry.file_caption.format(
            inside=int(counted["inside"].sum()), counted=len(counted), share=share,
            method=caption_method(planted["ci_method"].astype(str).tolist()),
            apart=len(planted) - len(counted))
        twins = sorted({str(x) for x in planted.get("simulates", pd.Series(dtype=str)).fillna("")
                        if str(x)})
        if twins:
            caption += entry.file_notes["twins"].format(twins=", ".join(twins))
    else:
        caption = entry.file_notes["empty"]
    write_table(show, base, caption, tsv_frame=planted)


def _controls(contrasts: pd.DataFrame) -> list[str]:
    if "role" not in contrasts or not len(contrasts):
        return []
    return sorted(set(contrasts.loc[contrasts["role"] == "control", "judge"].astype(str)))


def table_capability(metrics: pd.DataFrame, contrasts: pd.DataFrame, base: Path,
                     entry: Table) -> None:
    cap = capability_table(metrics, _controls(contrasts))
    d = _pooled(metrics)
    d = d[(d["family"] == "blueprint")
          & (((d["condition"] == "audio_only") & (d["metric"] == "accuracy"))
             | ((d["condition"] == "wrong_with_audio") & d["metric"].isin(list(FOLLOW))))]
    names = {"accuracy": "audio-only accuracy", "rf": "RF wrong+audio",
             "rf_norm": "RF~ wrong+audio", "rf_adj": "rf_adj wrong+audio"}
    d = d.assign(col=d["metric"].map(names))
    wide = pivot_cells(d, _keys(d), "col", order=list(names.values()))
    info = cap[["judge", "task", "role", "k", "chance"]].rename(
        columns={"k": "K", "chance": "chance 1/K"}).round(3)
    show = info.merge(wide, on=["judge", "task"], how="left") if len(cap) else wide
    test = contrasts[contrasts["family"] == "capability_dependence"] if "family" in contrasts \
        else contrasts.iloc[0:0]
    if len(test):
        t = test.iloc[0]
        verdict = (entry.file_notes["verdict"].format(
                       tau=t["estimate"], p=t["pvalue"], n=int(t["n"]),
                       judges=int(t["n_clusters"]))
                   if pd.notna(t["pvalue"]) else
                   entry.file_notes["not_computed"].format(
                       why=str(t["method"]).split(":")[-1].replace("_", " "), n=int(t["n"])))
    else:
        verdict = entry.file_notes["no_cells"]
    caption = entry.file_caption.format(
        method=caption_method(d["method"].dropna().astype(str).tolist() or
                              [METHOD_PROPORTION], d["n_clusters"].tolist(),
                              unit=", ".join(sorted({str(u) for u in d["cluster_unit"]}))),
        test=CAPABILITY_TEST_TEXT, verdict=verdict)
    # the TSV holds the traceable seed-pooled metric rows behind each cell (K and the
    # chance level in their `k` column); the MD adds K, 1/K and the role per judge x task
    write_table(show, base, caption, tsv_frame=d.drop(columns=["col"]))


def table_seed_stability(metrics: pd.DataFrame, base: Path, entry: Table) -> None:
    d = seed_stability(metrics)
    if len(d):
        d = d.assign(col=["pooled" if str(x) == "all" else f"seed {x}" for x in d["seed"]])
        seeds = sorted({c for c in d["col"] if c != "pooled"}, key=lambda c: int(c.split()[1]))
        keys = [*_keys(d), "condition", "metric"]
        wide = pivot_cells(d, keys, "col", order=[*seeds, "pooled"])
        spread = d.drop_duplicates(keys).set_index(keys)[["seed_spread", "seed_sd"]]
        wide = wide.join(spread.round(3), on=keys)
        rank = {c: i for i, c in enumerate(WRONG)}
        wide = wide.sort_values(keys, key=lambda s: s.map(rank) if s.name == "condition"
                                else s).reset_index(drop=True)
    else:
        wide = pd.DataFrame(columns=["judge", "task", "condition", "metric", "pooled"])
    write_table(wide, base, _caption(entry.file_caption, d if len(d) else metrics.iloc[0:0]),
                tsv_frame=d.drop(columns=["col", "seed_spread", "seed_sd", "n_seeds"],
                                 errors="ignore"))


def table_twoway(twoway: pd.DataFrame, metrics: pd.DataFrame, base: Path,
                 entry: Table) -> None:
    """Table A.S7: each two-way (speaker x sentence) row beside the speaker-clustered
    interval of the same cell (the seed-pooled metric row)."""
    keys = ["judge", "task", "family", "condition", "metric"]
    cols = [*[k for k in EXTRA_KEYS if k in twoway.columns], *keys, "two-way [95% CI]",
            "speaker-clustered [95% CI]", "n", "n_speakers", "n_sentences"]
    if not len(twoway):
        ks = _pooled(metrics)
        ks = ks[ks["family"].isin(vocab_a.CLS_SHARDS)] if "family" in ks else ks
        counts = (ks.drop_duplicates("task").set_index("task")["n_sentences"]
                  if "n_sentences" in ks else pd.Series(dtype=float))
        tasks = ", ".join(f"{t}: {int(k)} sentences" if pd.notna(k) else f"{t}: none crossed"
                          for t, k in sorted(counts.items())) or "no classification task"
        write_table(pd.DataFrame(columns=cols), base, entry.file_notes["empty"].format(
            min_sentences=TWOWAY_MIN_SENTENCES, tasks=tasks) + ".", tsv_frame=twoway)
        return
    pooled = _pooled(metrics).drop_duplicates(keys).set_index(keys)
    show = twoway.copy()
    show["two-way [95% CI]"] = [fmt_ci(e, lo, hi) for e, lo, hi in
                                zip(show["estimate"], show["ci_low"], show["ci_high"],
                                    strict=True)]
    idx = pd.MultiIndex.from_frame(show[keys].astype(str))
    pooled.index = pooled.index.map(lambda t: tuple(map(str, t)))
    near = pooled.reindex(idx)
    show["speaker-clustered [95% CI]"] = [
        fmt_ci(e, lo, hi) if pd.notna(e) else "-"
        for e, lo, hi in zip(near["estimate"], near["ci_low"], near["ci_high"], strict=True)]
    caption = entry.file_caption.format(
        min_sentences=TWOWAY_MIN_SENTENCES,
        method=caption_method(twoway["method"].astype(str).tolist()))
    beside = near["method"].dropna().astype(str).tolist()
    if beside:
        caption += "; " + entry.file_notes["beside"].format(
            method=caption_method(beside, near["n_clusters"].tolist(),
                                  unit=", ".join(sorted(set(near["cluster_unit"].dropna()
                                                            .astype(str))))))
    write_table(show[cols], base, caption + ".", digits=3, tsv_frame=twoway)


@contextlib.contextmanager
def twoway_tasks(twoway: pd.DataFrame, where: str) -> Iterator[None]:
    """While the tables are written, the captions over a task with a two-way row (the
    two-way table's rows) point to `where`, the table holding them."""
    tasks = sorted(set(twoway["task"].astype(str))) if "task" in twoway and len(twoway) else []
    _TWOWAY.update({"tasks": tuple(tasks), "where": where})
    try:
        yield
    finally:
        _TWOWAY.update({"tasks": (), "where": ""})


@contextlib.contextmanager
def simulated_twins(planted: pd.DataFrame) -> Iterator[None]:
    """While the tables are written, every table showing a judge that simulates a
    published one (the planted table's `simulates`) says so in its caption."""
    _TWINS.clear()
    _TWINS.update(twins_of(planted))
    try:
        yield
    finally:
        _TWINS.clear()


def _panel_corpus(m: pd.DataFrame) -> pd.DataFrame:
    """Figure panels name their corpus: task -> `task (corpus)`."""
    if "corpus" not in m.columns:
        return m
    return m.assign(task=m["task"].astype(str) + " (" + m["corpus"].astype(str) + ")")


def follow_by_placement_figure(metrics: pd.DataFrame, base: Path) -> None:
    d = _pooled(_panel_corpus(metrics))
    ref = d[(d["family"] == "reference") & (d["metric"] == "rf")]
    # plain and fallible bars side by side per placement (x: system, system_fallible, ...)
    x_order = [c for p in PLACEMENTS for c in (p, p + vocab_a.FALLIBLE_SUFFIX)]
    save_figure(grouped_bars(ref, "condition", "judge", panel="task", x_order=x_order,
                             ylabel="reference-follow rate RF (95% CI)",
                             title="RQ2 (plain / _fallible)"), base)


def accuracy_by_blueprint_figure(metrics: pd.DataFrame, base: Path) -> None:
    d = _pooled(_panel_corpus(metrics))
    acc = d[(d["family"] == "blueprint") & (d["metric"] == "accuracy")]
    save_figure(grouped_bars(acc, "condition", "judge", panel="task", x_order=RQ1,
                             ylabel="accuracy (95% CI)", title="RQ1"), base)


def lock_vs_g_figure(metrics: pd.DataFrame, base: Path) -> None:
    metrics = _panel_corpus(metrics)
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
                             hline=0.5), base)


def capability_figure(metrics: pd.DataFrame, base: Path) -> None:
    """Audio-only accuracy (x) vs RF under wrong_with_audio (y) per judge (colour) and
    task (marker), 95% CIs both ways; a dotted line at each task's chance level 1/K."""
    cap = capability_table(_panel_corpus(metrics))
    fig = xy_errorbars(cap.dropna(subset=["audio_only", "rf"]), "audio_only", "rf", "judge",
                       "task", xlabel="audio-only accuracy (95% CI); dotted: chance 1/K",
                       ylabel="RF with audio, wrong_with_audio (95% CI)",
                       title="Capability dependence")
    ax = fig.axes[0]
    for task, chance in cap.dropna(subset=["chance"]).groupby("task")["chance"].first().items():
        ax.axvline(chance, ls=":", lw=1, color="grey")
        ax.text(chance, 1.0, f" 1/K {task}", fontsize=7, color="grey", va="top", rotation=90)
    save_figure(fig, base)
