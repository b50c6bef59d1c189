"""Null size of the across-placement test (`study_a.metrics.placement_wald`), checked by
an independent simulator (issue 32).

The data are generated here with NumPy alone (no code shared with the product): G speaker
clusters of unequal size (clips per speaker cycling 0.5c, c, 1.5c), each clip judged
under `seeds` derangement seeds at the four placements; the follow indicator is
Bernoulli with a speaker-specific rate (logit-normal, sd `--sd`, mean rate `--rate`:
skewed cluster means) plus a clip random effect, and NO placement effect (H0 true).
Each replicate is handed to the product's `placement_wald` as the joined frame it
reads, and the rejection rate at nominal 0.05 is reported with its Monte Carlo SE.
Beside it, the former reference (CR1 covariance, W/3 ~ F(3, G-1)), computed here in
NumPy from its definition, for comparison.

    PYTHONPATH=src python benchmarks/placement_wald_size.py --reps 4000 --clusters 8 12 24

Prints one line per G and a JSON summary; exits 1 when the product's size leaves
[0.04, 0.06] (the issue's band) -- at R = 4000 the Monte Carlo SE at 0.05 is 0.0034.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # small matrices: threads only contend

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

PLACEMENTS = ("system", "rubric", "before", "after")


def simulate(rng: np.random.Generator, g: int, clips: int, seeds: int, rate: float,
             sd: float, clip_sd: float) -> dict[str, np.ndarray]:
    sizes = np.maximum(1, np.rint(clips * np.array([0.5, 1.0, 1.5])[np.arange(g) % 3])
                       .astype(int))
    speaker = np.repeat(np.arange(g), sizes)
    n_clip = speaker.size
    eta = (math.log(rate / (1 - rate)) + rng.normal(0, sd, g)[speaker]
           + rng.normal(0, clip_sd, n_clip))
    clip = np.repeat(np.arange(n_clip), seeds * len(PLACEMENTS))
    seed = np.tile(np.repeat(np.arange(seeds), len(PLACEMENTS)), n_clip)
    place = np.tile(np.arange(len(PLACEMENTS)), n_clip * seeds)
    p = 1.0 / (1.0 + np.exp(-eta[clip]))
    follow = rng.random(clip.size) < p
    return {"clip": clip, "seed": seed, "place": place, "speaker": speaker[clip],
            "follow": follow}


def product_frame(d: dict[str, np.ndarray]) -> pd.DataFrame:
    """The joined frame `placement_wald` reads: parsed vs wrong_label, cluster, condition,
    clip_id, seed."""
    return pd.DataFrame({
        "parsed": np.where(d["follow"], "w", "x"), "wrong_label": "w",
        "cluster": [f"s{s}" for s in d["speaker"]],
        "condition": np.array(PLACEMENTS, dtype=object)[d["place"]],
        "clip_id": [f"c{c}" for c in d["clip"]], "seed": d["seed"]})


def cr1_reference(d: dict[str, np.ndarray]) -> float:
    """The former test from its definition: within-unit OLS, CR1 covariance with the
    G/(G-1) (n-1)/(n-k) factor, W/3 ~ F(3, G-1). NumPy only (plus scipy's F tail)."""
    from scipy.stats import f as f_dist

    unit = d["clip"] * 1000 + d["seed"]
    _, u = np.unique(unit, return_inverse=True)
    y = d["follow"].astype(float)
    X = np.stack([(d["place"] == k).astype(float) for k in range(1, 4)], axis=1)
    cnt = np.bincount(u).astype(float)

    def dm(v):
        return v - (np.bincount(u, weights=v) / cnt)[u]

    yd = dm(y)
    Xd = np.stack([dm(X[:, j]) for j in range(3)], axis=1)
    if not np.any(np.abs(yd) > 1e-12):
        return 1.0
    binv = np.linalg.inv(Xd.T @ Xd)
    b = binv @ Xd.T @ yd
    e = yd - Xd @ b
    _, c = np.unique(d["speaker"], return_inverse=True)
    g = c.max() + 1
    s = np.stack([np.bincount(c, weights=Xd[:, j] * e, minlength=g) for j in range(3)], 1)
    n, k = yd.size, 3
    cov = binv @ (s.T @ s) @ binv * g / (g - 1) * (n - 1) / (n - k)
    w = float(b @ np.linalg.solve(cov, b))
    return float(f_dist.sf(w / 3, 3, g - 1))


def run(g: int, reps: int, seed: int, clips: int, seeds: int, rate: float, sd: float,
        clip_sd: float, n_boot: int | None = None, progress: int = 0) -> dict:
    """`n_boot`: the bootstrap draws per test (None: the product's default); any B with
    0.05 (B + 1) an integer gives the same size in expectation, a smaller B only adds
    noise to each p-value. `progress`: print the running size every that many reps."""
    from judgeaudit.study_a.metrics import placement_wald

    rng = np.random.default_rng([seed, g])
    new, old = [], []
    kw = {} if n_boot is None else {"n_boot": int(n_boot)}
    for i in range(reps):
        d = simulate(rng, g, clips, seeds, rate, sd, clip_sd)
        row = placement_wald(product_frame(d), "placement_rf", "sim", "speaker", PLACEMENTS,
                             **kw)
        new.append(row["pvalue"])
        old.append(cr1_reference(d))
        if progress and (i + 1) % progress == 0:
            ok_p = np.asarray(new, float)[np.isfinite(new)]
            print(f"G={g} after {i + 1} reps: size {np.mean(ok_p < 0.05):.4f} "
                  f"({ok_p.size} finite)", flush=True)
    new, old = np.asarray(new, float), np.asarray(old, float)
    ok = np.isfinite(new)
    size = float(np.mean(new[ok] < 0.05))
    return {"G": g, "reps": int(ok.sum()), "size_cr2_wcr": size,
            "mcse": math.sqrt(0.05 * 0.95 / max(ok.sum(), 1)),
            "size_cr1_F3_Gm1": float(np.mean(old < 0.05)), "method": row["method"],
            "n_boot": n_boot}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--clusters", type=int, nargs="+", default=[8, 12, 24])
    ap.add_argument("--clips", type=int, default=10, help="clips per median speaker")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--rate", type=float, default=0.2, help="median follow rate")
    ap.add_argument("--sd", type=float, default=1.0, help="speaker sd on the logit scale")
    ap.add_argument("--clip-sd", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--n-boot", type=int, default=None,
                    help="bootstrap draws per test (default: the product's)")
    ap.add_argument("--progress", type=int, default=0, help="print every N reps")
    a = ap.parse_args(argv)
    out = [run(g, a.reps, a.seed, a.clips, a.seeds, a.rate, a.sd, a.clip_sd, a.n_boot,
               a.progress) for g in a.clusters]
    for r in out:
        print(f"G={r['G']:3d}: null size CR2 WCR {r['size_cr2_wcr']:.4f} "
              f"(MC SE {r['mcse']:.4f}, {r['reps']} reps); former CR1 W/3~F(3,G-1) "
              f"{r['size_cr1_F3_Gm1']:.4f}")
    print(json.dumps(out))
    return 0 if all(0.04 <= r["size_cr2_wcr"] <= 0.06 for r in out) else 1


if __name__ == "__main__":
    sys.exit(main())
