"""Cluster-aware estimates: the one interval every printed rate of both studies uses.

Trials are not independent: one clip is judged under several derangement seeds,
one speaker (voice) records many clips, one pair is judged in two orders, one
Study B item is rendered twice. Every function here takes the per-trial values and
the id of the coarsest real sampling unit each trial belongs to (speaker, source
clip, pair, item) and returns an `Estimate` whose interval reflects the variation
*between* those units. Pure functions: arrays in, `Estimate` out; no I/O, no
randomness except where a bootstrap is asked for (seeded).

Methods (the `method` token of each `Estimate`; `METHOD_TEXT` has the sentence a
table caption prints, taken from the method registry `stats/methods.py`). The variance is the bias-reduced cluster-robust CR2 variance
(Bell & McCaffrey 2002) with the Bell-McCaffrey Satterthwaite degrees of freedom
(`cr2_bm`; Imbens & Kolesar 2016, Pustejovsky & Tipton 2018); for equal cluster sizes
it equals CR1 (the intercept variance of statsmodels `OLS(y, 1).fit(cov_type=
"cluster")`, whose (n-1)/(n-k) factor is 1 for an intercept) and df = G - 1.

`clustered_proportion` -- "wilson_cr2_bm":
    p = sum(y) / n (the pooled, ratio-of-sums estimate) and its CR2 variance
    V = sum_g s_g^2 / (1 - n_g/n) / n^2 (s_g the residual total of cluster g). The
    design effect deff = V / (p(1-p)/n) turns n into an effective size n_eff = n/deff,
    and the interval is the Wilson score interval at n_eff with the critical value of
    Student's t on the Bell-McCaffrey df (about G-1; Korn & Graubard 1998's
    degrees-of-freedom-adjusted design-effect interval), so few clusters widen it.
    deff is NOT floored at 1: when the units of a cluster are negatively correlated
    (the two orders of a position-locked pair give one right and one wrong answer;
    two renderings of an item rarely share a Potemkin state) the between-cluster
    variance really is below the binomial one, and flooring it made those intervals
    over-cover (validation: 0.97-0.99). When every cluster has the same mean (V = 0
    with 0 < p < 1) deff is taken as 1. When p is exactly 0 or 1 the design effect is
    not estimable; then deff = 1 (Korn & Graubard's convention) and the interval is
    the one-sided 1-alpha Wilson bound [0, U] (or [L, 1]) on t(df), flagged in
    `one_sided`. The interval never has zero width while n > 0.

`clustered_mean` -- "t_cr2_bm": mean with the CR2 variance and a t(df_BM) interval,
    for non-binary per-trial values (e.g. per-item differences).

`clustered_difference` -- "paired_t_cr2_bm": paired contrast mean(y_a - y_b) over
    units valid in both, CR2 variance over clusters, t(df_BM) interval and two-sided
    p-value (the Wald test of a clustered OLS/GEE-independence intercept with the
    Bell-McCaffrey small-sample t reference; with one unit per cluster it is exactly
    the paired t test); for rates (values in [0, 1]) the interval is cut to
    [-1, 1]. When every difference is identical (variance 0)
    the p-value is the exact sign test over clusters (1.0 if the difference is 0)
    and, for rates, the interval is the one-sided bound on the share of units that
    differ (NaN for unbounded values).

`cluster_bootstrap_bca`: the ratio-of-sums mean with a BCa interval from
    `scipy.stats.bootstrap` resampling clusters (cluster sums and sizes paired);
    for statistics without a closed form.

Follow-rate helpers (Study A): `chance_normalised` maps a follow-rate Estimate
through RF~ = (RF - c)/(1 - c), c = 1/(K-1) (unclipped, so it never collapses to a
zero-width [0, 0]; the paper clips the point estimate at 0); `invalid_bounds` the follow rate if every invalid answer had been a follow
/ had not been.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgeaudit.stats.methods import METHODS, method_keys


def _sps():
    """scipy.stats, imported on first use (it costs ~1 s of CPU per process; the
    scoring scripts that import this module never call it)."""
    from scipy import stats

    return stats


METHOD_PROPORTION = "wilson_cr2_bm"
METHOD_MEAN = "t_cr2_bm"
METHOD_DIFFERENCE = "paired_t_cr2_bm"
METHOD_BCA = "cluster_bootstrap_bca"
METHOD_CLUSTER_PERCENTILE = "cluster_bootstrap_percentile"  # BCa undefined: the fallback
METHOD_UNCLUSTERED = "wilson"  # fewer than two clusters: plain Wilson, said so
METHOD_TWOWAY = "wilson_cgm_twoway"  # speaker x sentence (two-way) clustered proportion
TWOWAY_MIN_SENTENCES = 8  # a task crossing at least this many sentences gets the interval

# the sentence a caption prints per method: the method registry's (stats/methods.py),
# so captions and the report's methods section cannot disagree
METHOD_TEXT = {key: m.description for key, m in METHODS.items()}

FEW_CLUSTERS = 10  # below this many clusters a caption should say the variance is rough

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
    df: float = math.nan

    @property
    def width(self) -> float:
        return self.hi - self.lo

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
    c = np.asarray(clusters)
    if c.shape != (n,):
        raise ValueError(f"{what}: {c.size} cluster ids for {n} values")
    if n == 0:
        return np.zeros(0, dtype=int), 0
    # integer ids group as they are (the power simulation's fast path), strings (a
    # NumPy str array) as they are; anything else by its string form
    _, codes = np.unique(c if c.dtype.kind in "iuU" else c.astype(object).astype(str),
                         return_inverse=True)
    return codes.astype(int), int(codes.max()) + 1


def _values(y: Sequence | np.ndarray, what: str, binary: bool = False) -> np.ndarray:
    x = np.asarray(y, dtype=float).ravel()
    if np.isnan(x).any():
        raise ValueError(f"{what}: values contain NaN; drop invalid rows first "
                         f"(count them as n_invalid)")
    if binary and x.size and not ((x == 0.0) | (x == 1.0)).all():  # np.isin, cheaper
        raise ValueError(f"{what}: values must be 0/1 (or bool), got {sorted(set(x))[:5]}")
    return x


def cr2_bm(y: np.ndarray, codes: np.ndarray, g: int) -> tuple[float, float]:
    """Bias-reduced (CR2, Bell & McCaffrey 2002) cluster-robust variance of the pooled
    mean sum(y)/n and its Bell-McCaffrey Satterthwaite degrees of freedom
    (Imbens & Kolesar 2016; Pustejovsky & Tipton 2018, working model: independence).

    For the intercept-only regression y = b + e the hat block of cluster g is
    H_gg = J/n (n_g x n_g), so the CR2 adjustment (I - H_gg)^(-1/2) multiplies the
    cluster's residual total s_g by (1 - h_g)^(-1/2), h_g = n_g/n:
        V = sum_g s_g^2 / (1 - h_g) / n^2.
    The df is (tr M)^2 / tr(M^2) with M = G'G, G's column g = (I - H)_{.,g} A_g 1 / n;
    M = diag(n_g/(1-h_g)) - u u', u_g = n_g / sqrt(n (1 - h_g)) (up to the factor
    1/n^2, which cancels). With equal cluster sizes V equals CR1 and df = G - 1.
    Returns (NaN, NaN) when G < 2."""
    n = y.size
    if g < 2 or n == 0:
        return math.nan, math.nan
    sizes = np.bincount(codes, minlength=g).astype(float)
    h = sizes / n
    s = np.bincount(codes, weights=y - y.mean(), minlength=g)
    v = float(np.sum(s ** 2 / (1.0 - h)) / n ** 2)
    d = sizes / (1.0 - h)
    u2 = sizes ** 2 / (n * (1.0 - h))
    tr = float(np.sum(d - u2))
    tr2 = float(np.sum(d ** 2) - 2 * np.sum(d * u2) + np.sum(u2) ** 2)
    df = tr * tr / tr2 if tr2 > 0 else float(g - 1)
    return v, df


def _t_sf(x: float, df: float) -> float:
    """Upper tail P(T > x) of Student's t on df degrees of freedom (scipy.special.stdtr,
    the function scipy.stats.t.sf evaluates, without the distribution's call overhead)."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


@functools.lru_cache(maxsize=4096)
def _tcrit(alpha: float, df: float, one_sided: bool = False) -> float:
    """Student t critical value on `df` degrees of freedom (normal when df is not a
    positive finite number, i.e. fewer than 2 clusters). Cached: the df depends on the
    cluster sizes only, so repeated calls on one design reuse it. Evaluated by the
    functions `scipy.stats.t.ppf` / `norm.ppf` evaluate (scipy.special.stdtrit /
    ndtri; the same value bit for bit, tests/test_stats_clustered.py) without the
    distribution's argument handling (~0.1 ms a call; unequal clusters change df on
    almost every call, so the cache rarely hits)."""
    from scipy.special import ndtri, stdtrit

    q = 1 - alpha if one_sided else 1 - alpha / 2
    if df is None or not math.isfinite(df) or df <= 0:
        return float(ndtri(q))
    return float(stdtrit(df, q))


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
        lo, hi = wilson_bounds(p, n, _tcrit(alpha, math.nan))
        return Estimate(p, lo, hi, n, g, METHOD_UNCLUSTERED, None, math.sqrt(p * (1 - p) / n),
                        1.0, float(n), k)
    # one CR2 pass: the df depends on the cluster sizes only (also used at the boundary)
    v, df = cr2_bm(y, codes, g)
    if p in (0.0, 1.0):
        crit = _tcrit(alpha, df, one_sided=True)  # z when g < 2
        lo, hi = wilson_bounds(p, n, crit)
        side = "upper" if p == 0.0 else "lower"
        lo, hi = (0.0, hi) if p == 0.0 else (lo, 1.0)
        method = METHOD_PROPORTION if g >= 2 else METHOD_UNCLUSTERED
        return Estimate(p, lo, hi, n, g, method, side, 0.0, 1.0, float(n), k, df=df)
    deff = v / (p * (1 - p) / n)  # not floored at 1: see the module docstring
    means = np.bincount(codes, weights=y, minlength=g) / np.bincount(codes, minlength=g)
    if not deff > 0 or np.ptp(means) <= 1e-12:
        # every cluster has the same mean (the residual sums are 0 up to rounding, e.g.
        # 2/7 and 2/7): no between-cluster variance is estimable, deff = 1, never a
        # zero-width interval from a rounding-level variance
        deff = 1.0
        v = p * (1 - p) / n
    n_eff = n / deff
    lo, hi = wilson_bounds(p, n_eff, _tcrit(alpha, df))
    return Estimate(p, lo, hi, n, g, METHOD_PROPORTION, None, math.sqrt(v), deff, n_eff, k,
                    df=df)


def twoway_proportion(successes: Sequence | np.ndarray, clusters_a: Sequence | np.ndarray,
                      clusters_b: Sequence | np.ndarray, alpha: float = 0.05) -> Estimate:
    """Share of successes with a two-way cluster-robust Wilson interval (method
    "wilson_cgm_twoway"): trials crossed in two sampling dimensions, e.g. speakers x the
    sentences they read, the interval generalising over both.

    Variance: Cameron, Gelbach & Miller (2011, J. Bus. Econ. Stat. 29(2)), V = V_a + V_b
    - V_ab, each term the one-way cluster-robust variance of the pooled mean on that
    partition (a, b and their intersection cells) with its small-sample factor
    G_k / (G_k - 1) (CGM's c_k = G_k/(G_k - 1) (n - 1)/(n - K), K = 1: the CR1 factor,
    as statsmodels' cov_cluster_2groups computes it). When V_a + V_b - V_ab is not
    positive the intersection term is left out (V_a + V_b, conservative). Critical value:
    Student's t on min(G_a, G_b) - 1 degrees of freedom (CGM sec. 2.4: the smaller
    dimension limits the information), in a Wilson score interval at n_eff = p(1-p)/V
    as `clustered_proportion` does; at p = 0 or 1 the one-sided Wilson bound at n.
    Fewer than 2 clusters in either dimension: NaN interval (not estimable)."""
    y = _values(successes, "twoway_proportion", binary=True)
    n = y.size
    ca, ga = _codes(clusters_a, n, "twoway_proportion (first dimension)")
    cb, gb = _codes(clusters_b, n, "twoway_proportion (second dimension)")
    if n == 0:
        return empty(METHOD_TWOWAY)
    k = float(y.sum())
    p = k / n
    g = min(ga, gb)
    if g < 2:
        return Estimate(p, math.nan, math.nan, n, g, METHOD_TWOWAY, None, math.nan, math.nan,
                        math.nan, k)
    df = float(g - 1)
    if p in (0.0, 1.0):
        lo, hi = wilson_bounds(p, n, _tcrit(alpha, df, one_sided=True))
        side = "upper" if p == 0.0 else "lower"
        lo, hi = (0.0, hi) if p == 0.0 else (lo, 1.0)
        return Estimate(p, lo, hi, n, g, METHOD_TWOWAY, side, 0.0, 1.0, float(n), k, df=df)
    v = twoway_variance(y - p, ca, ga, cb, gb)
    if not v > 0:
        v = p * (1 - p) / n
    deff = v / (p * (1 - p) / n)
    n_eff = n / deff
    lo, hi = wilson_bounds(p, n_eff, _tcrit(alpha, df))
    return Estimate(p, lo, hi, n, g, METHOD_TWOWAY, None, math.sqrt(v), deff, n_eff, k, df=df)


def twoway_variance(resid: np.ndarray, ca: np.ndarray, ga: int, cb: np.ndarray,
                    gb: int) -> float:
    """CGM's two-way variance of a pooled mean from its residuals (see
    `twoway_proportion`): sum over the partitions a, b (+) and a x b (-) of
    G/(G - 1) sum_g s_g^2 / n^2, s_g the residual total of cluster g."""
    n = resid.size

    def one(codes: np.ndarray, g: int) -> float:
        s = np.bincount(codes, weights=resid, minlength=g)
        return g / (g - 1) * float(np.sum(s * s)) / n ** 2 if g > 1 else 0.0

    _, cab = np.unique(ca.astype(np.int64) * gb + cb, return_inverse=True)
    va, vb, vab = one(ca, ga), one(cb, gb), one(cab, int(cab.max()) + 1)
    v = va + vb - vab
    return v if v > 0 else va + vb


def proportion_pvalue(est: Estimate, p0: float) -> float:
    """Two-sided p-value of H0: p = p0 dual to `clustered_proportion`'s interval: the
    Wilson interval at n_eff with critical value t(df) is exactly the set of p0 with
    |p - p0| <= t * sqrt(p0 (1 - p0) / n_eff), so p0 lies outside the 1 - alpha interval
    iff this p-value is below alpha (one-sided where the interval is, i.e. at an
    estimate of 0 or 1). Used by the power simulation to run Holm on the printed
    interval's own test."""
    if not (0.0 < p0 < 1.0):
        raise ValueError(f"proportion_pvalue: need 0 < p0 < 1, got {p0}")
    if est.n == 0 or not math.isfinite(est.estimate):
        return math.nan
    n_eff = est.n_eff if math.isfinite(est.n_eff) and est.n_eff > 0 else float(est.n)
    z = abs(est.estimate - p0) / math.sqrt(p0 * (1 - p0) / n_eff)
    df = est.df
    if math.isfinite(df) and df > 0:
        sf = _t_sf(z, df)
    else:
        sf = float(0.5 * math.erfc(z / math.sqrt(2)))
    return sf if est.one_sided else min(1.0, 2 * sf)


def clustered_mean(values: Sequence | np.ndarray, clusters: Sequence | np.ndarray | None = None,
                   alpha: float = 0.05) -> Estimate:
    """Pooled mean of real values with a CR2 standard error and a t interval on the
    Bell-McCaffrey df.
    A zero variance (all values equal) gives a zero-width interval: use
    `clustered_proportion` / `clustered_difference` for 0/1 data."""
    y = _values(values, "clustered_mean")
    n = y.size
    codes, g = _codes(clusters, n, "clustered_mean")
    if n == 0:
        return empty(METHOD_MEAN)
    m = float(y.mean())
    v, df = cr2_bm(y, codes, g)
    if not math.isfinite(v):
        return Estimate(m, math.nan, math.nan, n, g, METHOD_MEAN)
    se = math.sqrt(v)
    t = _tcrit(alpha, df)
    pv = 2 * _t_sf(abs(m) / se, df) if se > 0 else (1.0 if m == 0 else 0.0)
    return Estimate(m, m - t * se, m + t * se, n, g, METHOD_MEAN, None, se, pvalue=pv, df=df)


def clustered_difference(y_a: Sequence | np.ndarray, y_b: Sequence | np.ndarray,
                         clusters: Sequence | np.ndarray | None = None,
                         alpha: float = 0.05) -> Estimate:
    """Paired contrast mean(y_a - y_b): y_a[i], y_b[i] are the same unit (clip x seed,
    pair, item) under two conditions; clusters[i] its sampling unit. Returns the
    difference, a CR2 t interval on the Bell-McCaffrey df and the two-sided p-value
    in `pvalue`."""
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
    v, df = cr2_bm(d, codes, g)
    # rates (values in [0, 1]): a difference lies in [-1, 1] and the interval is cut there
    rates = bool(np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1)))
    lo_lim, hi_lim = (-1.0, 1.0) if rates else (-math.inf, math.inf)
    if g >= 2 and v > 0:
        se = math.sqrt(v)
        t = _tcrit(alpha, df)
        pv = 2 * _t_sf(abs(m) / se, df)
        return Estimate(m, max(lo_lim, m - t * se), min(hi_lim, m + t * se), n, g,
                        METHOD_DIFFERENCE, None, se, pvalue=pv, k=float(np.count_nonzero(d)),
                        df=df)
    # every difference identical (or one cluster): bound the share of units that
    # could differ from the observed common value by the one-sided Wilson bound at n
    if not rates:  # no bound on how far an unseen difference could lie: not estimable
        return Estimate(m, math.nan, math.nan, n, g, METHOD_DIFFERENCE, None, 0.0,
                        k=float(np.count_nonzero(d)))
    span = 1.0
    _, u = wilson_bounds(0.0, n, _tcrit(alpha, df if g >= 2 else 1.0, one_sided=True))
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
    name = METHOD_BCA if method == "BCa" else METHOD_CLUSTER_PERCENTILE
    return Estimate(m, lo, hi, n, g, name, None, float(res.standard_error))


# ------------------------------------------------------------------ bootstraps
def cluster_codes(clusters: Sequence) -> tuple[np.ndarray, list[str]]:
    """Integer code per row and the sorted cluster names."""
    names, codes = np.unique(np.asarray(list(clusters), dtype=object).astype(str),
                             return_inverse=True)
    return codes.astype(int), [str(n) for n in names]


def cluster_bootstrap_ci(stat: Callable[[np.ndarray], float], n_clusters: int,
                         n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05,
                         method: str = "BCa") -> dict[str, Any]:
    """CI of an arbitrary statistic `stat(counts)` (counts[g] = times cluster g is
    drawn; the statistic only needs per-row weights or row repetition) by resampling
    clusters with `scipy.stats.bootstrap` (BCa by default: scipy's jackknife then
    leaves one cluster out). If BCa is undefined (degenerate replicates) the
    percentile interval is used and the method says so. Returns ci_low, ci_high,
    method, n_clusters."""
    if n_clusters < 2:
        return {"ci_low": math.nan, "ci_high": math.nan, "n_clusters": int(n_clusters),
                "method": "cluster_bootstrap (fewer than 2 clusters: no interval)"}

    def statistic(idx, axis=-1):
        return stat(np.bincount(np.asarray(idx, dtype=int), minlength=n_clusters))

    data = (np.arange(n_clusters),)
    used = method
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _sps().bootstrap(data, statistic, vectorized=False, n_resamples=n_resamples,
                            confidence_level=1 - alpha, method=method,
                            rng=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if method != "percentile" and not (np.isfinite(lo) and np.isfinite(hi)):
            used = f"percentile ({method} undefined)"
            res = _sps().bootstrap(data, statistic, vectorized=False, n_resamples=n_resamples,
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


# ------------------------------------------------------------------ ICC design effect
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
    size and ICC the ANOVA estimate from the data (the model-based design effect the
    specialist accuracy table uses; the audit's rates use `clustered_proportion`)."""
    from statsmodels.stats.proportion import proportion_confint

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
    as wide (relative) as RF's and never zero-width (the paper clips the point value
    at 0)."""
    c = chance_level(k_classes)

    def f(x: float) -> float:
        return (x - c) / (1 - c) if math.isfinite(x) else math.nan

    return Estimate(f(rf.estimate), f(rf.lo), f(rf.hi), rf.n, rf.n_clusters,
                    f"{rf.method}+chance_normalised", rf.one_sided,
                    rf.se / (1 - c) if math.isfinite(rf.se) else math.nan, rf.deff, rf.n_eff,
                    rf.k, rf.pvalue)


def invalid_bounds(k: float, n_valid: int, n_invalid: int) -> tuple[float, float]:
    """The rate over all answers if every invalid answer had been a non-follow
    (lower) and a follow (upper): k/(n+m), (k+m)/(n+m)."""
    total = n_valid + n_invalid
    if total == 0:
        return (math.nan, math.nan)
    return (k / total, (k + n_invalid) / total)


def design_effect(y: Sequence | np.ndarray, clusters: Sequence | np.ndarray) -> float:
    """CR2 variance over the binomial variance p(1-p)/n (unclamped; NaN at p in {0,1})."""
    x = _values(y, "design_effect")
    codes, g = _codes(clusters, x.size, "design_effect")
    p = float(x.mean()) if x.size else math.nan
    if not (0 < p < 1):
        return math.nan
    return cr2_bm(x, codes, g)[0] / (p * (1 - p) / x.size)


def caption_method(methods: Sequence[str], n_clusters: Sequence[int] | None = None,
                   unit: str = "") -> str:
    """A caption sentence naming the interval method(s) and the clustering unit, with a
    warning when some cell rests on fewer than FEW_CLUSTERS clusters."""
    values = sorted({str(m) for m in methods if isinstance(m, str) and m})
    keys = list(dict.fromkeys(k for v in values for k in method_keys(v, strict=False)))
    unknown = [v for v in values if not method_keys(v, strict=False)]
    text = "; ".join([METHOD_TEXT[k] for k in keys] + unknown) or "no estimates"
    out = f"95% CI: {text}"
    if unit:
        out += f"; clusters = {unit}"
    if n_clusters is not None:
        g = [int(x) for x in n_clusters if x is not None and np.isfinite(x) and x > 0]
        if g and min(g) < FEW_CLUSTERS:
            out += (f"; some cells rest on only {min(g)} clusters (< {FEW_CLUSTERS}): the "
                    "small-sample t critical value widens them, but read them as rough")
    return out


__all__ = ["Estimate", "FEW_CLUSTERS", "METHOD_BCA", "METHOD_DIFFERENCE", "METHOD_MEAN",
           "METHOD_PROPORTION", "METHOD_TEXT", "METHOD_UNCLUSTERED", "ROW_FIELDS",
           "caption_method", "chance_level", "chance_normalised", "cluster_bootstrap_bca",
           "clustered_difference", "clustered_mean", "clustered_proportion",
           "proportion_pvalue",
           "cr2_bm", "cluster_bootstrap_ci",
           "cluster_codes", "anova_icc", "clustered_wilson",
           "design_effect", "empty", "invalid_bounds", "wilson_bounds", "METHOD_TWOWAY",
           "TWOWAY_MIN_SENTENCES", "twoway_proportion", "twoway_variance"]
