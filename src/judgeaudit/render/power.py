"""The pre-flight power table (`results/tables/power.{tsv,md,tex}`) from the power
report written beside the trials (`results/trials/power.tsv`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.render.tables import fmt_number, write_table
from judgeaudit.stats.power import METHOD_PAIRED, METHOD_TWO_PROP

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
    write_table(show, base, caption=caption, tsv_frame=frame)
    return show


__all__ = ["power_table"]
