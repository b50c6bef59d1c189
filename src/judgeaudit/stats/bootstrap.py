"""Bootstrap intervals that respect repeated measures.

`cluster_bootstrap`: resample clusters (e.g. clips seen under several derangement
seeds or both pair orders) with replacement and recompute the pooled mean; the
percentile interval then reflects between-clip variation instead of treating
repeated judgments of one clip as independent.

`paired_bootstrap`: the difference of two paired measurements (same items under
two protocols/conditions), resampling items (or clusters of items) jointly.

Both use multinomial resampling weights over clusters, so the pooled mean of a
replicate is (w @ cluster_sums) / (w @ cluster_sizes): vectorised and exact for
the ratio-of-sums estimator.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

METHOD_CLUSTER = "cluster_bootstrap_percentile"
METHOD_PAIRED = "paired_bootstrap_percentile"


def _cluster_codes(clusters: Sequence | None, n: int) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n), n
    clusters = list(clusters)
    if len(clusters) != n:
        raise ValueError(f"bootstrap: {len(clusters)} cluster ids for {n} values")
    _, codes = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return codes, int(codes.max()) + 1 if n else 0


def _weights(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot)


def _percentile(reps: np.ndarray, alpha: float) -> tuple[float, float]:
    reps = reps[np.isfinite(reps)]
    if reps.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Pooled mean of `values` with a cluster-bootstrap percentile CI.

    `clusters[i]` names the cluster (e.g. clip id) of `values[i]`; None means every
    value is its own cluster (the ordinary bootstrap)."""
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError("cluster_bootstrap: values contain NaN; drop invalid rows first")
    n = x.size
    if n == 0:
        return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": 0,
                "n_clusters": 0, "method": METHOD_CLUSTER}
    codes, g = _cluster_codes(clusters, n)
    sums = np.bincount(codes, weights=x, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(float)
    w = _weights(g, n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ sums) / (w @ sizes)
    lo, hi = _percentile(reps, alpha)
    return {"estimate": float(x.mean()), "ci_low": lo, "ci_high": hi, "n": int(n),
            "n_clusters": g, "method": METHOD_CLUSTER}


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """mean(a) - mean(b) for paired measurements a[i], b[i] of the same item, with a
    percentile CI from resampling items (or `clusters` of items) jointly."""
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    if xa.shape != xb.shape:
        raise ValueError(f"paired_bootstrap: a has {xa.size} values, b has {xb.size}")
    if np.isnan(xa).any() or np.isnan(xb).any():
        raise ValueError("paired_bootstrap: values contain NaN; keep only pairs valid in both")
    n = xa.size
    if n == 0:
        return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": 0,
                "n_clusters": 0, "method": METHOD_PAIRED}
    codes, g = _cluster_codes(clusters, n)
    d = np.bincount(codes, weights=xa - xb, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(float)
    w = _weights(g, n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ d) / (w @ sizes)
    lo, hi = _percentile(reps, alpha)
    return {"estimate": float(xa.mean() - xb.mean()), "ci_low": lo, "ci_high": hi,
            "n": int(n), "n_clusters": g, "method": METHOD_PAIRED}
