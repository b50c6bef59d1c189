"""Validation of the audit's stopping rule by the independent simulator (`simcheck`):
simulated answers go through the product's own stopping loop
(`judgeaudit.audit.run.stopping_loop`: valid-answer scoring, the invalid-answer
rules, re-sizing after the first look, the looks and verdicts of
`judgeaudit.audit.sequential`), never a copy of it. Per scenario: the share of each
verdict, the calls used against the fixed design, and the coverage of the final
interval of the true mean (computed by the simulator, never by the estimator)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from judgeaudit.audit import simcheck
from judgeaudit.audit.battery import Contrast, Unit
from judgeaudit.audit.power import design_effect, fixed_n
from judgeaudit.audit.run import combine, stopping_loop
from judgeaudit.audit.sequential import Design


def _answers(sim: dict, kind: str, m: int) -> tuple[list[list[Unit]], dict, dict]:
    """Probe units (per contrast) and the answers / statuses of their trials, as the
    audit's battery would hold them (trial ids made up; target answer 'L' / 'A')."""
    cl = [str(c) for c in sim["cluster"]]
    answers: dict[str, str | None] = {}
    statuses: dict[str, str] = {}

    def put(tid: str, named: bool, valid: bool, yes: str, no: str) -> None:
        answers[tid] = (yes if named else no) if valid else None
        statuses[tid] = "valid" if valid else "invalid"

    units: list[list[Unit]] = []
    for j in range(m):
        us = []
        for i, c in enumerate(cl):
            if kind == "follow":
                cue, ctl = f"cue{j}:{i}", f"ctl{j}:{i}"
                put(cue, bool(sim["cue"][j, i]), bool(sim["cue_valid"][j, i]), "L", "x")
                put(ctl, bool(sim["control"][j, i]), bool(sim["control_valid"][j, i]), "L", "x")
                us.append(Unit(f"{j}:{i}", c, ((cue, "L", 1.0), (ctl, "L", -1.0))))
            else:
                ab, ba = f"ab{j}:{i}", f"ba{j}:{i}"
                put(ab, bool(sim["ab_is_a"][j, i]), bool(sim["ab_valid"][j, i]), "A", "B")
                put(ba, bool(sim["ba_is_a"][j, i]), bool(sim["ba_valid"][j, i]), "A", "B")
                us.append(Unit(f"{j}:{i}", c, ((ab, "A", 1.0), (ba, "A", 1.0)), -1.0))
        units.append(us)
    return units, answers, statuses


def simulate_protocol(contrasts: Sequence[Mapping], *, stages: int, alpha: float, effect: float,
                      power: float, sd: float, icc: float, n_clusters: int, per_cluster: int,
                      rng: np.random.Generator, early_stop: bool, spending: str = "obf",
                      shared_control: bool = False, invalid: float = 0.0,
                      invalid_plus: float | None = None, prop_icc: float = 0.2,
                      audit_options: Mapping | None = None, n_max: int | None = None) -> dict:
    """One simulated audit of one protocol through the product's stopping loop.
    `contrasts`: [{kind: follow|slot, params: {follow, base} | {first, second},
    sided}] (one kind per protocol). n_clusters x per_cluster units are available
    per contrast (in sampling order); the fixed design is sized as the audit sizes it
    (`icc` = the planning ICC of the design effect, `prop_icc` = the ICC of the
    simulated propensities). Returns the protocol verdict, calls used and the fixed
    design's calls, and each contrast's final state."""
    m = len(contrasts)
    kind = contrasts[0]["kind"]
    if kind == "follow":
        base = contrasts[0]["params"]["base"]
        sim = simcheck.follow_protocol(rng, n_clusters, per_cluster,
                                       [c["params"]["follow"] for c in contrasts], base,
                                       prop_icc, invalid, invalid_plus, shared_control)
    else:
        sim = simcheck.slot_protocol(rng, n_clusters, per_cluster,
                                     [(c["params"]["first"], c["params"]["second"]) for c in contrasts],
                                     prop_icc, invalid, invalid_plus)
    units, answers, statuses = _answers(sim, kind, m)
    if kind == "follow" and shared_control:  # one control trial per unit index
        for us in units[1:]:
            for i, u in enumerate(us):
                (cue, t, w), _ = u.terms
                us[i] = Unit(u.uid, u.cluster, ((cue, t, w), units[0][i].terms[1]))
    a = alpha / m
    pcs = []
    for j, c in enumerate(contrasts):
        side = a / 2 if c["sided"] == "two" else a
        nj = min(len(units[j]), n_max or fixed_n(effect, side, power, sd,
                                                 design_effect(per_cluster, icc)))
        d = Design.make(nj, stages, a, effect, c["sided"], spending)
        pcs.append({"contrast": Contrast("sim", f"c{j}", "", c["sided"], units[j]),
                    "units": units[j], "design": d, "alpha_side": side,
                    "size": {"n_max": nj, "n_fixed": nj, "capped": False}})
    cfg = {"power": power, **dict(audit_options or {})}
    fixed = {t for pc in pcs for u in pc["units"][: pc["design"].n_max] for t in u.trial_ids}
    seen = dict(statuses)
    statuses.clear()

    def fetch(need, stage):  # the answers exist already: reveal the ones asked for
        for ids in need.values():
            for t in ids:
                statuses[t] = seen[t]
        return False

    state = stopping_loop({"sim": {"contrasts": pcs, "trials": {}}}, early=early_stop, cfg=cfg,
                          answers=answers, statuses=statuses, fetch=fetch)["sim"]
    sts = [state[pc["contrast"].name] for pc in pcs]
    return {"verdict": combine([s["verdict"] for s in sts]), "calls": len(statuses),
            "fixed_calls": len(fixed), "contrasts": sts}


def replicate(kind: str, params: dict, *, n_max: int, per_cluster: int, stages: int,
              alpha: float, effect: float, sided: str, reps: int, seed: int,
              early_stop: bool, spending: str = "obf", prop_icc: float = 0.2,
              invalid: float = 0.0, available_per_cluster: int | None = None,
              audit_options: Mapping | None = None) -> dict:
    """Many simulated audits of one contrast whose fixed design is `n_max` units:
    verdict shares, mean units and the final interval's coverage of the truth."""
    truth = (simcheck.follow_truth(params["follow"], params["base"]) if kind == "follow"
             else simcheck.slot_truth(params["first"], params["second"]))
    rng = np.random.default_rng(seed)
    n_clusters = -(-n_max // per_cluster)
    per_avail = available_per_cluster or per_cluster
    counts = {"shortcut": 0, "grounded": 0, "inconclusive": 0, "undecided": 0}
    units, covered, level = [], 0, None
    for _ in range(reps):
        r = simulate_protocol([{"kind": kind, "params": params, "sided": sided}], stages=stages,
                              alpha=alpha, effect=effect, power=0.8, sd=0.5, icc=0.0,
                              n_clusters=n_clusters, per_cluster=per_avail, rng=rng,
                              early_stop=early_stop, spending=spending, prop_icc=prop_icc,
                              invalid=invalid, n_max=n_max,
                              audit_options={"resize": False, **dict(audit_options or {})})
        st = r["contrasts"][0]
        counts[r["verdict"]] += 1
        units.append(st["units"])
        covered += int(st["ci_low"] <= truth <= st["ci_high"])
        level = 1 - 2 * (alpha / 2 if sided == "two" else alpha)
    return {"truth": truth, "reps": reps, "n_max": n_max,
            **{k: v / reps for k, v in counts.items()},
            "mean_units": float(np.mean(units)), "coverage": covered / reps,
            "interval_level": level}
