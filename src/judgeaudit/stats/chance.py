"""Chance baselines for Study B's (P, O, J) states, and the gate on the conditional
Potemkin rate.

A judge answering at chance picks uniformly among the options of each probe,
independently: P among the task's K emotion classes (the probe's allowed answers;
positional: the P bit needs every turn of the scored span right, so its chance is
(1/K)^(span length)), O and J between R1 and R2 (1/2 each). The expected state
distribution is, per rendering, the product of the three Bernoulli laws, averaged
over the renderings of the task (so it sums to 1 by construction).

A non-listening judge can also beat 1/K on P by always giving the most frequent
class (the class counts matter when they are unbalanced); the gate therefore
compares P with the larger of the uniform chance and the best constant answer
(the share of renderings that one fixed label gets right on every scored turn).

Conditional Potemkin P(J=0 | P=1, O=1) is reported only when P is above that
chance (one-sided exact binomial test, `scipy.stats.binomtest`,
alternative="greater", over renderings; the heterogeneous-chance case is tested
against the mean chance, which is conservative) and its denominator n(111)+n(110)
reaches `min_n`; otherwise the row keeps the raw value in `raw_estimate` and says
why in `reason`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest

STATES = ("111", "110", "101", "100", "011", "010", "001", "000")
GATE_METHOD = "one-sided exact binomial (scipy binomtest) of P vs max(uniform, best constant)"


def _span(item: Mapping) -> list[int]:
    """Turns whose P answers make the P bit (as in stats.study_b._p_bits)."""
    if item["family"] != "positional":
        return [max(item["key_turns"])]
    user = [t["turn"] for t in item["turns"] if t["role"] == "user"]
    return sorted({user[0], *(item.get("span_turns") or item["key_turns"])})


def _gold_turns(item: Mapping, rendering: int, span: Sequence[int]) -> list[str]:
    """Gold emotion per span turn of one rendering (from the item's turns)."""
    by_turn = {t["turn"]: t.get("emotions") for t in item["turns"]}
    out = []
    for turn in span:
        emos = by_turn.get(turn) or [None, None]
        out.append(str(emos[rendering]))
    return out


def rendering_chance(items: Sequence[Mapping], options: int = 2) -> pd.DataFrame:
    """Per task x rendering: uniform chance of the P, O and J bits, and the golds of
    the P span (for the best-constant baseline). `options`: answers of O and J."""
    rows = []
    for item in items:
        k = len(item["classes"])
        if k < 2:
            raise ValueError(f"chance: item {item['item_id']} has {k} classes; need >= 2")
        span = _span(item)
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


def chance_distribution(items: Sequence[Mapping], options: int = 2) -> pd.DataFrame:
    """Expected state distribution of a chance judge per task (rows task x state)
    with the per-task P chances (uniform, best constant, gate = their max)."""
    rc = rendering_chance(items, options)
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
                         ("p_chance", math.nan), ("p_pvalue", math.nan), ("reported", True),
                         ("reason", ""), ("gate_method", "")):
        pot[col] = default
    pot["reported"] = pot["reported"].astype(object)
    gates = chance.drop_duplicates("task").set_index("task")["p_P_gate"].to_dict()
    for i, r in pot.iterrows():
        if r["metric"] != "conditional_potemkin":
            pot.at[i, "reported"] = None
            continue
        g = st[(st["judge"] == r["judge"]) & (st["task"] == r["task"])]
        pbits = g["P"].dropna()
        k, n = int(pbits.sum()), len(pbits)
        c = float(gates.get(r["task"], math.nan))
        pval = (float(binomtest(k, n, c, alternative="greater").pvalue)
                if n and 0 < c < 1 else math.nan)
        reasons = []
        if not n:
            reasons.append("no valid P probe")
        elif not (pval < alpha):
            reasons.append(f"P {k}/{n} = {k / n:.2f} not above chance {c:.2f} "
                           f"(one-sided binomial p = {pval:.3g} >= {alpha:g})")
        if int(r["n"]) < min_n:
            reasons.append(f"n(P=1, O=1) = {int(r['n'])} < {min_n}")
        pot.at[i, "raw_estimate"] = r["estimate"]
        pot.at[i, "p_rate"] = k / n if n else math.nan
        pot.at[i, "p_chance"] = c
        pot.at[i, "p_pvalue"] = pval
        pot.at[i, "gate_method"] = GATE_METHOD
        if reasons:
            pot.at[i, "reported"] = False
            pot.at[i, "reason"] = "; ".join(reasons)
            for col in ("estimate", "ci_low", "ci_high"):
                pot.at[i, col] = math.nan
        else:
            pot.at[i, "reported"] = True
    return pot


__all__ = ["GATE_METHOD", "STATES", "best_constant", "chance_distribution", "gate_potemkin",
           "rendering_chance", "state_probabilities"]
