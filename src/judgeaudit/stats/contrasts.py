"""Holm's step-down multiplicity correction (statsmodels `multipletests`)."""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Sequence

import numpy as np


@contextlib.contextmanager
def _gc_frozen():
    """statsmodels' Holm branch ends with a full `gc.collect()`: with pandas, SciPy and
    statsmodels loaded that walks every live object (~30 ms a call; the validation
    study calls Holm once per replicate). `gc.freeze()` moves the objects alive now to
    the permanent generation that collections skip, `gc.unfreeze()` puts them back in
    the oldest generation: the collection then only walks objects made inside the
    block. Nothing computed changes. Left alone when the caller froze objects itself
    (unfreezing would release theirs too)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Holm-adjusted p-values and rejections; NaN p-values stay NaN / False."""
    # imported here: statsmodels (and the scipy.stats it loads) costs ~0.7 s per
    # process, and most importers of this module (e.g. the Study B scoring jobs, 40
    # in the default run) never call it
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float)
    adj = np.full(p.shape, math.nan)
    rej = np.zeros(p.shape, dtype=bool)
    ok = np.isfinite(p)
    if ok.any():
        with _gc_frozen():
            r, padj, _, _ = multipletests(p[ok], alpha=alpha, method="holm")
        adj[ok] = padj
        rej[ok] = r
    return [float(v) for v in adj], [bool(v) for v in rej]


def holm_reject(pvalues: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Holm's rejections of many families at once: row r of `pvalues` (R x m) is one
    family. The same step-down as `holm` (statsmodels `multipletests(method="holm")`:
    reject the k-th smallest p-value while every p_(j) <= alpha / (m - j + 1), j <= k),
    vectorised over rows for the power simulation (statsmodels' Holm runs a full
    `gc.collect()` per call). NaN p-values are never rejected."""
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 2:
        raise ValueError(f"holm_reject: need an R x m array, got shape {p.shape}")
    r, m = p.shape
    q = np.where(np.isfinite(p), p, np.inf)
    order = np.argsort(q, axis=1, kind="stable")
    ps = np.take_along_axis(q, order, axis=1)
    k = np.isfinite(p).sum(axis=1, keepdims=True)  # tests per family (NaN left out)
    thresh = alpha / np.maximum(k - np.arange(m)[None, :], 1)
    ok = np.cumprod(ps <= thresh, axis=1).astype(bool)
    out = np.zeros((r, m), dtype=bool)
    np.put_along_axis(out, order, ok, axis=1)
    return out
