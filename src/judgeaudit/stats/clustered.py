"""Cluster-aware estimates: the one interval every printed rate of both studies uses.

Trials are not independent: one clip is judged under several derangement seeds,
one speaker (voice) records many clips, one pair is judged in two orders, one
Study B item is rendered twice. Every function here takes the per-trial values and
the id of the coarsest real sampling unit each trial belongs to (speaker, source
clip, pair, item) and returns an `Estimate` whose interval reflects the variation
*between* those units. Pure functions: arrays in, `Estimate` out; no I/O, no
randomness except where a bootstrap is asked for (seeded).

Methods (the `method` token of each `Estimate`; `METHOD_TEXT` has the sentence a
table caption prints):

`clustered_proportion` -- "wilson_cr1_deff":
    p = sum(y) / n (the pooled, ratio-of-sums estimate). Its cluster-robust (CR1)
    variance is  V = G/(G-1) * sum_g (s_g - p n_g)^2 / n^2  (s_g successes and n_g
    trials of cluster g), identical to the intercept variance of
    `statsmodels.OLS(y, 1).fit(cov_type="cluster")`. The design effect
    deff = max(1, V / (p(1-p)/n)) turns n into an effective size n_eff = n / deff,
    and the interval is the Wilson score interval at n_eff with the critical value
    of Student's t on G-1 degrees of freedom (Kott & Carr 1997; Korn & Graubard
    1998 degrees-of-freedom adjustment), so few clusters widen it. deff is never
    taken below 1 (a negative intra-cluster correlation is not trusted to narrow
    an interval). When p is exactly 0 or 1 the design effect is not estimable
    (V = 0); then deff = 1 (Korn & Graubard's convention) and the interval is the
    one-sided 1-alpha Wilson bound [0, U] (or [L, 1]), flagged in `one_sided`.
    The interval never has zero width while n > 0.

`clustered_mean` -- "t_cr1": mean with the same CR1 variance and a t(G-1)
    interval, for non-binary per-trial values (e.g. per-item differences).

`clustered_difference` -- "paired_t_cr1": paired contrast mean(y_a - y_b) over
    units valid in both, CR1 variance over clusters, t(G-1) interval and two-sided
    p-value (the Wald test of a clustered OLS/GEE-independence intercept with a
    small-sample t reference); for rates (values in [0, 1]) the interval is cut to
    [-1, 1]. When every difference is identical (variance 0)
    the p-value is the exact sign test over clusters (1.0 if the difference is 0)
    and, for rates, the interval is the one-sided bound on the share of units that
    differ (NaN for unbounded values).

`cluster_bootstrap_bca`: the ratio-of-sums mean with a BCa interval from
    `scipy.stats.bootstrap` resampling clusters (cluster sums and sizes paired);
    for statistics without a closed form.

Follow-rate helpers (Study A): `chance_normalised` maps a follow-rate Estimate
through RF~ = (RF - c)/(1 - c), c = 1/(K-1) (unclipped, so it never collapses to a
zero-width [0, 0]; the paper clips the estimate at 0, which `rf_tilde_paper`
gives); `invalid_bounds` the follow rate if every invalid answer had been a follow
/ had not been.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


def _sps():
    """scipy.stats, imported on first use (it costs ~1 s of CPU per process; the
    scoring scripts that import this module never call it)."""
    from scipy import stats

    return stats


METHOD_PROPORTION = "wilson_cr1_deff"
METHOD_MEAN = "t_cr1"
METHOD_DIFFERENCE = "paired_t_cr1"
METHOD_BCA = "cluster_bootstrap_bca"
METHOD_UNCLUSTERED = "wilson"  # fewer than two clusters: plain Wilson, said so

METHOD_TEXT = {
    METHOD_PROPORTION: ("Wilson score interval at the cluster-robust (CR1) effective sample "
                        "size n/deff with a t(G-1) critical value, G = number of clusters; "
                        "one-sided 95% bound where the estimate is 0 or 1"),
    METHOD_MEAN: "mean with cluster-robust (CR1) standard error and a t(G-1) interval",
    METHOD_DIFFERENCE: ("paired difference with cluster-robust (CR1) standard error, t(G-1) "
                        "interval and Wald t test over G clusters"),
    METHOD_BCA: "cluster bootstrap (resampling clusters), BCa interval (scipy.stats.bootstrap)",
    METHOD_UNCLUSTERED: "Wilson score interval (fewer than 2 clusters: not clustered)",
}

FEW_CLUSTERS = 10  # below this many clusters a caption should say the CR1 variance is rough

ROW_FIELDS = ("estimate", "ci_low", "ci_high", "n", "n_clusters", "method", "one_sided",
              "deff")


@dataclass(frozen=True)
class Estimate:
    """One estimate with its interval over the real sampling units.

    one_sided: None for a two-sided interval; "upper" when the estimate sits at the
    lower boundary (only the upper bound is informative, interval [lo, hi] with lo
    the boundary); "lower" at the upper boundary."""

    estimate: float
    lo: float
    hi: float
    n: int
    n_clusters: int
    method: str
    one_sided: str | None = None
    se: float = math.nan
    deff: float = math.nan
    n_eff: float = math.nan
    k: float = math.nan
    pvalue: float = math.nan

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def row(self) -> dict[str, Any]:
        """The tidy-table columns: estimate, ci_low, ci_high, n, n_clusters, method,
        one_sided ('' when two-sided), deff."""
        return {"estimate": self.estimate, "ci_low": self.lo, "ci_high": self.hi,
                "n": int(self.n), "n_clusters": int(self.n_clusters), "method": self.method,
                "one_sided": self.one_sided or "", "deff": self.deff}


def empty(method: str = METHOD_PROPORTION) -> Estimate:
    return Estimate(math.nan, math.nan, math.nan, 0, 0, method)


# ------------------------------------------------------------------ internals
def _codes(clusters: Sequence | np.ndarray | None, n: int, what: str) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n), n
    c = np.asarray(clusters, dtype=object)
    if c.shape != (n,):
        raise ValueError(f"{what}: {c.size} cluster ids for {n} values")
    if n == 0:
        return np.zeros(0, dtype=int), 0
    _, codes = np.unique(c.astype(str), return_inverse=True)
    return codes.astype(int), int(codes.max()) + 1


def _values(y: Sequence | np.ndarray, what: str, binary: bool = False) -> np.ndarray:
    x = np.asarray(y, dtype=float).ravel()
    if np.isnan(x).any():
        raise ValueError(f"{what}: values contain NaN; drop invalid rows first "
                         f"(count them as n_invalid)")
    if binary and x.size and not np.isin(x, (0.0, 1.0)).all():
        raise ValueError(f"{what}: values must be 0/1 (or bool), got {sorted(set(x))[:5]}")
    return x


def cr1_variance(y: np.ndarray, codes: np.ndarray, g: int) -> float:
    """CR1 cluster-robust variance of the pooled mean sum(y)/n:
    G/(G-1) * sum_g (sum_{i in g} (y_i - ybar))^2 / n^2 (NaN when G < 2)."""
    n = y.size
    if g < 2 or n == 0:
        return math.nan
    resid = np.bincount(codes, weights=y - y.mean(), minlength=g)
    return float(g / (g - 1) * np.sum(resid ** 2) / n ** 2)


def _tcrit(alpha: float, g: int, one_sided: bool = False) -> float:
    q = 1 - alpha if one_sided else 1 - alpha / 2
    return float(_sps().t.ppf(q, g - 1)) if g >= 2 else float(_sps().norm.ppf(q))


def wilson_bounds(p: float, n_eff: float, crit: float) -> tuple[float, float]:
    """Wilson score bounds for proportion p at (possibly non-integer) size n_eff with
    critical value `crit`."""
    c2 = crit * crit
    denom = 1 + c2 / n_eff
    centre = (p + c2 / (2 * n_eff)) / denom
    half = crit / denom * math.sqrt(max(p * (1 - p), 0.0) / n_eff + c2 / (4 * n_eff * n_eff))
    return max(0.0, centre - half), min(1.0, centre + half)


# ------------------------------------------------------------------ public estimators
def clustered_proportion(successes: Sequence | np.ndarray,
                         clusters: Sequence | np.ndarray | None = None,
                         alpha: float = 0.05) -> Estimate:
    """Share of successes (0/1 per trial) with a cluster-robust Wilson interval.

    `clusters[i]` is the sampling unit of trial i (e.g. speaker); None = every trial
    its own cluster. See the module docstring for the method."""
    y = _values(successes, "clustered_proportion", binary=True)
    n = y.size
    codes, g = _codes(clusters, n, "clustered_proportion")
    if n == 0:
        return empty(METHOD_PROPORTION)
    k = float(y.sum())
    p = k / n
    if g < 2 and 0.0 < p < 1.0:
        lo, hi = wilson_bounds(p, n, _tcrit(alpha, 0))
        return Estimate(p, lo, hi, n, g, METHOD_UNCLUSTERED, None, math.sqrt(p * (1 - p) / n),
                        1.0, float(n), k)
    if p in (0.0, 1.0):
        crit = _tcrit(alpha, g, one_sided=True)  # z when g < 2
        lo, hi = wilson_bounds(p, n, crit)
        side = "upper" if p == 0.0 else "lower"
        lo, hi = (0.0, hi) if p == 0.0 else (lo, 1.0)
        method = METHOD_PROPORTION if g >= 2 else METHOD_UNCLUSTERED
        return Estimate(p, lo, hi, n, g, method, side, 0.0, 1.0, float(n), k)
    v = cr1_variance(y, codes, g)
    deff = max(1.0, v / (p * (1 - p) / n))
    n_eff = n / deff
    lo, hi = wilson_bounds(p, n_eff, _tcrit(alpha, g))
    return Estimate(p, lo, hi, n, g, METHOD_PROPORTION, None, math.sqrt(v), deff, n_eff, k)


def clustered_mean(values: Sequence | np.ndarray, clusters: Sequence | np.ndarray | None = None,
                   alpha: float = 0.05) -> Estimate:
    """Pooled mean of real values with a CR1 standard error and a t(G-1) interval.
    A zero variance (all values equal) gives a zero-width interval: use
    `clustered_proportion` / `clustered_difference` for 0/1 data."""
    y = _values(values, "clustered_mean")
    n = y.size
    codes, g = _codes(clusters, n, "clustered_mean")
    if n == 0:
        return empty(METHOD_MEAN)
    m = float(y.mean())
    v = cr1_variance(y, codes, g)
    if not math.isfinite(v):
        return Estimate(m, math.nan, math.nan, n, g, METHOD_MEAN)
    se = math.sqrt(v)
    t = _tcrit(alpha, g)
    pv = float(2 * _sps().t.sf(abs(m) / se, g - 1)) if se > 0 else (1.0 if m == 0 else 0.0)
    return Estimate(m, m - t * se, m + t * se, n, g, METHOD_MEAN, None, se, pvalue=pv)


def clustered_difference(y_a: Sequence | np.ndarray, y_b: Sequence | np.ndarray,
                         clusters: Sequence | np.ndarray | None = None,
                         alpha: float = 0.05) -> Estimate:
    """Paired contrast mean(y_a - y_b): y_a[i], y_b[i] are the same unit (clip x seed,
    pair, item) under two conditions; clusters[i] its sampling unit. Returns the
    difference, a t(G-1) CR1 interval and the two-sided p-value in `pvalue`."""
    a = _values(y_a, "clustered_difference(a)")
    b = _values(y_b, "clustered_difference(b)")
    if a.shape != b.shape:
        raise ValueError(f"clustered_difference: a has {a.size} values, b has {b.size}")
    d = a - b
    n = d.size
    codes, g = _codes(clusters, n, "clustered_difference")
    if n == 0:
        return empty(METHOD_DIFFERENCE)
    m = float(d.mean())
    v = cr1_variance(d, codes, g)
    # rates (values in [0, 1]): a difference lies in [-1, 1] and the interval is cut there
    rates = bool(np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1)))
    lo_lim, hi_lim = (-1.0, 1.0) if rates else (-math.inf, math.inf)
    if g >= 2 and v > 0:
        se = math.sqrt(v)
        t = _tcrit(alpha, g)
        pv = float(2 * _sps().t.sf(abs(m) / se, g - 1))
        return Estimate(m, max(lo_lim, m - t * se), min(hi_lim, m + t * se), n, g,
                        METHOD_DIFFERENCE, None, se, pvalue=pv, k=float(np.count_nonzero(d)))
    # every difference identical (or one cluster): bound the share of units that
    # could differ from the observed common value by the one-sided Wilson bound at n
    if not rates:  # no bound on how far an unseen difference could lie: not estimable
        return Estimate(m, math.nan, math.nan, n, g, METHOD_DIFFERENCE, None, 0.0,
                        k=float(np.count_nonzero(d)))
    span = 1.0
    _, u = wilson_bounds(0.0, n, _tcrit(alpha, max(g, 2), one_sided=True))
    w = u * (span + abs(m))  # |E d - m| <= P(d != m) * max|d - m|
    lo, hi = max(-span, m - w), min(span, m + w)
    side = None
    if m == 0:
        pv = 1.0
    else:
        pv = float(min(1.0, 2 * 0.5 ** g))  # exact sign test: every cluster the same sign
        if abs(m) == span:  # at the boundary of the possible range: one-sided
            side = "lower" if m > 0 else "upper"
    return Estimate(m, lo, hi, n, g, METHOD_DIFFERENCE, side, 0.0, pvalue=pv,
                    k=float(np.count_nonzero(d)))


def cluster_bootstrap_bca(values: Sequence | np.ndarray,
                          clusters: Sequence | np.ndarray | None = None,
                          alpha: float = 0.05, n_resamples: int = 1999,
                          seed: int = 0) -> Estimate:
    """Ratio-of-sums mean with a BCa interval from resampling clusters
    (`scipy.stats.bootstrap`, paired cluster sums and sizes). Falls back to the
    percentile interval when BCa is undefined (degenerate replicates)."""
    y = _values(values, "cluster_bootstrap_bca")
    n = y.size
    codes, g = _codes(clusters, n, "cluster_bootstrap_bca")
    if n == 0:
        return empty(METHOD_BCA)
    m = float(y.mean())
    if g < 2 or np.all(y == y[0]):
        return Estimate(m, math.nan, math.nan, n, g, METHOD_BCA)
    sums = np.bincount(codes, weights=y, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(float)

    def ratio(s, z, axis=-1):
        return np.sum(s, axis=axis) / np.sum(z, axis=axis)

    method = "BCa"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback
        res = _sps().bootstrap((sums, sizes), ratio, paired=True, vectorized=True,
                            n_resamples=n_resamples, confidence_level=1 - alpha,
                            method="BCa", random_state=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            method = "percentile"
            res = _sps().bootstrap((sums, sizes), ratio, paired=True, vectorized=True,
                                n_resamples=n_resamples, confidence_level=1 - alpha,
                                method="percentile", random_state=np.random.default_rng(seed))
            lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    name = METHOD_BCA if method == "BCa" else "cluster_bootstrap_percentile"
    return Estimate(m, lo, hi, n, g, name, None, float(res.standard_error))


# ------------------------------------------------------------------ follow rates
def chance_level(k_classes: int) -> float:
    """c = 1/(K-1): the follow rate of a judge answering at random among the K-1
    non-gold labels."""
    if k_classes < 3:
        raise ValueError(f"chance_level: need K >= 3 classes, got {k_classes}")
    return 1.0 / (k_classes - 1)


def chance_normalised(rf: Estimate, k_classes: int) -> Estimate:
    """RF~ = (RF - c)/(1 - c) with c = 1/(K-1), the RF interval mapped through the same
    increasing linear map. Unclipped (negative = below chance), so its interval is
    as wide (relative) as RF's and never zero-width; the paper's clipped point value
    is `rf_tilde_paper`."""
    c = chance_level(k_classes)

    def f(x: float) -> float:
        return (x - c) / (1 - c) if math.isfinite(x) else math.nan

    return Estimate(f(rf.estimate), f(rf.lo), f(rf.hi), rf.n, rf.n_clusters,
                    f"{rf.method}+chance_normalised", rf.one_sided,
                    rf.se / (1 - c) if math.isfinite(rf.se) else math.nan, rf.deff, rf.n_eff,
                    rf.k, rf.pvalue)


def rf_tilde_paper(rf: float, k_classes: int) -> float:
    """The paper's point value max(0, (RF - c)/(1 - c))."""
    if rf is None or not math.isfinite(rf):
        return math.nan
    c = chance_level(k_classes)
    return max(0.0, (rf - c) / (1 - c))


def invalid_bounds(k: float, n_valid: int, n_invalid: int) -> tuple[float, float]:
    """The rate over all answers if every invalid answer had been a non-follow
    (lower) and a follow (upper): k/(n+m), (k+m)/(n+m)."""
    total = n_valid + n_invalid
    if total == 0:
        return (math.nan, math.nan)
    return (k / total, (k + n_invalid) / total)


def design_effect(y: Sequence | np.ndarray, clusters: Sequence | np.ndarray) -> float:
    """CR1 variance over the binomial variance p(1-p)/n (unclamped; NaN at p in {0,1})."""
    x = _values(y, "design_effect")
    codes, g = _codes(clusters, x.size, "design_effect")
    p = float(x.mean()) if x.size else math.nan
    if not (0 < p < 1):
        return math.nan
    return cr1_variance(x, codes, g) / (p * (1 - p) / x.size)


def caption_method(methods: Sequence[str], n_clusters: Sequence[int] | None = None,
                   unit: str = "") -> str:
    """A caption sentence naming the interval method(s) and the clustering unit, with a
    warning when some cell rests on fewer than FEW_CLUSTERS clusters."""
    base = sorted({str(m).split("+")[0] for m in methods if isinstance(m, str) and m})
    text = "; ".join(METHOD_TEXT.get(m, m) for m in base) or "no estimates"
    out = f"95% CI: {text}"
    if unit:
        out += f"; clusters = {unit}"
    if n_clusters is not None:
        g = [int(x) for x in n_clusters if x is not None and np.isfinite(x) and x > 0]
        if g and min(g) < FEW_CLUSTERS:
            out += (f"; some cells rest on only {min(g)} clusters (< {FEW_CLUSTERS}): the "
                    "t(G-1) critical value widens them, but read them as rough")
    return out


__all__ = ["Estimate", "FEW_CLUSTERS", "METHOD_BCA", "METHOD_DIFFERENCE", "METHOD_MEAN",
           "METHOD_PROPORTION", "METHOD_TEXT", "METHOD_UNCLUSTERED", "ROW_FIELDS",
           "caption_method", "chance_level", "chance_normalised", "cluster_bootstrap_bca",
           "clustered_difference", "clustered_mean", "clustered_proportion", "cr1_variance",
           "design_effect", "empty", "invalid_bounds", "rf_tilde_paper", "wilson_bounds"]
