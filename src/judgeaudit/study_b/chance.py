"""Chance baselines for Study B's (P, O, J) states, and the gate on the conditional
Potemkin rate.

A judge answering at chance picks uniformly among the options of each probe,
independently: P among the task's K emotion classes (the probe's allowed answers;
positional: the P bit needs every turn of the scored span right, so its chance is
(1/K)^(number of scored turns): every user turn under the default P-bit scope
"trajectory", the shift span under "span"), O and J between R1 and R2 (1/2 each). The expected state
distribution is, per rendering, the product of the three Bernoulli laws, averaged
over the renderings of the task (so it sums to 1 by construction).

A non-listening judge can also beat 1/K on P by always giving the most frequent
class (the class counts matter when they are unbalanced); the gate therefore
compares P with the larger of the uniform chance and the best constant answer
(the share of renderings that one fixed label gets right on every scored turn).

Conditional Potemkin P(J=0 | P=1, O=1) is reported only when P is above that
chance and its denominator n(111)+n(110) reaches `min_n`; otherwise the row keeps
the raw value in `raw_estimate` and says why in `reason`. The test is clustered on
items like every Study B rate (an item's two renderings are not independent): a
one-sided exact binomial test (`scipy.stats.binomtest`, alternative="greater") at
the CR2 effective sample size over items, n_eff = floor(n / deff) renderings with
k_eff = round(rate * n_eff) successes, deff the CR2 design effect of the P bits
clustered on items (`stats.clustered.clustered_proportion`) floored at 1, and at a
boundary rate (0 or 1, no variance to estimate) the largest cluster size (the
whole item counted once). The heterogeneous-chance case is tested against the mean
chance, which is conservative.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgeaudit.vocab.study_b import STATES

GATE_METHOD = ("one-sided exact binomial (scipy binomtest) of P vs max(uniform, best "
               "constant) at the CR2 effective sample size over items (n / deff, deff >= 1)")
GATE_KEY = "binomial_gate_clustered"  # GATE_METHOD's key in the method registry


def _span(item: Mapping, scope: str = "trajectory") -> list[int]:
    """Turns whose P answers make the P bit (as in study_b.metrics._p_bits)."""
    from judgeaudit.study_b.metrics import p_turns

    return p_turns(item, scope)


def clustered_binomtest(bits: Sequence[float], clusters: Sequence, chance: float
                        ) -> tuple[float, int, int, float]:
    """One-sided exact binomial test of rate > chance at the CR2 effective sample size
    over `clusters`: (p-value, k_eff, n_eff, deff). See the module docstring."""
    from scipy.stats import binomtest  # here: the registry imports this module at DAG time

    from judgeaudit.stats.clustered import clustered_proportion

    y = np.asarray(bits, dtype=float)
    n = int(y.size)
    if not n or not 0 < chance < 1:
        return math.nan, 0, n, math.nan
    est = clustered_proportion(y, np.asarray(clusters, dtype=object).astype(str))
    rate = float(y.mean())
    if rate in (0.0, 1.0):
        sizes = pd.Series(np.asarray(clusters, dtype=object).astype(str)).value_counts()
        deff = float(sizes.max())
    else:
        deff = float(est.deff) if math.isfinite(est.deff) else 1.0
    deff = max(1.0, deff)
    n_eff = max(1, int(math.floor(n / deff + 1e-9)))  # guard 11.0 read as 10.999..
    k_eff = int(round(rate * n_eff))
    return float(binomtest(k_eff, n_eff, chance, alternative="greater").pvalue), k_eff, \
        n_eff, deff


def _gold_turns(item: Mapping, rendering: int, span: Sequence[int]) -> list[str]:
    """Gold emotion per span turn of one rendering (from the item's turns)."""
    by_turn = {t["turn"]: t.get("emotions") for t in item["turns"]}
    out = []
    for turn in span:
        emos = by_turn.get(turn) or [None, None]
        out.append(str(emos[rendering]))
    return out


def rendering_chance(items: Sequence[Mapping], options: int = 2, p_scope: str = "trajectory"
                     ) -> pd.DataFrame:
    """Per task x rendering: uniform chance of the P, O and J bits, and the golds of
    the P span (for the best-constant baseline). `options`: answers of O and J."""
    rows = []
    for item in items:
        k = len(item["classes"])
        if k < 2:
            raise ValueError(f"chance: item {item['item_id']} has {k} classes; need >= 2")
        span = _span(item, p_scope)
        for v in (0, 1):
            rows.append({"task": item["family"], "item_id": item["item_id"], "rendering": v,
                         "p_P": (1.0 / k) ** len(span), "p_O": 1.0 / options,
                         "p_J": 1.0 / options, "k": k, "span": len(span),
                         "golds": tuple(_gold_turns(item, v, span))})
    return pd.DataFrame(rows)


def state_probabilities(p_p: float, p_o: float, p_j: float) -> dict[str, float]:
    """Probability of each PO J state for independent bits with these success rates."""
    out = {}
    for s in STATES:
        prob = 1.0
        for bit, p in zip(s, (p_p, p_o, p_j), strict=True):
            prob *= p if bit == "1" else 1 - p
        out[s] = prob
    return out


def best_constant(golds: Sequence[Sequence[str]]) -> float:
    """Largest share of renderings one fixed label answers right on every span turn."""
    if not len(golds):
        return math.nan
    labels = {g for gs in golds for g in gs}
    return max(float(np.mean([all(g == lab for g in gs) for gs in golds])) for lab in labels)


def chance_distribution(items: Sequence[Mapping], options: int = 2,
                        p_scope: str = "trajectory") -> pd.DataFrame:
    """Expected state distribution of a chance judge per task (rows task x state)
    with the per-task P chances (uniform, best constant, gate = their max)."""
    rc = rendering_chance(items, options, p_scope)
    out = []
    for task, g in rc.groupby("task", sort=True):
        probs = [state_probabilities(r.p_P, r.p_O, r.p_J) for r in g.itertuples()]
        const = best_constant(list(g["golds"]))
        p_uniform = float(g["p_P"].mean())
        for s in STATES:
            out.append({"task": task, "state": s, "chance": float(np.mean([p[s] for p in probs])),
                        "p_P_uniform": p_uniform, "p_P_constant": const,
                        "p_P_gate": max(p_uniform, const), "p_O": float(g["p_O"].mean()),
                        "p_J": float(g["p_J"].mean()), "k": int(g["k"].max()),
                        "span": float(g["span"].mean()), "n_renderings": len(g)})
    return pd.DataFrame(out)


def gate_potemkin(pot: pd.DataFrame, st: pd.DataFrame, chance: pd.DataFrame,
                  alpha: float = 0.05, min_n: int = 10) -> pd.DataFrame:
    """Blank the conditional Potemkin rows whose P is not above chance or whose
    denominator is below `min_n`; add p_rate, p_chance, p_pvalue, reported, reason."""
    pot = pot.copy()
    for col, default in (("raw_estimate", math.nan), ("p_rate", math.nan),
                         ("p_chance", math.nan), ("p_pvalue", math.nan), ("p_n_eff", math.nan),
                         ("p_deff", math.nan), ("reported", True),
                         ("reason", ""), ("gate_method", "")):
        pot[col] = default
    pot["reported"] = pot["reported"].astype(object)
    gates = chance.drop_duplicates("task").set_index("task")["p_P_gate"].to_dict()
    for i, r in pot.iterrows():
        if r["metric"] != "conditional_potemkin":
            pot.at[i, "reported"] = None
            continue
        g = st[(st["judge"] == r["judge"]) & (st["task"] == r["task"])]
        ok = g["P"].notna()
        pbits = g.loc[ok, "P"]
        k, n = int(pbits.sum()), len(pbits)
        c = float(gates.get(r["task"], math.nan))
        pval, _, n_eff, deff = clustered_binomtest(pbits.to_numpy(dtype=float),
                                                   g.loc[ok, "item_id"].to_numpy(), c)
        reasons = []
        if not n:
            reasons.append("no valid P probe")
        elif not (pval < alpha):
            reasons.append(f"P {k}/{n} = {k / n:.2f} not above chance {c:.2f} "
                           f"(one-sided binomial at the item-clustered effective n = "
                           f"{n_eff}, p = {pval:.3g} >= {alpha:g})")
        if int(r["n"]) < min_n:
            reasons.append(f"n(P=1, O=1) = {int(r['n'])} < {min_n}")
        pot.at[i, "raw_estimate"] = r["estimate"]
        pot.at[i, "p_rate"] = k / n if n else math.nan
        pot.at[i, "p_chance"] = c
        pot.at[i, "p_pvalue"] = pval
        pot.at[i, "p_n_eff"] = n_eff
        pot.at[i, "p_deff"] = deff
        pot.at[i, "gate_method"] = GATE_METHOD
        if reasons:
            pot.at[i, "reported"] = False
            pot.at[i, "reason"] = "; ".join(reasons)
            for col in ("estimate", "ci_low", "ci_high"):
                pot.at[i, col] = math.nan
        else:
            pot.at[i, "reported"] = True
    return pot


__all__ = ["GATE_KEY", "GATE_METHOD", "STATES", "best_constant", "chance_distribution",
           "clustered_binomtest", "gate_potemkin",
           "rendering_chance", "state_probabilities"]
