"""An independent simulator of probe units for validating the audit's stopping rule.

Shares NO code with the estimator (`judgeaudit.audit.sequential`) or the judges:
it imports only NumPy (a test checks its imports). It draws the answers a judge
gives on one matched probe unit from planted propensities, with a cluster random
effect, and returns each unit's paired difference and cluster id, in the audit's
sampling order (one unit of each cluster in turn).

Scenarios (`kind`):
- "follow" (blueprint / reference): per cluster, the rate b_c at which the judge
  names the shown wrong label from the audio alone ~ Beta with mean `base` and
  intra-cluster spread `spread`; on the cue trial the judge follows the label with
  probability `follow`, else answers from the audio (independently, naming the
  label with probability b_c). D = [cue answer = label] - [control answer = label],
  so E[D] = follow * (1 - base) exactly.
- "slot" (pairwise): per pair, locked-first with probability `first`,
  locked-second with `second` (cluster-shared logit shift of both), else
  consistent; D = +1 / -1 / 0, E[D] = first - second at zero spread (the truth with
  spread is computed by `population_mean`).
"""

from __future__ import annotations

import numpy as np


def _order(n_clusters: int, per_cluster: int) -> np.ndarray:
    """Cluster id of each unit in round-robin order (unit j of every cluster, then j+1)."""
    return np.tile(np.arange(n_clusters), per_cluster)


def follow_units(rng: np.random.Generator, n_clusters: int, per_cluster: int, follow: float,
                 base: float, spread: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    cl = _order(n_clusters, per_cluster)
    if base > 0 and spread > 0:
        conc = (1.0 / spread**2) - 1.0  # Beta with mean base and ICC-like spread
        b = rng.beta(base * conc, (1 - base) * conc, size=n_clusters)
    else:
        b = np.full(n_clusters, float(base))
    bu = b[cl]
    followed = rng.random(cl.size) < follow
    cue = followed | (rng.random(cl.size) < bu)
    control = rng.random(cl.size) < bu
    return cue.astype(float) - control.astype(float), cl


def follow_truth(follow: float, base: float) -> float:
    return follow * (1.0 - base)


def slot_units(rng: np.random.Generator, n_clusters: int, per_cluster: int, first: float,
               second: float, spread: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    cl = _order(n_clusters, per_cluster)
    shift = rng.normal(0.0, spread, n_clusters)[cl] if spread > 0 else np.zeros(cl.size)
    w = np.exp(shift)
    p1 = first * w / (1 + first * (w - 1) + second * (w - 1))
    p2 = second * w / (1 + first * (w - 1) + second * (w - 1))
    u = rng.random(cl.size)
    d = np.where(u < p1, 1.0, np.where(u < p1 + p2, -1.0, 0.0))
    return d, cl


def population_mean(kind: str, params: dict, n: int = 400_000, seed: int = 12345) -> float:
    """The scenario's true mean difference from a very large population draw."""
    rng = np.random.default_rng(seed)
    if kind == "follow":
        d, _ = follow_units(rng, n // 4, 4, **params)
    else:
        d, _ = slot_units(rng, n // 4, 4, **params)
    return float(d.mean())
