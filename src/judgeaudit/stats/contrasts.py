"""Paired contrasts: McNemar (statsmodels) and Holm's step-down correction."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

EXACT_BELOW = 25  # discordant pairs below which the exact binomial test is used


def mcnemar_paired(x: Sequence[bool | int], y: Sequence[bool | int]) -> dict[str, Any]:
    """McNemar's test for two paired binary outcomes x[i], y[i] of the same unit.

    Exact (binomial) when the discordant count b + c < 25, else the chi-square
    statistic with continuity correction, as statsmodels documents."""
    xa = np.asarray(x, dtype=int)
    ya = np.asarray(y, dtype=int)
    if xa.shape != ya.shape:
        raise ValueError(f"mcnemar_paired: x has {xa.size} values, y has {ya.size}")
    if not set(np.unique(np.concatenate([xa, ya]))).issubset({0, 1}):
        raise ValueError("mcnemar_paired: outcomes must be binary (0/1)")
    table = np.array([
        [int(np.sum((xa == 1) & (ya == 1))), int(np.sum((xa == 1) & (ya == 0)))],
        [int(np.sum((xa == 0) & (ya == 1))), int(np.sum((xa == 0) & (ya == 0)))],
    ])
    b, c = int(table[0, 1]), int(table[1, 0])
    n = int(xa.size)
    out = {"n": n, "b": b, "c": c, "p_x": float(xa.mean()) if n else math.nan,
           "p_y": float(ya.mean()) if n else math.nan}
    if b + c == 0:
        return {**out, "statistic": math.nan, "pvalue": 1.0, "method": "mcnemar_no_discordant"}
    exact = (b + c) < EXACT_BELOW
    res = mcnemar(table, exact=exact, correction=True)
    return {**out, "statistic": float(res.statistic), "pvalue": float(res.pvalue),
            "method": "mcnemar_exact" if exact else "mcnemar_chi2_cc"}


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Holm-adjusted p-values and rejections; NaN p-values stay NaN / False."""
    p = np.asarray(pvalues, dtype=float)
    adj = np.full(p.shape, math.nan)
    rej = np.zeros(p.shape, dtype=bool)
    ok = np.isfinite(p)
    if ok.any():
        r, padj, _, _ = multipletests(p[ok], alpha=alpha, method="holm")
        adj[ok] = padj
        rej[ok] = r
    return [float(v) for v in adj], [bool(v) for v in rej]
