"""Fixed-design size of one audit contrast (normal approximation).

A contrast is the mean over probe units of a paired difference D in [-1, 1]
(e.g. follow a wrong label with it minus say that label without it). The fixed
design that tests H0: mean <= 0 against mean = effect at one-sided level alpha
with the given power needs

    n = deff * ((z_{1-alpha} + z_{power}) * sd / effect)^2      (units),

deff = 1 + (m - 1) * icc for m units per cluster (the interval is clustered on
the trial's sampling unit). The grounded (equivalence) test of H0: mean >= effect
against mean = 0 is the mirror image and needs the same n.

Interface: `fixed_n(effect, alpha, power, sd, deff) -> int`. The project's power
report (`judgeaudit.stats.power`) is being rewritten as a simulation of the
printed estimator (branch h-power); once it exposes a size function for a paired
clustered difference, `plan_size` can call it instead (same arguments)."""

from __future__ import annotations

import math

from scipy.stats import norm


def design_effect(units_per_cluster: float, icc: float) -> float:
    """Kish design effect 1 + (m - 1) * icc (m = mean units per cluster)."""
    return 1.0 + max(0.0, float(units_per_cluster) - 1.0) * float(icc)


def fixed_n(effect: float, alpha: float, power: float, sd: float, deff: float = 1.0) -> int:
    """Units a fixed design needs (see the module docstring); at least 2."""
    if not 0 < effect <= 1:
        raise ValueError(f"audit effect must be in (0, 1], got {effect}")
    if not (0 < alpha < 0.5 and 0 < power < 1):
        raise ValueError(f"audit alpha must be in (0, 0.5) and power in (0, 1); got {alpha}, {power}")
    z = norm.ppf(1 - alpha) + norm.ppf(power)
    return max(2, math.ceil(deff * (z * sd / effect) ** 2))


def plan_size(effect: float, alpha: float, power: float, sd: float, deff: float,
              available: int) -> dict:
    """The fixed-design size, capped by the probe units the trial shards hold."""
    need = fixed_n(effect, alpha, power, sd, deff)
    return {"n_fixed": need, "n_available": int(available), "n_max": min(need, int(available)),
            "capped": need > available, "deff": round(deff, 4),
            "method": "normal approximation, one-sided z test of a paired clustered mean"}
