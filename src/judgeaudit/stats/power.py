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
from scipy.special import betaincinv, ndtr
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize

from judgeaudit.stats.clustered import (
    METHOD_DIFFERENCE,
    METHOD_PROPORTION,
    anova_icc,
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
           "deff_pilot", "icc_pilot", "icc_used", "variance_source", "corr_pilot",
           "corr_used", "replicates", "power_at_target", "power_mcse", "power_holm",
           "holm_configuration", "power_bonferroni", "power_unadjusted", "power_configured",
           "power_pilot", "pilot_source", "n_panel_estimates", "closed_form_power",
           "mde_bonferroni", "meets_target", "power_note", "configured_n", "delivered_n",
           "shortfall", "method"]
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
    """Common random numbers of one cell: standard normals behind the cluster quantiles
    and the unit uniforms of both arms (the same draws serve every effect size and
    every arm correlation, so power is monotone along the bisections). `z_*_e` are
    the independent parts: arm b's normal is corr * z_a + sqrt(1 - corr^2) * z_e."""

    z_cluster: np.ndarray    # (R, G)
    z_cluster_e: np.ndarray  # (R, G)
    z_a: np.ndarray          # (R, n), or (R, G, reps) for the gap
    z_e: np.ndarray

    @property
    def u_cluster(self) -> np.ndarray:
        return ndtr(self.z_cluster)


def draws(cell: Cell, replicates: int, seed: int) -> Draws:
    rng = np.random.default_rng(seed)
    r, g = replicates, cell.n_clusters
    if cell.test == "protocol_gap":
        k = max(cell.reps)
        return Draws(rng.standard_normal((r, g)), rng.standard_normal((r, g)),
                     rng.standard_normal((r, g, k)), rng.standard_normal((r, g, k)))
    return Draws(rng.standard_normal((r, g)), rng.standard_normal((r, g)),
                 rng.standard_normal((r, cell.n_units)), rng.standard_normal((r, cell.n_units)))


def _mix(z_a: np.ndarray, z_e: np.ndarray, corr: float) -> np.ndarray:
    return corr * z_a + math.sqrt(max(1.0 - corr * corr, 0.0)) * z_e


def arm_outcomes(cell: Cell, d: Draws, p_a: float, p_b: float, rho: float, corr: float = 0.0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Simulated outcomes of both arms: (R, n) unit outcomes (Study A), or (R, G) per-item
    accuracies (Study B gap: arm a pairwise over reps[1] renderings, arm b pointwise over
    reps[0]). Arm a's cluster rate is Beta(p_a, rho) at quantile Phi(z_c), arm b's at
    Phi(corr z_c + sqrt(1 - corr^2) z_c'); the units (renderings) likewise, so `corr` is
    the latent (Gaussian-copula) correlation of the arms at both levels; 0 = independent."""
    ra = _beta_ppf(ndtr(d.z_cluster), p_a, rho)
    rb = _beta_ppf(ndtr(_mix(d.z_cluster, d.z_cluster_e, corr)), p_b, rho)
    ua, ub = ndtr(d.z_a), ndtr(_mix(d.z_a, d.z_e, corr))
    if cell.test == "protocol_gap":
        ya = (ua[:, :, :cell.reps[1]] < ra[:, :, None]).mean(axis=2)
        yb = (ub[:, :, :cell.reps[0]] < rb[:, :, None]).mean(axis=2)
        return ya, yb
    return ((ua < ra[:, cell.codes]).astype(float), (ub < rb[:, cell.codes]).astype(float))


def arm_correlation(cell: Cell, ya: np.ndarray, yb: np.ndarray) -> float:
    """The correlation of the two arms' cluster residual totals, pooled over replicates:
    sum S_a S_b / sqrt(sum S_a^2 sum S_b^2), S_g = the cluster's total of y - mean(y).
    For one unit per cluster (Study B items, one pair per source) it is the Pearson
    correlation of the paired values; it is the statistic `pilot_corr` measures."""
    if cell.test == "protocol_gap":
        sa, sb = ya - ya.mean(axis=1, keepdims=True), yb - yb.mean(axis=1, keepdims=True)
    else:
        onehot = np.zeros((cell.n_units, cell.n_clusters))
        onehot[np.arange(cell.n_units), cell.codes] = 1.0
        sa = (ya - ya.mean(axis=1, keepdims=True)) @ onehot
        sb = (yb - yb.mean(axis=1, keepdims=True)) @ onehot
    den = math.sqrt(float(np.sum(sa * sa)) * float(np.sum(sb * sb)))
    return float(np.sum(sa * sb)) / den if den > 0 else math.nan


def latent_corr(cell: Cell, d: Draws, p_a: float, p_b: float, rho: float, target: float,
                steps: int = 12) -> float:
    """The latent copula correlation whose simulated arm correlation (`arm_correlation`)
    equals the measured `target` at this design and these rates (bisection on the common
    random numbers over [-0.99, 0.99]; the bound when the target lies beyond it)."""
    if not math.isfinite(target) or target == 0:
        return 0.0

    def f(c: float) -> float:
        v = arm_correlation(cell, *arm_outcomes(cell, d, p_a, p_b, rho, c))
        return v if math.isfinite(v) else 0.0

    lo, hi = -0.99, 0.99
    if target >= f(hi):
        return hi
    if target <= f(lo):
        return lo
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def pvalues(cell: Cell, d: Draws, p0: float, effect: float, rho: float, alpha: float,
            corr: float = 0.0) -> np.ndarray:
    """One p-value per replicate from the printed estimator at rate p0 + effect (arm a;
    cut to [0, 1], so a negative effect is a rate below p0) vs p0 (null / arm b), the
    arms correlated by the latent `corr` (see `arm_outcomes`)."""
    kind = TESTS[cell.test][1]
    p1 = min(max(p0 + effect, 0.0), 1.0)
    if kind == "null":
        ra = _beta_ppf(ndtr(d.z_cluster), p1, rho)[:, cell.codes]
        ya = (ndtr(d.z_a) < ra).astype(float)
        out = np.empty(ya.shape[0])
        for i in range(out.size):
            out[i] = proportion_pvalue(clustered_proportion(ya[i], cell.codes, alpha), p0)
        return out
    ya, yb = arm_outcomes(cell, d, p1, p0, rho, corr)
    out = np.empty(ya.shape[0])
    if kind == "gap":
        for i in range(out.size):
            out[i] = clustered_difference(ya[i], yb[i], cell.codes, alpha).pvalue
        return out
    for i in range(out.size):
        out[i] = clustered_difference(ya[i], yb[i], cell.codes, alpha).pvalue
    return out


def holm_power(pv: Mapping[int, np.ndarray], copies: int, alpha: float) -> dict[int, float]:
    """Holm's power of every cell of a family when EVERY member is at its own effect
    (here: all at the target, Holm's most favourable case): `pv[c]` the cell's replicate
    p-values; the family is the cells x `copies` judges, judge j of replicate r taking
    replicate (r + j R / copies) mod R (independent replicates, no extra simulation).
    Holm by `stats.contrasts.holm_reject` (the step-down of `holm`, vectorised over
    replicates)."""
    keys = sorted(pv)
    r = len(pv[keys[0]])
    shift = max(r // max(copies, 1), 1)
    idx = (np.arange(r)[:, None] + shift * np.arange(copies)[None, :]) % r  # (R, copies)
    fam = np.concatenate([pv[k][idx] for k in keys], axis=1)  # (R, cells * copies)
    rej = holm_reject(fam, alpha)
    return {k: float(rej[:, i * copies:(i + 1) * copies].mean()) for i, k in enumerate(keys)}


def holm_power_among(target: np.ndarray, others: np.ndarray, alpha: float) -> float:
    """Holm's power for one member at the target effect in a family whose other members
    are `others` ((R, m - 1) p-values simulated at their stated configuration, e.g. the
    panel's estimates): P(the target member is rejected by Holm over all m)."""
    fam = np.concatenate([target[:, None], others], axis=1)
    return float(holm_reject(fam, alpha)[:, 0].mean())


def mde(cell: Cell, d: Draws, p0: float, rho: float, level: float, target: float,
        alpha: float, steps: int = 5, corr: float = 0.0) -> float:
    """Smallest effect (upward from p0) with simulated power >= target at `level`
    (bisection on the common random numbers); NaN if even p = 1 falls short."""
    def pw(e: float) -> float:
        return float(np.mean(pvalues(cell, d, p0, e, rho, alpha, corr) < level))
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


# ------------------------------------------------------------------ pilot
@dataclass
class Pilot:
    """What an earlier run (or this run's own first pass) measured: Study A metrics.tsv
    rows, Study A contrasts.tsv rows, and Study B scored protocol rows (judge, task, cue,
    item_id, protocol, correct; valid answers). `judges`: the audited judges whose
    estimates configure the Holm family (empty: the contrasts' `role` = audited, else
    every judge of the metrics); `source` names the files."""

    metrics: pd.DataFrame | None = None
    contrasts: pd.DataFrame | None = None
    items: pd.DataFrame | None = None
    judges: tuple[str, ...] = ()
    source: str = ""

    @property
    def empty(self) -> bool:
        return all(f is None or f.empty for f in (self.metrics, self.contrasts, self.items))

    def audited(self) -> list[str]:
        if self.judges:
            return list(self.judges)
        c = self.contrasts
        if c is not None and not c.empty and "role" in c:
            return sorted(set(c.loc[c["role"] == "audited", "judge"].astype(str)))
        names: set[str] = set()
        for f in (self.metrics, self.items):
            if f is not None and "judge" in f:
                names |= set(f["judge"].astype(str))
        return sorted(names)


def _as_pilot(pilot: Pilot | pd.DataFrame | None) -> Pilot | None:
    if pilot is None:
        return None
    if isinstance(pilot, Pilot):
        return None if pilot.empty else pilot
    return None if pilot.empty else Pilot(metrics=pilot, source="pilot metrics")


def _judge_rows(frame: pd.DataFrame | None, judges: Sequence[str]) -> pd.DataFrame | None:
    if frame is None or frame.empty:
        return None
    if judges and "judge" in frame:
        frame = frame[frame["judge"].astype(str).isin(list(judges))]
    return frame


def _metric_rows(metrics: pd.DataFrame | None, task: str, cond: str, metric: str
                 ) -> pd.DataFrame:
    if metrics is None or metrics.empty:
        return pd.DataFrame()
    m = metrics[(metrics["task"] == task) & (metrics["condition"] == cond)
                & (metrics["metric"] == metric)]
    if "seed" in m:
        m = m[m["seed"].astype(str) == "all"]
    return m


def pilot_icc(metrics: pd.DataFrame | None, keys: Sequence[tuple[str, str, str]],
              judges: Sequence[str] = ()) -> tuple[float, float]:
    """(deff, rho) from a pilot's Study A metrics rows of the cell's task x condition x
    metric (seed-pooled rows; rho = (deff - 1)/(n/G - 1), the median over judges (the
    `judges` given, else all) with a finite deff > 0 and n > G); (NaN, NaN) when none is
    usable (e.g. one unit per cluster: n = G)."""
    metrics = _judge_rows(metrics, judges)
    if metrics is None or not keys:
        return math.nan, math.nan
    deffs, rhos = [], []
    for task, cond, metric in keys:
        for r in _metric_rows(metrics, task, cond, metric).itertuples(index=False):
            deff, n, g = float(r.deff), float(r.n), float(r.n_clusters)
            if math.isfinite(deff) and deff > 0 and n > g >= 2:
                deffs.append(deff)
                rhos.append(min(max((deff - 1.0) / (n / g - 1.0), 0.0), 0.95))
    if not rhos:
        return math.nan, math.nan
    return float(np.median(deffs)), float(np.median(rhos))


CONTRAST_FAMILY = {"concat_vs_native_lock": "concat_vs_native_lock",
                   "fallible_vs_wrong": "fallible_vs_wrong_with_audio"}


def _gap_items(pilot: Pilot, task: str, cue: str, judge: str) -> pd.DataFrame:
    """Per item of one judge x task x cue: mean pointwise and pairwise accuracy (valid
    answers), items answered under both protocols."""
    f = pilot.items
    if f is None or f.empty:
        return pd.DataFrame(columns=["pointwise", "pairwise"])
    g = f[(f["judge"].astype(str) == judge) & (f["task"] == task)
          & (f["cue"].replace("", NO_CUE).fillna(NO_CUE) == cue)]
    means = g.groupby(["item_id", "protocol"])["correct"].mean().unstack()
    cols = [c for c in AUDIO_PROTOCOLS if c in means]
    return means[cols].dropna() if len(cols) == 2 else pd.DataFrame(columns=["pointwise",
                                                                            "pairwise"])


def pilot_cell(cell: Cell, pilot: Pilot | None, p0: float) -> dict[str, Any]:
    """What the pilot measured for one cell: deff and rho (Study A: `pilot_icc`; Study B:
    the ANOVA ICC of the pointwise renderings within items, median over judges), `corr`
    the arms' correlation (paired tests; median over audited judges, NaN when
    unmeasured) and `estimates` the audited judges' estimated effects (rate - p0 for the
    vs-null tests, the printed contrast / gap for the paired ones), in judge order.

    Study A arm correlation: from the judge's printed contrast and its two arms,
    r = (V_a + V_b - V_d) / (2 sqrt(V_a V_b)), V_arm = deff p (1 - p) / n (the CR2
    variance of the arm's rate, metrics.tsv) and V_d = (estimate / statistic)^2 (the
    contrast's CR2 variance, contrasts.tsv): the correlation of the arms' cluster
    residual totals. Study B: the Pearson correlation of the per-item pointwise and
    pairwise accuracies over the items answered under both."""
    out = {"deff": math.nan, "rho": math.nan, "corr": math.nan, "estimates": []}
    if pilot is None:
        return out
    judges = pilot.audited()
    if cell.study == "A":
        out["deff"], out["rho"] = pilot_icc(pilot.metrics, cell.pilot_keys, judges)
        metrics = _judge_rows(pilot.metrics, judges)
        fam = CONTRAST_FAMILY.get(cell.test)
        if fam is None:  # a vs-null test: the rate of the cell's one key
            rows = _metric_rows(metrics, *cell.pilot_keys[0])
            by = {str(r.judge): float(r.estimate) - p0 for r in rows.itertuples(index=False)
                  if math.isfinite(float(r.estimate))} if "judge" in rows else {}
            out["estimates"] = [by[j] for j in judges if j in by]
            return out
        con = _judge_rows(pilot.contrasts, judges)
        if con is None:
            return out
        con = con[(con["family"] == fam) & (con["task"] == cell.task)]
        ests, corrs = {}, []
        arms = [_metric_rows(metrics, *k) for k in cell.pilot_keys[:2]]
        for r in con.itertuples(index=False):
            est, stat = float(r.estimate), float(r.statistic)
            if math.isfinite(est):
                ests[str(r.judge)] = est
            if not (math.isfinite(stat) and stat != 0 and math.isfinite(est)):
                continue
            v = []
            for a in arms:
                a = a[a["judge"].astype(str) == str(r.judge)] if "judge" in a else a.iloc[0:0]
                if len(a) != 1:
                    break
                p, n, deff = float(a["estimate"].iloc[0]), float(a["n"].iloc[0]), float(
                    a["deff"].iloc[0])
                if not (0 < p < 1 and n > 0 and math.isfinite(deff) and deff > 0):
                    break
                v.append(deff * p * (1 - p) / n)
            if len(v) == 2:
                vd = (est / stat) ** 2
                corrs.append(min(max((v[0] + v[1] - vd) / (2 * math.sqrt(v[0] * v[1])),
                                     -1.0), 1.0))
        out["estimates"] = [ests[j] for j in judges if j in ests]
        out["corr"] = float(np.median(corrs)) if corrs else math.nan
        return out
    # Study B protocol gap
    cue = cell.cell.removeprefix("gap-")
    rhos, corrs, ests = [], [], []
    for j in judges:
        m = _gap_items(pilot, cell.task, cue, j)
        if len(m) == 0:
            continue
        ests.append(float((m["pairwise"] - m["pointwise"]).mean()))
        if len(m) >= 3 and m["pointwise"].std() > 0 and m["pairwise"].std() > 0:
            corrs.append(float(np.corrcoef(m["pointwise"], m["pairwise"])[0, 1]))
        f = pilot.items
        pt = f[(f["judge"].astype(str) == j) & (f["task"] == cell.task)
               & (f["cue"].replace("", NO_CUE).fillna(NO_CUE) == cue)
               & (f["protocol"] == "pointwise")]
        if pt["item_id"].nunique() >= 2 and len(pt) > pt["item_id"].nunique():
            rhos.append(anova_icc(pt["correct"].to_numpy(float), pt["item_id"].astype(str)))
    out["rho"] = float(np.median(rhos)) if rhos else math.nan
    out["corr"] = float(np.median(corrs)) if corrs else math.nan
    out["estimates"] = ests
    return out


# ------------------------------------------------------------------ the report
def report(trials: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any],
           configured: Mapping[tuple[str, str], tuple[int, int]] | None = None,
           audited: Mapping[str, int] | None = None,
           pilot: Pilot | pd.DataFrame | None = None) -> pd.DataFrame:
    """The power table. `cfg`: the `power` config section; `configured`: (study, task)
    -> (configured, delivered) size (`delivered_sizes`); `audited`: audited judges per
    study {"A": k, "B": k} (the Holm family's judge copies); `pilot`: what an earlier run
    or this run's first pass measured (`Pilot`, `read_pilot`; a bare Study A metrics
    frame is taken as its metrics).

    The headline `power_at_target` is the guaranteed power, P(p < alpha/m) (Bonferroni:
    Holm's power never falls below it whatever the other members' truth); `power_holm`
    is Holm's power under the configuration `holm_configuration` names: with a pilot,
    every other member at the panel's estimate for it (judge j of the family copy j);
    without one, every member at the target (Holm's most favourable case)."""
    alpha, target_power = float(cfg["alpha"]), float(cfg["power"])
    icc, reps_n = float(cfg["icc"]), int(cfg["replicates"])
    mde_reps, seed = int(cfg["mde_replicates"]), int(cfg["seed"])
    configured, audited = configured or {}, audited or {}
    pil = _as_pilot(pilot)
    cells = trial_cells(trials)
    fam_of = {id(c): f"{c.test} ({c.study})" for c in cells}
    members: dict[str, list[Cell]] = {}
    for c in cells:
        members.setdefault(fam_of[id(c)], []).append(c)
    rows = []
    for fam, group in sorted(members.items()):
        copies = max(int(audited.get(group[0].study, 1)), 1)
        m = len(group) * copies
        info = []
        base_seed = seed + 7919 * len(rows)
        for k, c in enumerate(group):
            tkey = TESTS[c.test][0]
            p0 = float(cfg["targets"][tkey]["baseline"])
            eff = float(cfg["targets"][tkey]["mde"])
            pc = pilot_cell(c, pil, p0)
            single = int(c.sizes.max()) <= 1 and c.test != "protocol_gap"
            if single:
                rho, source = 0.0, "one unit per cluster (no ICC enters)"
            elif math.isfinite(pc["rho"]):
                rho, source = pc["rho"], "pilot deff" if c.study == "A" else "pilot ICC"
            else:
                rho = icc
                source = ("configured icc (the pilot's is not estimable for this cell)"
                          if pil is not None else "configured icc")
            cseed = base_seed + 104729 * k
            d = draws(c, reps_n, cseed)
            paired = TESTS[c.test][1] != "null"
            corr = 0.0
            if paired and math.isfinite(pc["corr"]):
                corr = latent_corr(c, draws(c, min(reps_n, 200), cseed + 2),
                                   min(p0 + eff, 1.0), p0, rho, pc["corr"])
            pv = pvalues(c, d, p0, eff, rho, alpha, corr)
            pv_cfg = (pvalues(c, d, p0, eff, icc, alpha) if pil is not None and not single
                      else pv)
            dm = draws(c, mde_reps, cseed + 1)
            info.append({"cell": c, "p0": p0, "eff": eff, "pc": pc, "rho": rho,
                         "source": source, "corr": corr, "pv": pv, "pv_cfg": pv_cfg,
                         "mde": mde(c, dm, p0, rho, alpha / m, target_power, alpha,
                                    corr=corr)})
        panel = pil is not None and any(i["pc"]["estimates"] for i in info)
        if panel:
            # every member (cell x judge copy) at the panel's estimate for it, each its own
            # independent replicate; the member under study is replaced by its target run
            est_pv = {}
            for k, i in enumerate(info):
                ests = i["pc"]["estimates"]
                for j in range(copies):
                    e = float(ests[j % len(ests)]) if ests else 0.0
                    dj = draws(i["cell"], reps_n, base_seed + 104729 * k + 31 * (j + 1) + 5)
                    est_pv[(k, j)] = pvalues(i["cell"], dj, i["p0"], e, i["rho"], alpha,
                                             i["corr"])
            keys = sorted(est_pv)
            ph = {}
            for k, i in enumerate(info):
                vals = []
                for j in range(copies):
                    others = np.column_stack([est_pv[x] for x in keys if x != (k, j)]) \
                        if m > 1 else np.zeros((reps_n, 0))
                    vals.append(holm_power_among(i["pv"], others, alpha))
                ph[k] = float(np.mean(vals))
            n_est = sum(bool(i["pc"]["estimates"]) for i in info)
            config = (f"other members at the panel's estimates ({len(pil.audited())} audited "
                      f"judges of {pil.source or 'the pilot'}; {n_est} of {len(info)} cells "
                      "estimated, the rest null)")
        else:
            ph = holm_power({k: i["pv"] for k, i in enumerate(info)}, copies, alpha)
            config = "every member at the target effect (Holm's most favourable case)"
        for k, i in enumerate(info):
            c, pv, p0, eff = i["cell"], i["pv"], i["p0"], i["eff"]
            pb = float(np.mean(pv < alpha / m))
            want, got = configured.get((c.study, c.task), (None, None))
            sizes = c.sizes
            meets = bool(pb >= target_power)
            note = "" if meets else (
                f"underpowered: guaranteed (Bonferroni, family of {m}) power {pb:.2f} < "
                f"{target_power:g} at {p0:g} -> {min(p0 + eff, 1):g}; Holm {ph[k]:.2f} with "
                f"{config}")
            rows.append({
                "study": c.study, "task": c.task, "cell": c.cell, "test": c.test,
                "family": fam, "family_size": m, "cluster_unit": c.cluster_unit,
                "n_trials": c.n_trials, "n_units": c.n_units, "n_clusters": c.n_clusters,
                "min_cluster": int(sizes.min()), "max_cluster": int(sizes.max()),
                "baseline": p0, "target_effect": f"{p0:g} -> {min(p0 + eff, 1):g}",
                "mde_target": eff, "alpha": alpha, "power": target_power,
                "icc_configured": icc, "icc_source": str(cfg["icc_source"]),
                "deff_pilot": i["pc"]["deff"], "icc_pilot": i["pc"]["rho"],
                "icc_used": i["rho"], "variance_source": i["source"],
                "corr_pilot": i["pc"]["corr"], "corr_used": i["corr"] if TESTS[c.test][1]
                != "null" else math.nan,
                "replicates": len(pv), "power_at_target": pb,
                "power_mcse": math.sqrt(max(pb * (1 - pb), 1e-12) / len(pv)),
                "power_holm": ph[k], "holm_configuration": config,
                "power_bonferroni": pb, "power_unadjusted": float(np.mean(pv < alpha)),
                "power_configured": float(np.mean(i["pv_cfg"] < alpha / m)),
                "power_pilot": pb if pil is not None else math.nan,
                "pilot_source": pil.source if pil is not None else "",
                "n_panel_estimates": len(i["pc"]["estimates"]),
                "closed_form_power": closed_form_power(c, p0, eff, i["rho"], alpha),
                "mde_bonferroni": i["mde"],
                "meets_target": meets, "power_note": note,
                "configured_n": want, "delivered_n": got,
                "shortfall": bool(want is not None and got is not None and got < want),
                "method": (f"{METHOD[TESTS[c.test][1]]}; guaranteed power at alpha/m, m = "
                           f"{len(group)} cells x {copies} audited judges ({fam}); Holm "
                           f"with {config}; {len(pv)} replicates"),
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


def read_run_pilot(metrics: Sequence[str], contrasts: Sequence[str] = (),
                   scored: Sequence[str] = (), judges: Sequence[str] = (),
                   source: str = "") -> Pilot | None:
    """A `Pilot` from a run's files: Study A metrics.tsv (`read_pilot`), Study A
    contrasts.tsv (columns family, task, judge, estimate, statistic; role when present)
    and Study B scored protocol shards (only pointwise / pairwise rows, valid answers).
    A contrasts.tsv beside a listed metrics.tsv is read too when not listed."""
    from pathlib import Path

    met = read_pilot(list(metrics))
    con_paths = list(contrasts) or [str(Path(p).with_name("contrasts.tsv")) for p in metrics
                                     if Path(p).with_name("contrasts.tsv").is_file()]
    con = None
    if con_paths:
        con = pd.concat([pd.read_csv(p, sep="\t") for p in con_paths], ignore_index=True)
        need = {"family", "task", "judge", "estimate", "statistic"}
        if need - set(con.columns):
            raise ValueError(f"power pilot contrasts {con_paths}: lack columns "
                             f"{sorted(need - set(con.columns))}")
    items = None
    if scored:
        parts = []
        for p in scored:
            f = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
            need = {"judge", "task", "item_id", "protocol", "cue", "valid", "correct"}
            if need - set(f.columns):
                raise ValueError(f"power pilot scored file {p}: lacks columns "
                                 f"{sorted(need - set(f.columns))}")
            f = f[f["protocol"].isin(AUDIO_PROTOCOLS) & f["valid"].str.lower().eq("true")]
            parts.append(f[["judge", "task", "item_id", "protocol", "cue", "correct"]])
        items = pd.concat(parts, ignore_index=True) if parts else None
        if items is not None:
            items["correct"] = pd.to_numeric(items["correct"])
    pil = Pilot(met, con, items, tuple(judges), source)
    return None if pil.empty else pil


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
    """(shortfall messages, below-target-power messages), each naming the cell; the
    power named is the guaranteed (Bonferroni) power, with Holm's under its stated
    configuration beside it."""
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
            weak.append(f"cell {name} ({r.test}): guaranteed power {r.power_at_target:.2f} "
                        f"(Bonferroni, family of {r.family_size}; Holm {r.power_holm:.2f} with "
                        f"{r.holm_configuration}) at {r.target_effect} on {r.n_clusters} "
                        f"{r.cluster_unit} clusters is below {r.power:g} (MDE at alpha/m "
                        f"{mde_s})")
    return short, weak


def fallbacks(frame: pd.DataFrame) -> list[str]:
    """Cells that take the configured ICC although a pilot was given (its design effect
    is not estimable there), each named: the table says so in `variance_source`."""
    out = []
    for r in frame.itertuples(index=False):
        if str(r.variance_source).startswith("configured icc (the pilot"):
            out.append(f"cell {r.study}/{r.task}/{r.cell} ({r.test}): the pilot's design "
                       f"effect is not estimable here; the configured ICC {r.icc_used:g} "
                       "is used")
    return out


def headline(frame: pd.DataFrame) -> pd.DataFrame:
    """Per test: the weakest cell's guaranteed power at the target effect (for the
    closing note), the cells below the configured power and the family."""
    out = []
    for test, g in frame.groupby("test", sort=True):
        pw = g["power_at_target"].astype(float)
        i = pw.idxmin()
        out.append({"test": test, "target_effect": g.loc[i, "target_effect"],
                    "min_power": float(pw.min()),
                    "weakest_cell": f"{g.loc[i, 'study']}/{g.loc[i, 'task']}/{g.loc[i, 'cell']}",
                    "max_power": float(pw.max()), "n_cells": len(g),
                    "family_size": int(g["family_size"].max()),
                    "n_below": int((~g["meets_target"].astype(bool)).sum()),
                    "holm_min": float(g["power_holm"].astype(float).min()),
                    "holm_max": float(g["power_holm"].astype(float).max())})
    return pd.DataFrame(out)


__all__ = ["COLUMNS", "Cell", "Pilot", "TESTS", "arm_correlation", "arm_outcomes",
           "closed_form_power", "delivered_sizes", "draws", "fallbacks", "headline",
           "holm_power", "holm_power_among", "latent_corr", "mde", "pilot_cell", "pilot_icc",
           "problems", "pvalues", "read_pilot", "read_run_pilot", "report", "trial_cells"]
