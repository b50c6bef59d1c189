"""A joint cluster-robust Wald test with a small-sample reference that holds its size at
few clusters (the across-placement test of Study A, `study_a.metrics.placement_wald`).

`cluster_wald_f(y, X, clusters, absorb)`: OLS of y on the q columns of X after absorbing
the fixed effects of `absorb` (units nested in clusters, removed by demeaning within
unit), H0: every coefficient 0.

- Covariance: the bias-reduced CR2 estimator (Bell & McCaffrey 2002) of the model WITH
  its fixed effects, V = B^-1 [sum_g X_g' A_g e_g e_g' A_g X_g] B^-1, B = X'X of the
  demeaned design, A_g the symmetric inverse square root of the cluster's block of the
  full model's residual maker, (I - P_D - H)_gg (P_D the within-unit averaging, H the
  demeaned design's hat matrix). The block is singular (each unit's demeaned residuals
  sum to 0), so A_g is its Moore-Penrose inverse square root, as Pustejovsky & Tipton
  (2018, J. Bus. Econ. Stat. 36(4)) define CR2 for fixed-effects models.
- Reference (the p-value): the wild cluster restricted bootstrap (WCR; Cameron,
  Gelbach & Miller 2008, Rev. Econ. Stat. 90(3), the "wild bootstrap-t" imposing H0)
  of the CR2 Wald statistic W = b' V^-1 b. Under H0 the restricted model is the fixed
  effects alone, so the restricted residuals are the demeaned outcomes yd; bootstrap
  sample b is y*_g = v_gb yd_g (one weight per cluster), refitted with the same CR2
  adjustments (they depend on X only), and the p-value is the share of W*_b >= W
  (`wcr_pvalue`). Weights (`boot_weights`): below 12 clusters Webb's six-point
  distribution (Webb 2023, Can. J. Econ. 56(3), "Reworking wild bootstrap-based
  inference for clustered errors": +-sqrt(1/2), +-1, +-sqrt(3/2), each 1/6), because
  Rademacher's 2^(G-1) distinct draws are too few there (MacKinnon & Webb 2017,
  J. Appl. Econometrics 32(2)); from 12 clusters on Rademacher (+-1), whose fourth
  moment matches (with Webb's weights the size crept up to 0.058-0.060 at G = 12-24 in
  the simulator below; Rademacher 0.051-0.052 there, but 0.039 at G = 8). The weights
  are symmetric and W* is even in v, so the distinct draws (6^G / 2 or 2^(G-1)) are
  enumerated exactly when they are at most `n_boot`, else `n_boot` draws from a seeded
  generator (p = (1 + #{W*_b >= W}) / (1 + n_boot)). Null size by the independent
  simulator (benchmarks/placement_wald_size.py, R = 4000): inside [0.04, 0.06] at
  G = 8, 12 and 24 (docs/inference.md has the numbers).
- Also returned, not used for the p-value: the approximate Hotelling T^2 (HTZ)
  reference of Pustejovsky & Tipton (2018, sec. 3.2), F = (eta - q + 1) / (eta q) W ~
  F(q, eta - q + 1) with eta the Wishart df matching the CR2 covariance's variance
  (`htz_df`; `pvalue_htz`), and the plain T^2 scaling (G - q)/(q (G - 1)) W ~
  F(q, G - q) (`pvalue_t2_g`). By the same simulator HTZ is conservative at G = 8
  (size 0.032) and the T^2 scaling on G over-rejects at G = 24 (0.063: unequal
  clusters leave fewer effective df than G - 1 at every G), which is why the bootstrap
  is the reference. The reference before issue 32, W / q ~ F(q, G - 1) with the CR1
  covariance, over-rejected (0.083 at G = 24, 0.14 at G = 8).

Pure NumPy/SciPy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

METHOD_CR2_WCR = "ols_within_cr2_wcr"  # the method registry's key (stats.methods)
N_BOOT = 9999  # bootstrap draws of the WCR p-value (MC SE at p = 0.05: 0.0022)
BOOT_SEED = 32  # the draws' seed: the same data give the same p-value
WEBB_WEIGHTS = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0,
                         math.sqrt(1.5)])
RADEMACHER_WEIGHTS = np.array([-1.0, 1.0])
RADEMACHER_MIN_CLUSTERS = 12  # from this many clusters on Rademacher weights, Webb's below


def boot_weights(n_clusters: int) -> np.ndarray:
    """The WCR weight distribution at G clusters: Webb's six-point weights below
    `RADEMACHER_MIN_CLUSTERS` (Rademacher's 2^(G-1) distinct draws are too few there),
    Rademacher (+-1, each 1/2) from it on (its fourth moment 1 matches the errors'
    second-order behaviour; Webb's is 7/6)."""
    return WEBB_WEIGHTS if n_clusters < RADEMACHER_MIN_CLUSTERS else RADEMACHER_WEIGHTS


def _codes(ids: Sequence | np.ndarray) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray(ids, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if codes.size else 0


def _inv_sqrt_psd(m: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Moore-Penrose inverse square root of a symmetric positive semi-definite matrix."""
    w, v = np.linalg.eigh((m + m.T) / 2)
    keep = w > tol * max(1.0, float(np.abs(w).max()) if w.size else 1.0)
    return (v[:, keep] / np.sqrt(w[keep])) @ v[:, keep].T


def demean(values: np.ndarray, unit_codes: np.ndarray, n_units: int) -> np.ndarray:
    """Columns of `values` (n x k) minus their unit means (the within transformation)."""
    v = np.asarray(values, dtype=float)
    v2 = v.reshape(v.shape[0], -1)
    sizes = np.bincount(unit_codes, minlength=n_units).astype(float)
    means = np.stack([np.bincount(unit_codes, weights=v2[:, j], minlength=n_units)
                      for j in range(v2.shape[1])], axis=1) / sizes[:, None]
    return (v2 - means[unit_codes]).reshape(v.shape)


def cluster_wald_f(y: Sequence | np.ndarray, X: Sequence | np.ndarray,
                   clusters: Sequence | np.ndarray,
                   absorb: Sequence | np.ndarray | None = None, n_boot: int = N_BOOT,
                   seed: int = BOOT_SEED) -> dict:
    """Joint test that every coefficient of X is 0 (see the module docstring).

    Returns {wald (W), statistic (W / q), pvalue (the wild cluster restricted bootstrap,
    weights of `boot_weights`, `wcr_pvalue`), n_boot (draws; 0 when enumerated), enumerated, df1 (q),
    df2 (eta - q + 1), eta, pvalue_htz (the HTZ F's p), statistic_htz, pvalue_t2_g (the
    T^2 scaling on G), n_clusters, beta, status}; status "ok",
    "too_few_clusters" (G - q < 1 or eta - q + 1 <= 0), "rank_deficient" (the design
    or the CR2 covariance has rank < q) or "no_variation" (every demeaned outcome 0: the
    statistic is 0, p = 1)."""
    from scipy.stats import f as f_dist

    yv = np.asarray(y, dtype=float).ravel()
    Xv = np.asarray(X, dtype=float).reshape(yv.size, -1)
    n, q = Xv.shape
    cl, g = _codes(clusters)
    if cl.size != n:
        raise ValueError(f"cluster_wald_f: {cl.size} cluster ids for {n} rows")
    out = {"wald": math.nan, "statistic": math.nan, "df1": q, "df2": math.nan,
           "eta": math.nan, "pvalue": math.nan, "pvalue_htz": math.nan,
           "statistic_htz": math.nan, "pvalue_t2_g": math.nan, "n_boot": 0,
           "enumerated": False, "n_clusters": g, "beta": np.full(q, math.nan),
           "status": "ok"}
    if absorb is not None:
        uc, nu = _codes(absorb)
        if uc.size != n:
            raise ValueError(f"cluster_wald_f: {uc.size} absorbed-unit ids for {n} rows")
        first = np.full(nu, -1)
        first[uc[::-1]] = cl[::-1]
        if np.any(first[uc] != cl):
            raise ValueError("cluster_wald_f: the absorbed units must be nested in the "
                             "clusters (a unit spans two clusters)")
        yd, Xd = demean(yv, uc, nu), demean(Xv, uc, nu)
    else:
        uc, nu = None, 0
        yd, Xd = yv - yv.mean(), Xv - Xv.mean(axis=0)
    if g - q < 1:
        out["status"] = "too_few_clusters"
        return out
    if not np.any(np.abs(yd) > 1e-12):
        out.update({"wald": 0.0, "statistic": 0.0, "pvalue": 1.0, "status": "no_variation"})
        return out
    bread = Xd.T @ Xd
    if np.linalg.matrix_rank(bread) < q:
        out["status"] = "rank_deficient"
        return out
    binv = np.linalg.inv(bread)
    beta = binv @ (Xd.T @ yd)
    e = yd - Xd @ beta
    resid0 = yd  # the residuals of the model restricted by H0 (fixed effects only)
    meat = np.zeros((q, q))
    order = np.argsort(cl, kind="stable")
    bounds = np.searchsorted(cl[order], np.arange(g + 1))
    blocks = []
    for k in range(g):
        idx = order[bounds[k]:bounds[k + 1]]
        xg = Xd[idx]
        resid_maker = np.eye(idx.size) - xg @ binv @ xg.T
        if uc is not None:  # minus the within-unit averaging of the absorbed effects
            u = uc[idx]
            same = (u[:, None] == u[None, :]).astype(float)
            resid_maker -= same / same.sum(axis=1, keepdims=True)
        else:
            resid_maker -= 1.0 / n  # the intercept's hat block
        a = _inv_sqrt_psd(resid_maker)
        s = xg.T @ (a @ e[idx])
        meat += np.outer(s, s)
        blocks.append((idx, a, xg))
    cov = binv @ meat @ binv
    if np.linalg.matrix_rank(cov) < q:
        out["status"] = "rank_deficient"
        out["beta"] = beta
        return out
    wald = float(beta @ np.linalg.solve(cov, beta))
    eta = htz_df(blocks, Xd, binv, uc, nu, n)
    df2 = eta - q + 1
    if not df2 > 0:
        out.update({"wald": wald, "beta": beta, "eta": eta, "status": "too_few_clusters"})
        return out
    fstat = df2 / (q * eta) * wald
    t2g = (g - q) / (q * (g - 1)) * wald
    pboot, draws, enumerated = wcr_pvalue(blocks, resid0, binv, wald, n_boot, seed)
    out.update({"wald": wald, "statistic": wald / q, "beta": beta, "eta": eta, "df2": df2,
                "pvalue": pboot, "n_boot": draws, "enumerated": enumerated,
                "statistic_htz": fstat, "pvalue_htz": float(f_dist.sf(fstat, q, df2)),
                "pvalue_t2_g": float(f_dist.sf(t2g, q, g - q))})
    return out


def _boot_wald(parts: tuple, v: np.ndarray) -> np.ndarray:
    """W* of each row of the cluster weights v (B x G), by linearity in v: with
    y*_g = v_g r_g (r the restricted residuals), b* = B^-1 sum_h v_h c_h (c_h = X_h' r_h),
    the refit's CR2 score of cluster g is v_g a_g - M_g b* - m_g ybar*, a_g = X_g' A_g r_g,
    M_g = X_g' A_g X_g, m_g = X_g' A_g 1 and ybar* = sum_h v_h t_h / n (t_h = 1' r_h;
    0 when fixed effects nested in the clusters are absorbed)."""
    binv, c, a, m_mat, m_one, t, n = parts
    beta = v @ (c @ binv)  # (B, q); binv symmetric
    ybar = v @ t / n  # (B,)
    s = v[:, :, None] * a[None] - np.einsum("gij,bj->bgi", m_mat, beta) \
        - ybar[:, None, None] * m_one[None]
    meat = np.einsum("bgi,bgj->bij", s, s)
    cov = binv[None] @ meat @ binv[None]
    sol = np.linalg.pinv(cov, hermitian=True) @ beta[:, :, None]
    return np.einsum("bi,bi->b", beta, sol[:, :, 0])


def wcr_pvalue(blocks: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
               resid0: np.ndarray, binv: np.ndarray, wald: float, n_boot: int = N_BOOT,
               seed: int = BOOT_SEED, chunk: int = 2000) -> tuple[float, int, bool]:
    """The wild cluster restricted bootstrap p-value of the CR2 Wald statistic `wald`
    with the weights of `boot_weights` (module docstring): (p, draws, enumerated).
    `blocks`: (row indices, CR2 adjustment A_g, demeaned design rows X_g) per cluster;
    `resid0`: the residuals under H0. Every weight vector and its negative give the
    same W*, so when (number of weight values)^G / 2 <= n_boot (Webb: G <= 5;
    Rademacher: G <= 14 at the default) the half with v_1 > 0 is enumerated and p is
    exact (draws 0); otherwise n_boot seeded draws, p = (1 + #{W* >= W}) / (1 + n_boot).
    W* >= W is judged with a relative tolerance of 1e-9 (the original sample's own W*
    equals W up to rounding)."""
    g = len(blocks)
    q = binv.shape[0]
    n = resid0.size
    c = np.zeros((g, q))
    a = np.zeros((g, q))
    m_mat = np.zeros((g, q, q))
    m_one = np.zeros((g, q))
    t = np.zeros(g)
    for k, (idx, adj, xg) in enumerate(blocks):
        r = resid0[idx]
        c[k] = xg.T @ r
        a[k] = xg.T @ (adj @ r)
        m_mat[k] = xg.T @ adj @ xg
        m_one[k] = xg.T @ adj.sum(axis=1)
        t[k] = r.sum()
    parts = (binv, c, a, m_mat, m_one, t, n)
    cut = wald * (1 - 1e-9)
    weights = boot_weights(g)
    if weights.size ** g // 2 <= n_boot:
        grid = np.stack(np.meshgrid(*([weights] * (g - 1)), indexing="ij"),
                        axis=-1).reshape(-1, g - 1)
        hits = 0
        positive = weights[weights > 0]
        for first in positive:
            v = np.column_stack([np.full(len(grid), first), grid])
            for lo in range(0, len(v), chunk):
                hits += int(np.sum(_boot_wald(parts, v[lo:lo + chunk]) >= cut))
        return hits / (len(grid) * positive.size), 0, True
    rng = np.random.default_rng(seed)
    hits = 0
    for lo in range(0, n_boot, chunk):
        v = weights[rng.integers(0, weights.size, (min(chunk, n_boot - lo), g))]
        hits += int(np.sum(_boot_wald(parts, v) >= cut))
    return (1 + hits) / (1 + n_boot), int(n_boot), False


def htz_df(blocks: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], Xd: np.ndarray,
           binv: np.ndarray, uc: np.ndarray | None, nu: int, n: int) -> float:
    """Degrees of freedom eta of the HTZ test (Pustejovsky & Tipton 2018, sec. 3.2): the
    Wishart df whose total variance of the standardised CR2 covariance matches the one
    it has under the working model (independent, homoskedastic errors):
    eta = q (q + 1) / sum_{s,t} Var(g_s' Omega g_t), g_s the rows of (X'X)^(1/2) (the
    working covariance's inverse root), Var by the normal quadratic-form moments.
    With g_s' Omega g_t = sum_j (p_sj' e_j)(p_tj' e_j), p_sj = A_j X_j M g_s and
    e = (I - H) epsilon, each term is epsilon' u_sj u_tj' epsilon, u_sj = (I - H)_{., j}
    p_sj; Var = sum_{j,k} (u_sj.u_sk)(u_tj.u_tk) + (u_sj.u_tk)(u_tj.u_sk)."""
    q = binv.shape[0]
    w, v = np.linalg.eigh(binv)
    gmat = (v / np.sqrt(w)) @ v.T  # (X'X)^(1/2) = Omega_model^(-1/2), symmetric
    g = len(blocks)
    U = np.zeros((n, g * q))
    for j, (idx, a, xg) in enumerate(blocks):
        pj = a @ (xg @ (binv @ gmat))  # (n_j, q): p_sj as columns
        vj = np.zeros((n, q))
        vj[idx] = pj
        if uc is not None:
            sizes = np.bincount(uc[idx], minlength=nu).astype(float)
            means = np.stack([np.bincount(uc[idx], weights=pj[:, s], minlength=nu)
                              for s in range(q)], axis=1)
            vj[idx] -= means[uc[idx]] / sizes[uc[idx], None]
        else:
            vj -= pj.sum(axis=0) / n
        vj -= Xd @ (binv @ (xg.T @ pj))
        U[:, j * q:(j + 1) * q] = vj
    K = (U.T @ U).reshape(g, q, g, q)  # K[j, s, k, t] = u_sj . u_tk
    diag = np.einsum("jsks->sjk", K)
    total = float(np.sum(diag.sum(axis=0) ** 2) + np.einsum("jskt,jtks->", K, K))
    return q * (q + 1) / total if total > 0 else math.nan


__all__ = ["BOOT_SEED", "METHOD_CR2_WCR", "N_BOOT", "RADEMACHER_MIN_CLUSTERS",
           "RADEMACHER_WEIGHTS", "WEBB_WEIGHTS", "boot_weights", "cluster_wald_f", "demean",
           "htz_df", "wcr_pvalue"]
