"""Validation of the stopping rule by the independent simulator (`simcheck`):
per scenario, many simulated audits with and without early stopping; the share of
each verdict, the units used and the coverage of the final interval of the true
mean (computed by the simulator, never by the estimator)."""

from __future__ import annotations

import numpy as np

from judgeaudit.audit import simcheck
from judgeaudit.audit.power import design_effect, fixed_n
from judgeaudit.audit.sequential import Design, run_sequential


def size_for(effect: float, alpha: float, power: float, sd: float, per_cluster: int,
             icc: float, sided: str) -> int:
    a = alpha / 2 if sided == "two" else alpha
    return fixed_n(effect, a, power, sd, design_effect(per_cluster, icc))


def replicate(kind: str, params: dict, *, n_max: int, per_cluster: int, stages: int,
              alpha: float, effect: float, sided: str, reps: int, seed: int,
              early_stop: bool, spending: str = "obf") -> dict:
    design = Design.make(n_max, stages, alpha, effect, sided, spending)
    truth = (simcheck.follow_truth(params["follow"], params["base"]) if kind == "follow"
             else simcheck.population_mean(kind, params))
    rng = np.random.default_rng(seed)
    n_clusters = -(-n_max // per_cluster)
    counts = {"shortcut": 0, "grounded": 0, "inconclusive": 0}
    units, covered = [], 0
    for _ in range(reps):
        if kind == "follow":
            d, cl = simcheck.follow_units(rng, n_clusters, per_cluster, **params)
        else:
            d, cl = simcheck.slot_units(rng, n_clusters, per_cluster, **params)
        r = run_sequential(d[:n_max], cl[:n_max].astype(str), design, early_stop=early_stop)
        counts[r["verdict"]] += 1
        units.append(r["units"])
        covered += int(r["ci_low"] <= truth <= r["ci_high"])
    return {"truth": truth, "reps": reps, "n_max": n_max,
            **{k: v / reps for k, v in counts.items()},
            "mean_units": float(np.mean(units)), "coverage": covered / reps,
            "interval_level": 1 - 2 * design.alpha}
