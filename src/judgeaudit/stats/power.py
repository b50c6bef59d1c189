"""Pre-flight power and design report: for every trial cell of the built study,
its size (trials, analysis units, clusters), the design effect of clustering and
the minimum detectable effect (MDE) at the configured power and alpha, plus the
power at the configured target effect (the papers' headline effects).

Methods (named in every row's `method` column):
- Rates compared between two conditions (follow rate between placements or
  blueprint conditions, position lock between formats, accuracy): two-sample
  test of proportions on Cohen's h (`statsmodels.stats.proportion.proportion_effectsize`,
  `statsmodels.stats.power.NormalIndPower`, two-sided), each arm of `n_eff`
  units. The audit's contrasts are paired (same clips / pairs in both arms);
  treating the arms as independent is conservative when the pairing correlation
  is positive. MDE on the rate scale: p1 - p0 where h(p1, p0) equals the
  solved h, p0 = the configured baseline.
- Clustering: n_eff = n_units / DEFF, DEFF = 1 + (m - 1) * ICC (Kish), m = units
  per cluster, ICC configured (`power.icc`). Clusters: the clip for
  classification trials (a clip is judged under several seeds), the source clip
  a pair shares with other pairs for pairwise trials (`pair_source`), the item
  for Study B.
- Protocol gap (Study B, Pairwise - Pointwise, paired over items): one-sample
  t test on item-level differences (`statsmodels.stats.power.TTestPower`,
  two-sided). Per rendering the difference D in {-1, 0, 1} has variance
  psi - d^2 with psi = p0 (1 - p1) + p1 (1 - p0) (discordance when the two
  protocols err independently; conservative), p1 = p0 + d; an item averages m
  renderings with intra-item correlation ICC, so var(item diff) =
  (psi - d^2) * DEFF / m.

No response is read: the report depends only on the trials and the config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize

from judgeaudit.vocab.study_a import PLACEMENTS, WRONG_BLUEPRINT_CONDITIONS
from judgeaudit.vocab.study_b import NO_CUE, PROTOCOLS

METHOD_TWO_PROP = "two-sample proportions, Cohen's h, statsmodels NormalIndPower (two-sided)"
METHOD_PAIRED = ("paired item differences, statsmodels TTestPower (two-sided), "
                 "psi from independent protocol errors")
WRONG_BLUEPRINT = WRONG_BLUEPRINT_CONDITIONS
METRICS = ("follow", "lock", "accuracy", "protocol_gap")
COLUMNS = ["study", "task", "cell", "metric", "n_trials", "n_units", "n_clusters",
           "units_per_cluster", "icc", "deff", "n_eff", "alpha", "power", "baseline",
           "mde", "mde_target", "target_effect", "power_at_target", "meets_target",
           "configured_n", "delivered_n", "shortfall", "method"]


# ------------------------------------------------------------------ primitives
def design_effect(units_per_cluster: float, icc: float) -> float:
    """Kish design effect 1 + (m - 1) ICC for clusters of average size m."""
    if units_per_cluster < 1:
        raise ValueError(f"design_effect: units per cluster must be >= 1, got {units_per_cluster}")
    if not 0 <= icc <= 1:
        raise ValueError(f"design_effect: ICC must be in [0, 1], got {icc}")
    return 1.0 + (float(units_per_cluster) - 1.0) * float(icc)


def _p_from_h(p0: float, h: float) -> float:
    """p1 with proportion_effectsize(p1, p0) == h (h > 0: p1 > p0)."""
    a = math.asin(math.sqrt(p0)) + h / 2
    return math.sin(min(max(a, 0.0), math.pi / 2)) ** 2


def power_two_proportions(p0: float, p1: float, n_per_arm: float, alpha: float = 0.05) -> float:
    """Power of the two-sided two-sample test of p1 vs p0 with n_per_arm units each."""
    if n_per_arm <= 1:
        return math.nan
    h = abs(float(proportion_effectsize(p1, p0)))
    return float(NormalIndPower().power(effect_size=h, nobs1=n_per_arm, alpha=alpha,
                                        ratio=1.0, alternative="two-sided"))


def mde_two_proportions(n_per_arm: float, p0: float, alpha: float = 0.05,
                        power: float = 0.8) -> tuple[float, float]:
    """(h, p1 - p0): smallest upward difference from p0 detected with `power`.
    p1 - p0 is NaN when even p1 = 1 cannot be detected."""
    if n_per_arm <= 1:
        return math.nan, math.nan
    h = float(NormalIndPower().solve_power(effect_size=None, nobs1=n_per_arm, alpha=alpha,
                                           power=power, ratio=1.0, alternative="two-sided"))
    h_max = float(proportion_effectsize(1.0, p0))
    if h > h_max:
        return h, math.nan
    return h, _p_from_h(p0, h) - p0


def _paired_es(d: float, p0: float, m: float, icc: float) -> float:
    p1 = p0 + d
    psi = p0 * (1 - p1) + p1 * (1 - p0)
    var = (psi - d * d) * design_effect(m, icc) / m
    return d / math.sqrt(var) if var > 0 else math.inf


def power_paired_gap(d: float, n_items: float, p0: float, m: float = 2, icc: float = 0.0,
                     alpha: float = 0.05) -> float:
    """Power to detect a mean item-level accuracy gap d (p0 -> p0 + d)."""
    if n_items < 2:
        return math.nan
    if not 0 < d <= 1 - p0:
        raise ValueError(f"power_paired_gap: need 0 < d <= 1 - p0, got d={d}, p0={p0}")
    es = _paired_es(d, p0, m, icc)
    if math.isinf(es):
        return 1.0
    return float(TTestPower().power(effect_size=es, nobs=n_items, alpha=alpha,
                                    alternative="two-sided"))


def mde_paired_gap(n_items: float, p0: float, m: float = 2, icc: float = 0.0,
                   alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest gap d (p0 -> p0 + d) detected with `power`; NaN if none <= 1 - p0 is."""
    if n_items < 2:
        return math.nan
    hi = 1.0 - p0 - 1e-9
    if power_paired_gap(hi, n_items, p0, m, icc, alpha) < power:
        return math.nan
    return float(brentq(lambda d: power_paired_gap(d, n_items, p0, m, icc, alpha) - power,
                        1e-6, hi, xtol=1e-7))


# ------------------------------------------------------------------ cells
def pair_source(facts: Mapping[str, Any]) -> str:
    """The source unit a pair shares with other pairs: the clean clip (cleanness: its
    degraded copies form several pairs), the neutral clip (emotion: one neutral
    rendering serves several emotions), the reference clip (speaker similarity);
    the pair itself otherwise (naturalness pairs are drawn without a shared source)."""
    crit = facts.get("criterion")
    if crit == "cleanness":
        return str(facts["better_clip"])
    if crit == "emotion":
        other = {str(facts["clip_a"]), str(facts["clip_b"])} - {str(facts["better_clip"])}
        return other.pop() if other else str(facts["pair_id"])
    if crit == "speaker" and facts.get("reference_clip"):
        return str(facts["reference_clip"])
    return str(facts["pair_id"])


def _metric_of(study: str, condition: str) -> str:
    if study == "A" and (condition in WRONG_BLUEPRINT or condition in PLACEMENTS
                         or condition == "conflict"):
        return "follow"
    return "accuracy"


def trial_cells(trials: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Size of every analysis cell in a list of trials (any mix of shards).

    Study A classification: one cell per task x condition; unit = trial, cluster =
    clip. Study A pairwise: one cell per task x format; unit = pair (both orders
    give one lock bit), cluster = the pair's source clip. Study B: one protocol-gap cell
    per task x cue; unit = item (the estimator's unit), m = renderings per item."""
    by_key: dict[tuple, list[Mapping[str, Any]]] = {}
    for t in trials:
        f = t.get("facts", {})
        if t["study"] == "A" and f.get("family") == "pairwise":
            key = ("A", t["task"], f.get("format", t["condition"]), "lock")
        elif t["study"] == "A":
            key = ("A", t["task"], t["condition"], _metric_of("A", t["condition"]))
        elif t["study"] == "B" and f.get("protocol") in PROTOCOLS:
            key = ("B", t["task"], f"gap-{f.get('cue') or NO_CUE}", "protocol_gap")
        else:
            continue  # Study B probes: no test is planned on them
        by_key.setdefault(key, []).append(t)
    cells = []
    for (study, task, cell, metric), rows in sorted(by_key.items()):
        facts = [r["facts"] for r in rows]
        if metric == "lock":
            pairs = {f["pair_id"]: pair_source(f) for f in facts}
            n_units, n_clusters = len(pairs), len(set(pairs.values()))
            per_item = 1.0
        elif metric == "protocol_gap":
            point = [f for f in facts if f.get("protocol") == "pointwise"]
            pair = [f for f in facts if f.get("protocol") == "pairwise"]
            items = sorted({f["item_id"] for f in point} & {f["item_id"] for f in pair})
            n_units = n_clusters = len(items)
            per_item = (len(point) / len({f["item_id"] for f in point})) if point else 1.0
        else:
            clips = [str(f.get("clip_id", r["trial_id"])) for f, r in zip(facts, rows,
                                                                           strict=True)]
            n_units, n_clusters = len(rows), len(set(clips))
            per_item = 1.0
        cells.append({"study": study, "task": task, "cell": cell, "metric": metric,
                      "n_trials": len(rows), "n_units": n_units, "n_clusters": n_clusters,
                      "renderings_per_item": per_item})
    return cells


def evaluate_cell(cell: Mapping[str, Any], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Design effect, n_eff, MDE and power at the target effect of one cell.
    `cfg`: the `power` config section (alpha, power, icc, targets.<metric>)."""
    alpha, target_power, icc = float(cfg["alpha"]), float(cfg["power"]), float(cfg["icc"])
    tcfg = cfg["targets"][cell["metric"]]
    p0, mde_target = float(tcfg["baseline"]), float(tcfg["mde"])
    out = {**{k: cell[k] for k in ("study", "task", "cell", "metric", "n_trials", "n_units",
                                   "n_clusters")},
           "icc": icc, "alpha": alpha, "power": target_power, "baseline": p0,
           "mde_target": mde_target, "target_effect": f"{p0:g} -> {p0 + mde_target:g}"}
    if cell["metric"] == "protocol_gap":
        m = float(cell["renderings_per_item"])
        deff = design_effect(max(m, 1.0), icc)
        n_eff = cell["n_units"] * m / deff  # renderings' worth of information
        mde = mde_paired_gap(cell["n_units"], p0, m, icc, alpha, target_power)
        pw = (power_paired_gap(mde_target, cell["n_units"], p0, m, icc, alpha)
              if mde_target <= 1 - p0 else math.nan)
        out.update(units_per_cluster=m, deff=deff, n_eff=n_eff, method=METHOD_PAIRED)
    else:
        m = cell["n_units"] / max(cell["n_clusters"], 1)
        deff = design_effect(max(m, 1.0), icc)
        n_eff = cell["n_units"] / deff
        _, mde = mde_two_proportions(n_eff, p0, alpha, target_power)
        pw = power_two_proportions(p0, min(p0 + mde_target, 1.0), n_eff, alpha)
        out.update(units_per_cluster=m, deff=deff, n_eff=n_eff, method=METHOD_TWO_PROP)
    out.update(mde=mde, power_at_target=pw,
               meets_target=bool(np.isfinite(mde) and mde <= mde_target + 1e-12))
    return out


def report(trials: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any],
           configured: Mapping[tuple[str, str], tuple[int, int]] | None = None
           ) -> pd.DataFrame:
    """The power table. `configured`: (study, task) -> (configured size, delivered
    size) in the task's own unit (clips per class, pairs, items), from
    `delivered_sizes`; a shortfall is flagged on every cell of that task."""
    rows = []
    configured = configured or {}
    for cell in trial_cells(trials):
        row = evaluate_cell(cell, cfg)
        want, got = configured.get((cell["study"], cell["task"]), (None, None))
        row.update(configured_n=want, delivered_n=got,
                   shortfall=bool(want is not None and got is not None and got < want))
        rows.append(row)
    frame = pd.DataFrame(rows)
    for c in COLUMNS:
        if c not in frame:
            frame[c] = None
    return frame[COLUMNS]


def delivered_sizes(trials: Sequence[Mapping[str, Any]], study_a: Mapping[str, Any] | None,
                    study_b: Mapping[str, Any] | None) -> dict[tuple[str, str], tuple[int, int]]:
    """Configured vs delivered size per task: Study A classification `per_class`
    (delivered = the smallest class), Study A pairs `n_pairs`, Study B `n_items`."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    gold_clips: dict[str, dict[str, set]] = {}
    pairs: dict[str, set] = {}
    items: dict[str, set] = {}
    for t in trials:
        f = t.get("facts", {})
        if t["study"] == "A" and f.get("family") == "pairwise":
            pairs.setdefault(t["task"], set()).add(f["pair_id"])
        elif t["study"] == "A" and "clip_id" in f:
            gold_clips.setdefault(t["task"], {}).setdefault(str(t["gold"]), set()).add(
                f["clip_id"])
        elif t["study"] == "B" and "item_id" in f:
            items.setdefault(t["task"], set()).add(f["item_id"])
    if study_a:
        for task, by_class in gold_clips.items():
            want = int((study_a.get(task) or {}).get("per_class") or 0)
            if want:
                labels = list((study_a.get(task) or {}).get("labels") or by_class)
                got = min(len(by_class.get(lab, ())) for lab in labels)
                out[("A", task)] = (want, got)
        for task, ids in pairs.items():
            out[("A", task)] = (int(study_a["pairwise"]["n_pairs"]), len(ids))
    if study_b:
        for task, ids in items.items():
            want = (study_b.get("tasks", {}).get(task) or {}).get("n_items")
            if want:
                out[("B", task)] = (int(want), len(ids))
    return out


def problems(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(shortfall messages, MDE-above-target messages), each naming the cell."""
    short, weak = [], []
    seen = set()
    for r in frame.itertuples(index=False):
        name = f"{r.study}/{r.task}/{r.cell}"
        if r.shortfall and (r.study, r.task) not in seen:
            seen.add((r.study, r.task))
            short.append(f"cell {r.study}/{r.task}: configured size {int(r.configured_n)} but "
                         f"the corpus delivered {int(r.delivered_n)} (the size is capped by "
                         "the data)")
        if not r.meets_target:
            mde = "none detectable" if not np.isfinite(r.mde) else f"{r.mde:.3f}"
            weak.append(f"cell {name} ({r.metric}): MDE {mde} at power {r.power:g}, alpha "
                        f"{r.alpha:g} exceeds the target {r.mde_target:g} (n_eff "
                        f"{r.n_eff:.1f}, power at target {r.power_at_target:.2f})")
    return short, weak


def headline(frame: pd.DataFrame) -> pd.DataFrame:
    """Per metric: the weakest cell's power at the target effect (for the closing note)."""
    out = []
    for metric, g in frame.groupby("metric", sort=True):
        i = g["power_at_target"].astype(float).idxmin()
        out.append({"metric": metric, "target_effect": g.loc[i, "target_effect"],
                    "min_power": float(g.loc[i, "power_at_target"]),
                    "weakest_cell": f"{g.loc[i, 'study']}/{g.loc[i, 'task']}/{g.loc[i, 'cell']}",
                    "max_power": float(g["power_at_target"].astype(float).max()),
                    "n_cells": len(g)})
    return pd.DataFrame(out)


__all__ = ["COLUMNS", "delivered_sizes", "design_effect", "evaluate_cell", "headline",
           "mde_paired_gap", "mde_two_proportions", "pair_source", "power_paired_gap",
           "power_two_proportions", "problems", "report", "trial_cells"]
