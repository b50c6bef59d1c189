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
- Reference: the approximate Hotelling T^2 (HTZ) test of Pustejovsky & Tipton (2018,
  sec. 3.2). The Wald statistic W = b' V^-1 b is treated as Hotelling's T^2 with eta
  degrees of freedom, F = (eta - q + 1) / (eta q) W ~ F(q, eta - q + 1), eta the
  Wishart df matching the variance of the CR2 covariance under the working model
  (`htz_df`); with equal clusters and a balanced design eta = G - 1 and it is the plain
  T^2 scaling (G - q)/(q (G - 1)) W ~ F(q, G - q) (also returned, `pvalue_t2_g`). The
  previous reference, W / q ~ F(q, G - 1) with the CR1 covariance, over-rejected (null
  size 0.069-0.075 at G = 24, 0.17 at G = 8 with unequal, skewed clusters:
  benchmarks/placement_wald_size.py, an independent NumPy simulator).

Pure NumPy/SciPy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

METHOD_CR2_HOTELLING = "ols_within_cr2_hotelling_f"


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
                   absorb: Sequence | np.ndarray | None = None) -> dict:
    """Joint test that every coefficient of X is 0 (see the module docstring).

    Returns {wald, statistic (the HTZ F), df1 (q), df2 (eta - q + 1), eta, pvalue,
    pvalue_t2_g (the T^2 scaling on G), n_clusters, beta, status}; status "ok",
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
           "eta": math.nan, "pvalue": math.nan, "pvalue_t2_g": math.nan, "n_clusters": g, "beta": np.full(q, math.nan), "status": "ok"}
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
    out.update({"wald": wald, "statistic": fstat, "beta": beta, "eta": eta, "df2": df2,
                "pvalue": float(f_dist.sf(fstat, q, df2)),
                "pvalue_t2_g": float(f_dist.sf(t2g, q, g - q))})
    return out


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


__all__ = ["METHOD_CR2_HOTELLING", "cluster_wald_f", "demean", "htz_df"]
