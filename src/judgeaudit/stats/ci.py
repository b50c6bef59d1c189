"""Binomial proportions with Wilson score intervals (statsmodels)."""

from __future__ import annotations

import math
from typing import Any

from statsmodels.stats.proportion import proportion_confint

METHOD_WILSON = "wilson"


def wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials; (nan, nan) when n == 0."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    lo, hi = proportion_confint(int(k), int(n), alpha=alpha, method="wilson")
    return (float(max(0.0, lo)), float(min(1.0, hi)))


def proportion(k: int, n: int, alpha: float = 0.05, n_invalid: int = 0) -> dict[str, Any]:
    """A tidy estimate row: estimate, ci_low, ci_high, n, k, n_invalid, method."""
    lo, hi = wilson(k, n, alpha)
    return {
        "estimate": (k / n) if n else math.nan,
        "ci_low": lo,
        "ci_high": hi,
        "n": int(n),
        "k": int(k),
        "n_invalid": int(n_invalid),
        "method": METHOD_WILSON,
    }
