"""An independent simulator of probe answers for validating the audit's stopping rule.

Shares NO code with the estimator (`judgeaudit.audit.sequential`, `.run`) or the
judges: it imports only NumPy (a test checks its imports). It draws the answers a
judge gives on the trials of matched probe units from planted propensities that
differ between clusters, at a stated intra-cluster correlation (ICC), with invalid
answers, in the audit's sampling order (one unit of each cluster in turn).

Cluster-specific propensities: a propensity with mean m and ICC rho is drawn per
cluster from Beta(m (1/rho - 1), (1 - m) (1/rho - 1)); the 0/1 outcomes of units
sharing a cluster then correlate at exactly rho (Var p_c = rho m (1 - m)). At rho
0.3-0.5 and m ~ 0.2 most clusters barely follow and a few follow almost always: the
skewed cluster means under which a plain t interval's `grounded` side errs.

Scenarios:
- follow (blueprint / reference): per cluster the rate b_c at which the judge names
  the shown wrong label from the audio alone (mean `base`) and the rate f_c at which
  it follows a shown label (mean `follow`), both at ICC `icc`, independent. The cue
  trial names the label when the judge follows, else with probability b_c; the
  control trial with probability b_c. D = [cue names it] - [control names it], so
  E[D] = follow * (1 - base) exactly (`follow_truth`). The contrasts of a protocol
  share the cluster base rates, and with `shared_control` the control trial too
  (blueprint: the audio-only answer serves both contrasts).
- slot (pairwise): per cluster the probabilities of a locked-first, locked-second
  and consistent pair ~ Dirichlet with mean (first, second, 1 - first - second) and
  concentration 1/icc - 1 (ICC of the locked-first indicator = icc). Locked first:
  A in both orders; locked second: B in both; consistent: A in one order and B in
  the other. D = [A in AB] + [A in BA] - 1, E[D] = first - second exactly.
- invalid answers: every trial's answer is invalid (no answer / unparseable) with
  probability `invalid` (per arm: `invalid_plus` for the cue / AB trial), independent
  of everything else.
"""

from __future__ import annotations

import numpy as np


def _order(n_clusters: int, per_cluster: int) -> np.ndarray:
    """Cluster id of each unit in round-robin order (unit j of every cluster, then j+1)."""
    return np.tile(np.arange(n_clusters), per_cluster)


def beta_icc(rng: np.random.Generator, mean: float, icc: float, size: int) -> np.ndarray:
    """Cluster propensities with the given mean and ICC (constant when icc = 0 or the
    mean is 0 or 1)."""
    mean = float(mean)
    if icc <= 0 or mean <= 0 or mean >= 1:
        return np.full(size, mean)
    conc = 1.0 / icc - 1.0
    return rng.beta(mean * conc, (1.0 - mean) * conc, size=size)


def follow_protocol(rng: np.random.Generator, n_clusters: int, per_cluster: int,
                    follows: list[float], base: float, icc: float = 0.2, invalid: float = 0.0,
                    invalid_plus: float | None = None, shared_control: bool = True) -> dict:
    """Answers of one follow protocol with len(follows) contrasts. Arrays (units in
    sampling order): cluster (n,), cue / cue_valid (m, n), control / control_valid
    (m, n) (the same row repeated when the control is shared)."""
    cl = _order(n_clusters, per_cluster)
    n, m = cl.size, len(follows)
    b = beta_icc(rng, base, icc, n_clusters)[cl]
    q_plus = invalid if invalid_plus is None else invalid_plus
    cue = np.empty((m, n), dtype=bool)
    for j, f in enumerate(follows):
        fc = beta_icc(rng, f, icc, n_clusters)[cl]
        cue[j] = (rng.random(n) < fc) | (rng.random(n) < b)
    if shared_control:
        control = np.repeat((rng.random(n) < b)[None, :], m, axis=0)
        control_valid = np.repeat((rng.random(n) >= invalid)[None, :], m, axis=0)
    else:
        control = rng.random((m, n)) < b[None, :]
        control_valid = rng.random((m, n)) >= invalid
    return {"cluster": cl, "cue": cue, "cue_valid": rng.random((m, n)) >= q_plus,
            "control": control, "control_valid": control_valid}


def slot_protocol(rng: np.random.Generator, n_clusters: int, per_cluster: int,
                  locks: list[tuple[float, float]], icc: float = 0.2, invalid: float = 0.0,
                  invalid_plus: float | None = None) -> dict:
    """Answers of one pairwise protocol with one contrast per (first, second) lock
    rate pair: ab_is_a / ba_is_a (m, n) booleans with their validity."""
    cl = _order(n_clusters, per_cluster)
    n, m = cl.size, len(locks)
    q_plus = invalid if invalid_plus is None else invalid_plus
    ab = np.empty((m, n), dtype=bool)
    ba = np.empty((m, n), dtype=bool)
    for j, (first, second) in enumerate(locks):
        mean = np.array([first, second, 1.0 - first - second], dtype=float)
        if icc > 0 and np.all(mean > 0):
            p = rng.dirichlet(mean * (1.0 / icc - 1.0), size=n_clusters)
        else:
            p = np.repeat(mean[None, :], n_clusters, axis=0)
        pu = p[cl]
        u = rng.random(n)
        state = np.where(u < pu[:, 0], 0, np.where(u < pu[:, 0] + pu[:, 1], 1, 2))
        flip = rng.random(n) < 0.5  # which consistent answer (A in AB, or A in BA)
        ab[j] = (state == 0) | ((state == 2) & flip)
        ba[j] = (state == 0) | ((state == 2) & ~flip)
    return {"cluster": cl, "ab_is_a": ab, "ab_valid": rng.random((m, n)) >= q_plus,
            "ba_is_a": ba, "ba_valid": rng.random((m, n)) >= invalid}


def follow_truth(follow: float, base: float) -> float:
    return follow * (1.0 - base)


def slot_truth(first: float, second: float) -> float:
    return first - second


def follow_units(rng: np.random.Generator, n_clusters: int, per_cluster: int, follow: float,
                 base: float, icc: float = 0.2, invalid: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """One follow contrast's unit differences (NaN where a trial is invalid) and
    cluster ids."""
    s = follow_protocol(rng, n_clusters, per_cluster, [follow], base, icc, invalid)
    d = s["cue"][0].astype(float) - s["control"][0].astype(float)
    d[~(s["cue_valid"][0] & s["control_valid"][0])] = np.nan
    return d, s["cluster"]


def slot_units(rng: np.random.Generator, n_clusters: int, per_cluster: int, first: float,
               second: float, icc: float = 0.2, invalid: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    s = slot_protocol(rng, n_clusters, per_cluster, [(first, second)], icc, invalid)
    d = s["ab_is_a"][0].astype(float) + s["ba_is_a"][0].astype(float) - 1.0
    d[~(s["ab_valid"][0] & s["ba_valid"][0])] = np.nan
    return d, s["cluster"]
