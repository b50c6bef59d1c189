"""Group-sequential stopping for the audit's contrasts.

Design: K equally spaced looks at n_k = ceil(k * n_max / K) probe units (n_max = the
fixed-design size). At each look the contrast's mean difference and its
cluster-robust standard error give a repeated confidence interval (Jennison &
Turnbull 1989)

    [est - c_k' * se, est + c_k' * se],

c_k' the Student-t quantile on G - 1 degrees of freedom (G clusters at the look)
with the tail probability of the normal boundary c_k,

with c_k the Lan-DeMets alpha-spending critical values (O'Brien-Fleming-type
spending alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)) by default, Pocock-type
alpha * log(1 + (e - 1) t) on request), computed from the canonical joint normal
law Corr(Z_j, Z_k) = sqrt(t_j / t_k) with SciPy's multivariate normal CDF.

Verdict rule at look k (one-sided level alpha per test; `two`-sided contrasts use
alpha/2 per side):
- shortcut: the interval excludes the null 0 in the shortcut direction (H0: no
  excess over the matched control is rejected);
- grounded: the interval lies inside (-effect, effect) (`two`) or below effect
  (`greater`): the configured effect is ruled out (equivalence bound = effect);
- otherwise continue; at the last look, inconclusive.
Each test's boundary is computed as if the audit ran to n_max, so stopping early
for the other test can only lower its rejection probability: P(shortcut | no
excess) <= alpha and P(grounded | excess = effect) <= alpha. Both claims are
checked by an independent simulator (`judgeaudit.audit.simcheck`,
benchmarks/audit_stopping.py)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.stats import multivariate_normal, norm
from scipy.stats import t as student_t

SPENDING = ("obf", "pocock")


def spend(t: float, alpha: float, kind: str = "obf") -> float:
    """Cumulative type-I error spent at information fraction t (Lan & DeMets 1983)."""
    t = min(max(float(t), 0.0), 1.0)
    if t == 0:
        return 0.0
    if kind == "obf":
        return float(2.0 - 2.0 * norm.cdf(norm.ppf(1.0 - alpha / 2.0) / math.sqrt(t)))
    if kind == "pocock":
        return float(alpha * math.log(1.0 + (math.e - 1.0) * t))
    raise ValueError(f"unknown spending function {kind!r}; known: {SPENDING}")


def boundaries(fractions: Sequence[float], alpha: float, kind: str = "obf") -> list[float]:
    """One-sided critical values c_1..c_K for information fractions t_1 < ... < t_K = 1:
    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = alpha(t_k) - alpha(t_{k-1})
    under H0 (Lan-DeMets; joint normal CDF by SciPy's Genz integration)."""
    return list(_boundaries(tuple(round(float(x), 12) for x in fractions), float(alpha), kind))


@functools.lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float, kind: str) -> tuple[float, ...]:
    t = [float(x) for x in fractions]
    if any(b <= a for a, b in zip(t, t[1:], strict=False)) or not 0 < t[0] or abs(t[-1] - 1) > 1e-9:
        raise ValueError(f"information fractions must increase to 1, got {t}")
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    crit: list[float] = []
    prev = 0.0
    for k in range(len(t)):
        target = spend(t[k], alpha, kind) - prev
        prev += target
        if k == 0:
            crit.append(float(norm.ppf(1.0 - target)))
            continue
        sub = cov[: k + 1, : k + 1]
        mvn_prev = multivariate_normal(mean=np.zeros(k), cov=cov[:k, :k], seed=0)
        mvn = multivariate_normal(mean=np.zeros(k + 1), cov=sub, seed=0)
        cont = float(mvn_prev.cdf(np.array(crit)))  # P(no stop before look k)

        def excess(c: float, cont=cont, mvn=mvn, target=target) -> float:
            return cont - float(mvn.cdf(np.array([*crit, c]))) - target

        crit.append(float(brentq(excess, -1.0, 12.0, xtol=1e-6)))
    return tuple(round(c, 5) for c in crit)


@dataclass(frozen=True)
class Design:
    """Looks (units at each stage) and their critical values for one contrast."""

    n_max: int
    looks: tuple[int, ...]
    crit: tuple[float, ...]
    alpha: float  # one-sided level of each of the two tests (per side for `two`)
    effect: float
    sided: str  # "greater" | "two"
    spending: str

    @classmethod
    def make(cls, n_max: int, stages: int, alpha: float, effect: float, sided: str = "greater",
             spending: str = "obf") -> Design:
        if sided not in ("greater", "two"):
            raise ValueError(f"sided must be 'greater' or 'two', got {sided!r}")
        n_max = max(1, int(n_max))
        looks = sorted({max(1, math.ceil(k * n_max / stages)) for k in range(1, stages + 1)})
        a = alpha / 2.0 if sided == "two" else alpha
        crit = boundaries([n / n_max for n in looks], a, spending)
        return cls(n_max, tuple(looks), tuple(crit), float(a), float(effect), sided, spending)

    def fixed_crit(self) -> float:
        """Critical value of the fixed design at n_max (no interim looks)."""
        return float(norm.ppf(1.0 - self.alpha))


def small_sample_crit(c: float, df: float) -> float:
    """The Student-t quantile on `df` degrees of freedom with the normal boundary's
    tail probability (1 - Phi(c)): the critical value used at a look, so few clusters
    widen the interval (df = G - 1 for G clusters)."""
    if not math.isfinite(df) or df <= 0:
        return c
    return float(student_t.ppf(norm.cdf(c), df))


def clustered_mean(values: Sequence[float], clusters: Sequence[str]) -> tuple[float, float, float]:
    """Mean of the unit differences and its standard error: CR1 cluster-robust
    (G/(G-1) * sum_g (sum_{i in g} (d_i - mean))^2 / n^2), or the unit-level
    variance with fewer than 2 clusters, floored at 2/n^2 (the variance two
    disagreeing units would add), so n units that all agree still get an interval
    of half-width c * sqrt(2) / n. Returns (mean, se, df) with df = G - 1 (n - 1
    without clusters)."""
    d = np.asarray(values, dtype=float)
    n = d.size
    if n == 0:
        return math.nan, math.inf, 0.0
    est = float(d.mean())
    resid = d - est
    labels = np.asarray([str(c) for c in clusters])
    uniq, inv = np.unique(labels, return_inverse=True)
    g = uniq.size
    if g >= 2:
        sums = np.bincount(inv, weights=resid, minlength=g)
        var = g / (g - 1) * float(np.sum(sums**2)) / n**2
        df = float(g - 1)
    else:
        var = float(np.sum(resid**2)) / max(1, n - 1) / n
        df = float(n - 1)
    var = max(var, 2.0 / n**2)
    return est, math.sqrt(var), df


def decide(est: float, se: float, c: float, effect: float, sided: str) -> tuple[str | None, float, float]:
    """(verdict or None to continue, interval low, interval high) at one look. The
    interval is reported clipped to [-1, 1], the range of a unit difference (the
    thresholds lie inside it, so clipping never changes a verdict)."""
    lo, hi = max(-1.0, est - c * se), min(1.0, est + c * se)
    if sided == "two":
        if lo > 0 or hi < 0:
            return "shortcut", lo, hi
        if lo > -effect and hi < effect:
            return "grounded", lo, hi
        return None, lo, hi
    if lo > 0:
        return "shortcut", lo, hi
    if hi < effect:
        return "grounded", lo, hi
    return None, lo, hi


def run_sequential(values: Sequence[float], clusters: Sequence[str], design: Design,
                   early_stop: bool = True) -> dict:
    """Apply the design to units in their sampling order (values[i] is unit i's
    difference). Returns verdict, estimate, interval, stage, units used. With
    early_stop=False: the fixed design (one look at n_max, fixed critical value)."""
    if early_stop:
        looks, crit = design.looks, design.crit
    else:
        looks, crit = (design.looks[-1],), (design.fixed_crit(),)
    out: dict = {}
    for stage, (n, c) in enumerate(zip(looks, crit, strict=True), 1):
        n = min(n, len(values))
        est, se, df = clustered_mean(values[:n], clusters[:n])
        c = small_sample_crit(c, df)
        verdict, lo, hi = decide(est, se, c, design.effect, design.sided)
        out = {"verdict": verdict or "inconclusive", "estimate": est, "se": se,
               "ci_low": lo, "ci_high": hi, "crit": c, "stage": stage,
               "n_stages": len(looks), "units": n, "stopped_early": False}
        if verdict is not None:
            out["stopped_early"] = stage < len(looks)
            return out
    return out
