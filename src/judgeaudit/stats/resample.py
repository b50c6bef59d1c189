"""Cluster bootstrap of an arbitrary statistic, through `scipy.stats.bootstrap`.

The clusters (speakers, source clips) are the resampled units: scipy draws cluster
indices with replacement and the statistic is evaluated on the data in which
cluster g appears `counts[g]` times (so a statistic only needs per-row weights or
row repetition). BCa by default (scipy's jackknife then leaves one cluster out);
if BCa is undefined (degenerate replicates) the percentile interval is used and
the method says so.

Also: a design-effect-adjusted Wilson interval for a proportion of clustered
binary outcomes (ICC by the one-way ANOVA estimator; n_eff = n / DEFF), which
never has zero width at 0 or 1.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.stats import bootstrap
from statsmodels.stats.proportion import proportion_confint


def cluster_codes(clusters: Sequence) -> tuple[np.ndarray, list[str]]:
    """Integer code per row and the sorted cluster names."""
    names, codes = np.unique(np.asarray(list(clusters), dtype=object).astype(str),
                             return_inverse=True)
    return codes.astype(int), [str(n) for n in names]


def cluster_bootstrap_ci(stat: Callable[[np.ndarray], float], n_clusters: int,
                         n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05,
                         method: str = "BCa") -> dict[str, Any]:
    """CI of `stat(counts)` (counts[g] = times cluster g is drawn) by resampling
    clusters with `scipy.stats.bootstrap`. Returns ci_low, ci_high, method, n_clusters."""
    if n_clusters < 2:
        return {"ci_low": math.nan, "ci_high": math.nan, "n_clusters": int(n_clusters),
                "method": "cluster_bootstrap (fewer than 2 clusters: no interval)"}

    def statistic(idx, axis=-1):
        return stat(np.bincount(np.asarray(idx, dtype=int), minlength=n_clusters))

    data = (np.arange(n_clusters),)
    used = method
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bootstrap(data, statistic, vectorized=False, n_resamples=n_resamples,
                        confidence_level=1 - alpha, method=method,
                        rng=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if method != "percentile" and not (np.isfinite(lo) and np.isfinite(hi)):
            used = f"percentile ({method} undefined)"
            res = bootstrap(data, statistic, vectorized=False, n_resamples=n_resamples,
                            confidence_level=1 - alpha, method="percentile",
                            rng=np.random.default_rng(seed))
            lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (np.isfinite(lo) and np.isfinite(hi)):  # some resamples leave it undefined
            reps = np.asarray(res.bootstrap_distribution, dtype=float)
            ok = reps[np.isfinite(reps)]
            if ok.size >= 0.5 * reps.size:
                lo, hi = (float(q) for q in np.quantile(ok, [alpha / 2, 1 - alpha / 2]))
                used = (f"percentile over the {ok.size} of {reps.size} resamples where the "
                        "statistic is defined")
    return {"ci_low": lo, "ci_high": hi, "n_clusters": int(n_clusters),
            "method": f"cluster_bootstrap_{used} (scipy.stats.bootstrap, {n_clusters} clusters, "
                      f"{n_resamples} resamples)"}


def anova_icc(values: Sequence[float], clusters: Sequence) -> float:
    """One-way ANOVA estimator of the intra-cluster correlation (floored at 0; 0 when
    undefined, e.g. no within- or between-cluster variation)."""
    x = np.asarray(values, dtype=float)
    codes, names = cluster_codes(clusters)
    g, n = len(names), x.size
    if g < 2 or n <= g:
        return 0.0
    sizes = np.bincount(codes, minlength=g).astype(float)
    means = np.bincount(codes, weights=x, minlength=g) / sizes
    msb = float(np.sum(sizes * (means - x.mean()) ** 2) / (g - 1))
    msw = float(np.sum((x - means[codes]) ** 2) / (n - g))
    m0 = (n - np.sum(sizes ** 2) / n) / (g - 1)
    denom = msb + (m0 - 1) * msw
    if denom <= 0:
        return 0.0
    return float(max(0.0, (msb - msw) / denom))


def clustered_wilson(successes: Sequence[float], clusters: Sequence,
                     alpha: float = 0.05) -> dict[str, Any]:
    """Wilson interval (statsmodels proportion_confint, method="wilson") on the
    effective sample size n / DEFF, DEFF = 1 + (m - 1) ICC with m the mean cluster
    size and ICC the ANOVA estimate from the data."""
    x = np.asarray(successes, dtype=float)
    n = x.size
    if n == 0:
        return {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": 0,
                "n_clusters": 0, "icc": math.nan, "deff": math.nan, "method": "wilson_deff"}
    _, names = cluster_codes(clusters)
    icc = anova_icc(x, clusters)
    deff = 1 + (n / len(names) - 1) * icc
    n_eff = n / deff
    p = float(x.mean())
    lo, hi = proportion_confint(p * n_eff, n_eff, alpha=alpha, method="wilson")
    return {"estimate": p, "ci_low": float(max(0.0, lo)), "ci_high": float(min(1.0, hi)),
            "n": int(n), "n_clusters": len(names), "icc": icc, "deff": deff,
            "method": f"wilson on n_eff = n / DEFF (DEFF {deff:.2f}, ANOVA ICC {icc:.2f} over "
                      f"{len(names)} clusters)"}


__all__ = ["anova_icc", "cluster_bootstrap_ci", "cluster_codes", "clustered_wilson"]
