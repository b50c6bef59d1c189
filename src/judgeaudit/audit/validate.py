"""Validation of the stopping rule by the independent simulator (`simcheck`):
per scenario, many simulated audits with and without early stopping; the share of
each verdict, the units used and the coverage of the final interval of the true
mean (computed by the simulator, never by the estimator)."""

from __future__ import annotations

import numpy as np

from judgeaudit.audit import simcheck
from judgeaudit.audit.power import design_effect, fixed_n
from judgeaudit.audit.sequential import Design, run_sequential


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


def simulate_protocol(contrasts: list[dict], *, stages: int, alpha: float, effect: float,
                      power: float, sd: float, icc: float, per_cluster: int,
                      trials_per_unit: int, shared_control: bool, rng: np.random.Generator,
                      early_stop: bool, spending: str = "obf") -> dict:
    """One simulated audit of one protocol, with the stopping logic of
    `judgeaudit.audit.run` (Bonferroni over contrasts; stop at the first shortcut or
    when every contrast is settled). `contrasts`: [{kind, params, sided}]. Calls:
    trials_per_unit per contrast unit, plus one shared control trial per unit of the
    largest contrast when `shared_control` (blueprint / reference)."""
    from judgeaudit.audit.sequential import clustered_mean, decide, small_sample_crit

    m = len(contrasts)
    a = alpha / m
    sims = []
    for c in contrasts:
        side_a = a / 2 if c["sided"] == "two" else a
        n_max = fixed_n(effect, side_a, power, sd, design_effect(per_cluster, icc))
        d = Design.make(n_max, stages, a, effect, c["sided"], spending)
        n_cl = -(-n_max // per_cluster)
        if c["kind"] == "follow":
            vals, cl = simcheck.follow_units(rng, n_cl, per_cluster, **c["params"])
        else:
            vals, cl = simcheck.slot_units(rng, n_cl, per_cluster, **c["params"])
        sims.append({"design": d, "vals": vals[:n_max], "cl": cl[:n_max].astype(str),
                     "verdict": None, "units": 0, "settled": False})
    n_stages = max(len(s["design"].looks) for s in sims) if early_stop else 1
    for stage in range(1, n_stages + 1):
        for s in sims:
            d = s["design"]
            looks = d.looks if early_stop else (d.looks[-1],)
            if s["settled"] or stage > len(looks):
                continue
            n = looks[stage - 1]
            est, se, df = clustered_mean(s["vals"][:n], s["cl"][:n])
            c = small_sample_crit(d.crit[stage - 1] if early_stop else d.fixed_crit(), df)
            v, _, _ = decide(est, se, c, d.effect, d.sided)
            s.update(units=n, verdict=v or "inconclusive",
                     settled=v is not None or stage == len(looks))
        if any(s["verdict"] == "shortcut" for s in sims) or all(s["settled"] for s in sims):
            break
    verdicts = [s["verdict"] or "inconclusive" for s in sims]
    verdict = ("shortcut" if "shortcut" in verdicts else
               "grounded" if all(v == "grounded" for v in verdicts) else "inconclusive")
    calls = sum(s["units"] for s in sims) * trials_per_unit
    fixed = sum(s["design"].n_max for s in sims) * trials_per_unit
    if shared_control:
        calls += max(s["units"] for s in sims)
        fixed += max(s["design"].n_max for s in sims)
    return {"verdict": verdict, "calls": calls, "fixed_calls": fixed}
