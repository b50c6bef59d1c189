"""The pre-flight power table (`results/tables/power.{tsv,md,tex}`) from the power
report written beside the trials (`results/trials/power.tsv`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.io import write_text_atomic
from judgeaudit.render.tables import fmt_number, write_table
from judgeaudit.stats.power import headline

CAPTION = ("Power per tested cell, by simulating the printed estimator at the cell's own "
           "design ({replicates} replicates; clusters = the unit its printed interval "
           "clusters on) with Holm over the test's family (cells x audited judges, every "
           "member at the target effect); two-sided alpha {alpha:g}. Cluster rates Beta "
           "with ICC: {sources}. MDE: smallest effect reaching power {power:g} at the "
           "Bonferroni level alpha/m (conservative for Holm). Closed form: one-sample "
           "Cohen's h at n_eff (statsmodels NormalIndPower) or TTestPower on item "
           "differences, unadjusted. WARN = power after Holm below {power:g}; SHORT = the "
           "corpus delivered fewer than configured.")


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
        "study": f["study"], "task": f["task"], "cell": f["cell"], "test": f["test"],
        "G": f["n_clusters"], "unit": f["cluster_unit"], "units": f["n_units"],
        "m": f["family_size"], "ICC": f["icc_used"].astype(float),
        "target": f["target_effect"],
        "power (Holm)": f["power_holm"].astype(float),
        "Bonferroni": f["power_bonferroni"].astype(float),
        "closed form": f["closed_form_power"].astype(float),
        "MDE": [fmt_number(v) if pd.notna(v) else "none" for v in f["mde_bonferroni"]],
        "check": [flag(r) for _, r in f.iterrows()],
    })
    first = f.iloc[0]
    sources = "; ".join(sorted({f"{s} ({'ICC ' + format(float(i), 'g') if s == 'configured icc' else 'from the pilot deff'})"
                                for s, i in zip(f["variance_source"], f["icc_configured"],
                                                strict=True)}))
    caption = CAPTION.format(power=float(first["power"]), alpha=float(first["alpha"]),
                             replicates=int(first["replicates"]),
                             sources=f"{sources}; configured ICC source: {first['icc_source']}")
    paths = write_table(show, base, caption=caption, tsv_frame=frame)
    md = paths[1].read_text(encoding="utf-8") + "\n" + headline_text(frame) + "\n"
    write_text_atomic(paths[1], md)
    return show


def headline_text(frame: pd.DataFrame) -> str:
    """One sentence per test: power after Holm at the target effect (weakest and
    strongest cell), for the report's closing note."""
    parts = []
    for r in headline(frame).itertuples(index=False):
        parts.append(f"{r.test} ({r.target_effect}): power {r.min_power:.2f} in the weakest "
                     f"cell ({r.weakest_cell}) to {r.max_power:.2f} over {r.n_cells} cells")
    return ("Simulated power after Holm at the target effects: " + "; ".join(parts) + ".")


__all__ = ["headline_text", "power_table"]
