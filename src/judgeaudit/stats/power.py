"""Pre-flight power and design report, by simulation of the printed estimator.

For every cell that carries a headline test, the power at the target effect and the
minimum detectable effect (MDE) come from simulating outcomes at the cell's own
design, read from the built trials -- its clusters (the same sampling unit its
printed interval clusters on: the `cluster` fact, i.e. the speaker for
classification cells, the pair source for pair cells; the item for Study B), the
units in every cluster, the renderings per item -- and running on every replicate
the very function the tables print, then Holm over the test's multiplicity family:

  test                      cell                          estimator (stats.clustered)
  follow_vs_null            Study A task x follow cond.   clustered_proportion; p-value
                                                          dual to its interval
                                                          (`proportion_pvalue`), H0 p = p0
  lock_vs_null              Study A pair task x format    the same on the pair lock bit
  concat_vs_native_lock     Study A pair task             clustered_difference (p-value)
  fallible_vs_wrong         Study A classification task   clustered_difference
  protocol_gap              Study B task x cue            clustered_difference over items
                                                          of the per-item accuracies

Families (Holm, `stats.contrasts.holm`): one per test, over its cells x the audited
judges (controls excluded, as in `study_a.contrasts_table`); every member of a family
is simulated at the target effect, each judge an independent replicate. Beside it
`power_bonferroni` (P(p < alpha/m)) is the bound Holm's power never falls below,
whatever the other members' truth, and `power_unadjusted` the power at alpha.

Data model (the simulator shares no code with the estimators; numpy draws only):
cluster g has its own rate p_g ~ Beta with mean p and intra-cluster correlation
rho (a + b = 1/rho - 1); its units are Bernoulli(p_g). The two arms of a paired
contrast share the cluster's quantile U_g (p_a,g = F_a^-1(U_g), p_b,g = F_b^-1(U_g):
a cluster that is hard under one condition is hard under the other) and are
independent given it. Study B: item i has U_i, pointwise and pairwise renderings of
the item are Bernoulli(F^-1(U_i)) with the protocols' means p0 and p0 + gap.

rho: from a pilot / earlier run's measured design effect where one is configured
(`power.pilot_metrics`: Study A metrics.tsv files; rho = (deff - 1)/(n/G - 1) of the
cell's own task x condition x metric, the median over judges with a finite deff),
otherwise the configured `power.icc` with its stated source (`power.icc_source`);
both powers are shown when a pilot exists (`power_configured`, `power_pilot`) and the
headline `power_at_target` uses the pilot's. MDE: the smallest effect (on the rate
scale, upward from the baseline) whose simulated power at the Bonferroni level
alpha/m reaches `power.power` (bisection on common random numbers): conservative for
Holm. `closed_form_power`: a check where a closed form applies (one-sample Cohen's h
at n_eff = n / (1 + (m_w - 1) rho), m_w = sum n_g^2 / n, statsmodels NormalIndPower;
the Study B gap: TTestPower on item differences), unadjusted alpha.

No response is read: the report depends only on the trials and the config (and the
pilot's metrics when configured).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import betaincinv
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize

from judgeaudit.stats.clustered import (
    METHOD_DIFFERENCE,
    METHOD_PROPORTION,
    clustered_difference,
    clustered_proportion,
    proportion_pvalue,
)
from judgeaudit.stats.contrasts import holm_reject
from judgeaudit.vocab.study_a import PLACEMENTS, WRONG_BLUEPRINT_CONDITIONS
from judgeaudit.vocab.study_b import AUDIO_PROTOCOLS, NO_CUE

FOLLOW_CONDITIONS = (*WRONG_BLUEPRINT_CONDITIONS, *PLACEMENTS, "conflict")
# test -> (target key in power.targets, kind); kind "null": one rate vs its null p0;
# "paired": a paired difference, arm b at p0, arm a at p0 + effect
TESTS = {
    "follow_vs_null": ("follow", "null"),
    "lock_vs_null": ("lock", "null"),
    "concat_vs_native_lock": ("concat_vs_native", "paired"),
    "fallible_vs_wrong": ("fallible_vs_wrong", "paired"),
    "protocol_gap": ("protocol_gap", "gap"),
}
COLUMNS = ["study", "task", "cell", "test", "family", "family_size", "cluster_unit",
           "n_trials", "n_units", "n_clusters", "min_cluster", "max_cluster", "baseline",
           "target_effect", "mde_target", "alpha", "power", "icc_configured", "icc_source",
           "deff_pilot", "icc_pilot", "icc_used", "variance_source", "replicates",
           "power_at_target", "power_mcse", "power_holm", "power_bonferroni",
           "power_unadjusted", "power_configured", "power_pilot", "closed_form_power",
           "mde_bonferroni", "meets_target", "configured_n", "delivered_n", "shortfall", "method"]
METHOD = {"null": f"simulation of {METHOD_PROPORTION} (clustered_proportion), score test dual "
                  "to its interval",
          "paired": f"simulation of {METHOD_DIFFERENCE} (clustered_difference)",
          "gap": f"simulation of {METHOD_DIFFERENCE} (clustered_difference) over items"}


@dataclass
class Cell:
    """One tested cell's design: `codes[i]` the cluster of unit i (0..G-1); for the
    Study B gap `reps` = (pointwise, pairwise) renderings per item."""

    study: str
    task: str
    cell: str
    test: str
    cluster_unit: str
    n_trials: int
    codes: np.ndarray
    reps: tuple[int, int] = (1, 1)
    pilot_keys: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def n_units(self) -> int:
        return int(self.codes.size)

    @property
    def n_clusters(self) -> int:
        return int(self.codes.max()) + 1 if self.codes.size else 0

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=self.n_clusters)


# ------------------------------------------------------------------ design from trials
def _codes(ids: Sequence[str]) -> np.ndarray:
    _, codes = np.unique(np.asarray(ids, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int64)


def _cluster(f: Mapping[str, Any], fallback: str) -> tuple[str, str]:
    """The unit the printed interval clusters on (`study_a.join`: facts `cluster`,
    else the pair / clip)."""
    if f.get("cluster") is not None:
        return str(f["cluster"]), str(f.get("cluster_unit") or "cluster")
    if f.get("pair_id") is not None:
        return str(f["pair_id"]), "pair"
    return str(f.get("clip_id", fallback)), "clip"


def trial_cells(trials: Sequence[Mapping[str, Any]]) -> list[Cell]:
    """The tested cells of a list of trials (any mix of shards), each with the cluster
    of every analysis unit (trial; pair; paired unit; item)."""
    cls: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    pairs: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    pair_trials: dict[tuple[str, str], int] = {}
    gap: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for t in trials:
        f = t.get("facts", {})
        if t["study"] == "A" and f.get("family") == "pairwise":
            key = (t["task"], str(f.get("format", t["condition"])))
            pairs.setdefault(key, {})[str(f["pair_id"])] = _cluster(f, t["trial_id"])
            pair_trials[key] = pair_trials.get(key, 0) + 1
        elif t["study"] == "A":
            cls.setdefault((t["task"], t["condition"]), []).append(t)
        elif t["study"] == "B" and f.get("protocol") in AUDIO_PROTOCOLS:  # not T
            gap.setdefault((t["task"], str(f.get("cue") or NO_CUE)), []).append(t)
    cells: list[Cell] = []
    for (task, cond), rows in sorted(cls.items()):
        if cond not in FOLLOW_CONDITIONS:
            continue
        cl = [_cluster(r.get("facts", {}), r["trial_id"]) for r in rows]
        metric = "follow_block" if cond == "conflict" else "rf"
        cells.append(Cell("A", task, cond, "follow_vs_null", cl[0][1], len(rows),
                          _codes([c for c, _ in cl]), pilot_keys=[(task, cond, metric)]))
    for task in sorted({t for t, _ in cls}):
        a = cls.get((task, "wrong_with_audio_fallible"), [])
        b = cls.get((task, "wrong_with_audio"), [])
        keys_b = {(r["facts"].get("clip_id"), r["facts"].get("seed")) for r in b}
        both = [r for r in a if (r["facts"].get("clip_id"), r["facts"].get("seed")) in keys_b]
        if both:
            cl = [_cluster(r["facts"], r["trial_id"]) for r in both]
            cells.append(Cell("A", task, "wrong_with_audio_fallible - wrong_with_audio",
                              "fallible_vs_wrong", cl[0][1], len(a) + len(b),
                              _codes([c for c, _ in cl]),
                              pilot_keys=[(task, "wrong_with_audio_fallible", "accuracy"),
                                          (task, "wrong_with_audio", "accuracy")]))
    for (task, fmt), by_pair in sorted(pairs.items()):
        ids = sorted(by_pair)
        cells.append(Cell("A", task, fmt, "lock_vs_null", by_pair[ids[0]][1],
                          pair_trials[(task, fmt)], _codes([by_pair[i][0] for i in ids]),
                          pilot_keys=[(task, fmt, "lock")]))
    for task in sorted({t for t, _ in pairs}):
        con, nat = pairs.get((task, "concat"), {}), pairs.get((task, "native"), {})
        ids = sorted(set(con) & set(nat))
        if ids:
            cells.append(Cell("A", task, "concat - native", "concat_vs_native_lock",
                              con[ids[0]][1], pair_trials[(task, "concat")]
                              + pair_trials[(task, "native")], _codes([con[i][0] for i in ids]),
                              pilot_keys=[(task, "concat", "lock"), (task, "native", "lock")]))
    for (task, cue), rows in sorted(gap.items()):
        per = {p: {} for p in AUDIO_PROTOCOLS}
        for r in rows:
            item = str(r["facts"]["item_id"])
            per[r["facts"]["protocol"]][item] = per[r["facts"]["protocol"]].get(item, 0) + 1
        items = sorted(set(per["pointwise"]) & set(per["pairwise"]))
        if not items:
            continue
        reps = (int(round(np.mean([per["pointwise"][i] for i in items]))),
                int(round(np.mean([per["pairwise"][i] for i in items]))))
        cells.append(Cell("B", task, f"gap-{cue}", "protocol_gap", "item", len(rows),
                          np.arange(len(items), dtype=np.int64), reps=reps))
    return cells


# ------------------------------------------------------------------ simulation
def _beta_ppf(u: np.ndarray, p: float, rho: float) -> np.ndarray:
    """Cluster rates F^-1(u) of Beta(mean p, ICC rho); the constant p when rho = 0."""
    if rho <= 0 or p <= 0 or p >= 1:
        return np.full(u.shape, min(max(p, 0.0), 1.0))
    s = 1.0 / rho - 1.0
    return betaincinv(p * s, (1 - p) * s, u)


@dataclass
class Draws:
    """Common random numbers of one cell: cluster quantiles and unit uniforms (the
    same draws serve every effect size, so power is monotone along the bisection)."""

    u_cluster: np.ndarray  # (R, G)
    u_a: np.ndarray        # (R, n) or (R, G, reps_a) for the gap
    u_b: np.ndarray


def draws(cell: Cell, replicates: int, seed: int) -> Draws:
    rng = np.random.default_rng(seed)
    r, g = replicates, cell.n_clusters
    if cell.test == "protocol_gap":
        return Draws(rng.random((r, g)), rng.random((r, g, cell.reps[1])),
                     rng.random((r, g, cell.reps[0])))
    return Draws(rng.random((r, g)), rng.random((r, cell.n_units)),
                 rng.random((r, cell.n_units)))


def pvalues(cell: Cell, d: Draws, p0: float, effect: float, rho: float, alpha: float
            ) -> np.ndarray:
    """One p-value per replicate from the printed estimator at rate p0 + effect (arm a)
    vs p0 (null / arm b)."""
    kind = TESTS[cell.test][1]
    p1 = min(p0 + effect, 1.0)
    out = np.empty(d.u_cluster.shape[0])
    if kind == "gap":
        ra = _beta_ppf(d.u_cluster, p1, rho)[:, :, None]
        rb = _beta_ppf(d.u_cluster, p0, rho)[:, :, None]
        ya = (d.u_a < ra).mean(axis=2)  # per-item pairwise accuracy
        yb = (d.u_b < rb).mean(axis=2)  # per-item pointwise accuracy
        for i in range(out.size):
            out[i] = clustered_difference(ya[i], yb[i], cell.codes, alpha).pvalue
        return out
    ra = _beta_ppf(d.u_cluster, p1, rho)[:, cell.codes]
    ya = (d.u_a < ra).astype(float)
    if kind == "null":
        for i in range(out.size):
            out[i] = proportion_pvalue(clustered_proportion(ya[i], cell.codes, alpha), p0)
        return out
    rb = _beta_ppf(d.u_cluster, p0, rho)[:, cell.codes]
    yb = (d.u_b < rb).astype(float)
    for i in range(out.size):
        out[i] = clustered_difference(ya[i], yb[i], cell.codes, alpha).pvalue
    return out


def holm_power(pv: Mapping[int, np.ndarray], copies: int, alpha: float) -> dict[int, float]:
    """Holm's power of every cell of a family: `pv[c]` the cell's replicate p-values;
    the family is the cells x `copies` judges, judge j of replicate r taking replicate
    (r + j R / copies) mod R (independent replicates, no extra simulation). Holm by
    `stats.contrasts.holm_reject` (the step-down of `holm`, vectorised over replicates)."""
    keys = sorted(pv)
    r = len(pv[keys[0]])
    shift = max(r // max(copies, 1), 1)
    idx = (np.arange(r)[:, None] + shift * np.arange(copies)[None, :]) % r  # (R, copies)
    fam = np.concatenate([pv[k][idx] for k in keys], axis=1)  # (R, cells * copies)
    rej = holm_reject(fam, alpha)
    return {k: float(rej[:, i * copies:(i + 1) * copies].mean()) for i, k in enumerate(keys)}


def mde(cell: Cell, d: Draws, p0: float, rho: float, level: float, target: float,
        alpha: float, steps: int = 5) -> float:
    """Smallest effect (upward from p0) with simulated power >= target at `level`
    (bisection on the common random numbers); NaN if even p = 1 falls short."""
    def pw(e: float) -> float:
        return float(np.mean(pvalues(cell, d, p0, e, rho, alpha) < level))
    hi = 1.0 - p0
    if pw(hi) < target:
        return math.nan
    lo = 0.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if pw(mid) >= target else (mid, hi)
    return hi


# ------------------------------------------------------------------ closed forms
def closed_form_power(cell: Cell, p0: float, effect: float, rho: float, alpha: float
                      ) -> float:
    """The closed-form check (unadjusted alpha) where one applies, else NaN."""
    kind = TESTS[cell.test][1]
    p1 = min(p0 + effect, 1.0)
    if kind == "null":
        n = cell.n_units
        m_w = float(np.sum(cell.sizes.astype(float) ** 2) / n)
        n_eff = n / (1.0 + (m_w - 1.0) * rho)
        h = abs(float(proportion_effectsize(p1, p0)))
        return float(NormalIndPower().power(effect_size=h, nobs1=n_eff, alpha=alpha, ratio=0,
                                            alternative="two-sided"))
    if kind == "gap":
        m = float(np.mean(cell.reps))
        psi = p0 * (1 - p1) + p1 * (1 - p0)
        var = (psi - effect ** 2) * (1 + (m - 1) * rho) / m
        if var <= 0:
            return 1.0
        return float(TTestPower().power(effect_size=effect / math.sqrt(var),
                                        nobs=cell.n_clusters, alpha=alpha,
                                        alternative="two-sided"))
    return math.nan


# ------------------------------------------------------------------ pilot design effects
def pilot_icc(metrics: pd.DataFrame | None, keys: Sequence[tuple[str, str, str]]
              ) -> tuple[float, float]:
    """(deff, rho) from a pilot's Study A metrics rows of the cell's task x condition x
    metric (seed-pooled rows; rho = (deff - 1)/(n/G - 1), the median over judges with a
    finite deff > 0 and n > G); (NaN, NaN) when none is usable."""
    if metrics is None or metrics.empty or not keys:
        return math.nan, math.nan
    deffs, rhos = [], []
    for task, cond, metric in keys:
        m = metrics[(metrics["task"] == task) & (metrics["condition"] == cond)
                    & (metrics["metric"] == metric)]
        if "seed" in m:
            m = m[m["seed"].astype(str) == "all"]
        for r in m.itertuples(index=False):
            deff, n, g = float(r.deff), float(r.n), float(r.n_clusters)
            if math.isfinite(deff) and deff > 0 and n > g >= 2:
                deffs.append(deff)
                rhos.append(min(max((deff - 1.0) / (n / g - 1.0), 0.0), 0.95))
    if not rhos:
        return math.nan, math.nan
    return float(np.median(deffs)), float(np.median(rhos))


# ------------------------------------------------------------------ the report
def report(trials: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any],
           configured: Mapping[tuple[str, str], tuple[int, int]] | None = None,
           audited: Mapping[str, int] | None = None, pilot: pd.DataFrame | None = None
           ) -> pd.DataFrame:
    """The power table. `cfg`: the `power` config section; `configured`: (study, task)
    -> (configured, delivered) size (`delivered_sizes`); `audited`: audited judges per
    study {"A": k, "B": k} (the Holm family's judge copies); `pilot`: an earlier run's
    Study A metrics rows (`read_pilot`)."""
    alpha, target_power = float(cfg["alpha"]), float(cfg["power"])
    icc, reps_n = float(cfg["icc"]), int(cfg["replicates"])
    mde_reps, seed = int(cfg["mde_replicates"]), int(cfg["seed"])
    configured, audited = configured or {}, audited or {}
    cells = trial_cells(trials)
    fam_of = {id(c): f"{c.test} ({c.study})" for c in cells}
    members: dict[str, list[Cell]] = {}
    for c in cells:
        members.setdefault(fam_of[id(c)], []).append(c)
    rows = []
    for fam, group in sorted(members.items()):
        copies = max(int(audited.get(group[0].study, 1)), 1)
        m = len(group) * copies
        pv_used: dict[int, np.ndarray] = {}
        info = []
        for k, c in enumerate(group):
            tkey = TESTS[c.test][0]
            p0 = float(cfg["targets"][tkey]["baseline"])
            eff = float(cfg["targets"][tkey]["mde"])
            deff_p, rho_p = pilot_icc(pilot, c.pilot_keys) if c.study == "A" else (
                math.nan, math.nan)
            rho = rho_p if math.isfinite(rho_p) else icc
            cseed = seed + 7919 * len(rows) + 104729 * k
            d = draws(c, reps_n, cseed)
            pv = pvalues(c, d, p0, eff, rho, alpha)
            pv_cfg = pv if not math.isfinite(rho_p) else pvalues(c, d, p0, eff, icc, alpha)
            pv_used[k] = pv
            dm = draws(c, mde_reps, cseed + 1)
            info.append((c, p0, eff, deff_p, rho_p, rho, pv, pv_cfg,
                         mde(c, dm, p0, rho, alpha / m, target_power, alpha)))
        pw_holm = holm_power(pv_used, copies, alpha)
        for k, (c, p0, eff, deff_p, rho_p, rho, pv, pv_cfg, mde_v) in enumerate(info):
            ph = pw_holm[k]
            want, got = configured.get((c.study, c.task), (None, None))
            sizes = c.sizes
            rows.append({
                "study": c.study, "task": c.task, "cell": c.cell, "test": c.test,
                "family": fam, "family_size": m, "cluster_unit": c.cluster_unit,
                "n_trials": c.n_trials, "n_units": c.n_units, "n_clusters": c.n_clusters,
                "min_cluster": int(sizes.min()), "max_cluster": int(sizes.max()),
                "baseline": p0, "target_effect": f"{p0:g} -> {min(p0 + eff, 1):g}",
                "mde_target": eff, "alpha": alpha, "power": target_power,
                "icc_configured": icc, "icc_source": str(cfg["icc_source"]),
                "deff_pilot": deff_p, "icc_pilot": rho_p, "icc_used": rho,
                "variance_source": "pilot deff" if math.isfinite(rho_p) else "configured icc",
                "replicates": len(pv), "power_at_target": ph,
                "power_mcse": math.sqrt(max(ph * (1 - ph), 1e-12) / len(pv)),
                "power_holm": ph, "power_bonferroni": float(np.mean(pv < alpha / m)),
                "power_unadjusted": float(np.mean(pv < alpha)),
                "power_configured": float(np.mean(pv_cfg < alpha / m)) if math.isfinite(
                    rho_p) else ph,
                "power_pilot": ph if math.isfinite(rho_p) else math.nan,
                "closed_form_power": closed_form_power(c, p0, eff, rho, alpha),
                "mde_bonferroni": mde_v,
                "meets_target": bool(ph >= target_power),
                "configured_n": want, "delivered_n": got,
                "shortfall": bool(want is not None and got is not None and got < want),
                "method": (f"{METHOD[TESTS[c.test][1]]}; Holm over {fam}: {len(group)} cells "
                           f"x {copies} audited judges; {len(pv)} replicates"),
            })
    frame = pd.DataFrame(rows)
    for col in COLUMNS:
        if col not in frame:
            frame[col] = None
    return frame[COLUMNS]


def read_pilot(paths: Sequence[str]) -> pd.DataFrame | None:
    """Concatenated Study A metrics.tsv rows of a pilot / earlier run (None if no path)."""
    frames = [pd.read_csv(p, sep="\t") for p in paths]
    if not frames:
        return None
    out = pd.concat(frames, ignore_index=True)
    need = {"task", "condition", "metric", "n", "n_clusters", "deff"}
    if need - set(out.columns):
        raise ValueError(f"power.pilot_metrics {list(paths)}: metrics lack columns "
                         f"{sorted(need - set(out.columns))}")
    return out


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
    """(shortfall messages, below-target-power messages), each naming the cell."""
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
            mde_s = ("none detectable" if not np.isfinite(r.mde_bonferroni)
                     else f"{r.mde_bonferroni:.3f}")
            weak.append(f"cell {name} ({r.test}): power {r.power_at_target:.2f} after Holm "
                        f"(family of {r.family_size}) at {r.target_effect} on {r.n_clusters} "
                        f"{r.cluster_unit} clusters is below {r.power:g} (MDE at alpha/m {mde_s})")
    return short, weak


def headline(frame: pd.DataFrame) -> pd.DataFrame:
    """Per test: the weakest cell's power at the target effect (for the closing note)."""
    out = []
    for test, g in frame.groupby("test", sort=True):
        i = g["power_at_target"].astype(float).idxmin()
        out.append({"test": test, "target_effect": g.loc[i, "target_effect"],
                    "min_power": float(g.loc[i, "power_at_target"]),
                    "weakest_cell": f"{g.loc[i, 'study']}/{g.loc[i, 'task']}/{g.loc[i, 'cell']}",
                    "max_power": float(g["power_at_target"].astype(float).max()),
                    "n_cells": len(g)})
    return pd.DataFrame(out)


__all__ = ["COLUMNS", "Cell", "TESTS", "closed_form_power", "delivered_sizes", "draws",
           "headline", "holm_power", "mde", "pilot_icc", "problems", "pvalues", "read_pilot",
           "report", "trial_cells"]
