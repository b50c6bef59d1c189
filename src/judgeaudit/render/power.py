"""The pre-flight power table (`results/tables/power.{tsv,md,tex}`) from the power
report written beside the trials (`results/trials/power.tsv`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.io import write_text_atomic
from judgeaudit.render.tables import fmt_number, write_table
from judgeaudit.stats.power import METHOD_PAIRED, METHOD_TWO_PROP, headline

CAPTION = ("Pre-flight power per cell: minimum detectable effect (MDE, rate difference from "
           "the baseline) at power {power:g} and two-sided alpha {alpha:g} before multiplicity "
           "correction, with n_eff = units / design effect (1 + (m - 1) ICC, ICC {icc:g}). "
           f"Rates: {METHOD_TWO_PROP}. Protocol gap: {METHOD_PAIRED}. "
           "WARN = MDE above the target; SHORT = the corpus delivered fewer than configured.")


def power_table(frame: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """Human table (one row per cell) plus the full-precision TSV."""
    if frame.empty:
        raise ValueError("power table: the power report has no cells (no trials built?)")
    f = frame.copy()

    def flag(r) -> str:
        out = [] if r["meets_target"] else ["WARN"]
        if r["shortfall"]:
            out.append(f"SHORT {int(r['delivered_n'])}/{int(r['configured_n'])}")
        return " ".join(out) or "ok"

    show = pd.DataFrame({
        "study": f["study"], "task": f["task"], "cell": f["cell"], "metric": f["metric"],
        "trials": f["n_trials"], "units": f["n_units"], "clusters": f["n_clusters"],
        "DEFF": f["deff"].astype(float), "n_eff": f["n_eff"].astype(float),
        "MDE": [fmt_number(v) if pd.notna(v) else "none" for v in f["mde"]],
        "target": [f"{e} (MDE <= {t:g})" for e, t in zip(f["target_effect"], f["mde_target"],
                                                          strict=True)],
        "power at target": f["power_at_target"].astype(float),
        "check": [flag(r) for _, r in f.iterrows()],
    })
    first = f.iloc[0]
    caption = CAPTION.format(power=float(first["power"]), alpha=float(first["alpha"]),
                             icc=float(first["icc"]))
    paths = write_table(show, base, caption=caption, tsv_frame=frame)
    md = paths[1].read_text(encoding="utf-8") + "\n" + headline_text(frame) + "\n"
    write_text_atomic(paths[1], md)
    return show


def headline_text(frame: pd.DataFrame) -> str:
    """One sentence per metric: power of the configured sizes at the target effect
    (weakest and strongest cell), for the report's closing note."""
    parts = []
    for r in headline(frame).itertuples(index=False):
        parts.append(f"{r.metric} ({r.target_effect}): power {r.min_power:.2f} in the weakest "
                     f"cell ({r.weakest_cell}) to {r.max_power:.2f} over {r.n_cells} cells")
    return "Power of the configured sizes at the target effects: " + "; ".join(parts) + "."


__all__ = ["headline_text", "power_table"]
