"""Holm's step-down multiplicity correction (statsmodels `multipletests`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from statsmodels.stats.multitest import multipletests


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
