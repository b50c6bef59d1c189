"""Benchmark: the judge audit's verdict error rates and the calls saved by group-
sequential stopping, at few clusters with cluster-specific propensities and invalid
answers.

Answers are drawn by the independent simulator `judgeaudit.audit.simcheck` (NumPy
only, no code shared with the estimator): per cluster a follow / lock propensity
drawn at the stated ICC (Beta / Dirichlet), so cluster means are skewed, and each
trial's answer invalid with the stated probability. They are judged by the product's
own stopping loop (`judgeaudit.audit.run.stopping_loop` through
`judgeaudit.audit.validate.simulate_protocol`: valid-answer scoring, the invalid-answer
rules, re-sizing after the first look, CR2 / Bell-McCaffrey / Hall intervals, the
minimum clusters of `grounded`). Two calibration judges per protocol:

- null: every contrast without excess (shortcut error = P(shortcut));
- effect: one contrast exactly at the configured effect (grounded error =
  P(grounded)), the others null;

at G = 8, 12, 24 clusters (the units available per contrast spread over them) with
early stopping and with the fixed design side by side: verdict shares, mean calls,
and the Monte Carlo SE of a rate at alpha.

    PYTHONPATH=src .venv/bin/python benchmarks/audit_stopping.py --reps 200 \
        --json benchmarks/results/audit_stopping_icc0.3.json

`--json` writes every row and the summary; `scripts/card_docs.py --bench FILE...`
turns those files into the README's benchmark block (never typed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from judgeaudit.audit.validate import simulate_protocol

REPO = Path(__file__).resolve().parents[1]
# units available per contrast on the default config (240 emotion clips; 192 pairs)
AVAILABLE = {"blueprint": 240, "reference": 240, "pairwise": 192}
N_CONTRASTS = {"blueprint": 2, "reference": 4, "pairwise": 2}
SHARED = {"blueprint": True, "reference": False, "pairwise": False}


def contrasts(protocol: str, judge: str, effect: float, base: float = 0.15,
              lock0: float = 0.125) -> list[dict]:
    m = N_CONTRASTS[protocol]
    if protocol == "pairwise":
        null = {"kind": "slot", "params": {"first": lock0, "second": lock0}, "sided": "two"}
        alt = {"kind": "slot", "params": {"first": lock0 + effect, "second": lock0}, "sided": "two"}
    else:
        null = {"kind": "follow", "params": {"follow": 0.0, "base": base}, "sided": "greater"}
        alt = {"kind": "follow", "params": {"follow": effect / (1 - base), "base": base},
               "sided": "greater"}
    return [null] * m if judge == "null" else [alt] + [null] * (m - 1)


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--config", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--clusters", type=int, nargs="+", default=[8, 12, 24])
    ap.add_argument("--icc", type=float, default=0.3, help="ICC of the simulated propensities")
    ap.add_argument("--invalid", type=float, default=0.1, help="share of invalid answers")
    ap.add_argument("--protocols", nargs="+", default=list(AVAILABLE))
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", type=Path, default=None,
                    help="write the rows and the summary here (input of scripts/card_docs.py)")
    args = ap.parse_args(argv)
    from judgeaudit.config import load_config

    a = load_config(args.config)["audit"]
    cfg = load_config(args.config)
    plan_icc = a["icc"] if a["icc"] is not None else cfg["power"]["icc"]
    eff, alpha = float(a["effect"]), float(a["alpha"])
    common = dict(stages=a["stages"], alpha=alpha, effect=eff, power=a["power"], sd=a["sd"],
                  icc=plan_icc, spending=a["spending"])
    opts = {k: a[k] for k in ("min_valid_share", "max_invalid_gap", "resize", "min_clusters")}
    t0, c0 = time.time(), cpu_seconds()
    mc = math.sqrt(alpha * (1 - alpha) / args.reps)
    print(f"audit stopping benchmark: {args.reps} simulated audits per row and design; effect "
          f"{eff}, alpha {alpha} per verdict and protocol, {a['stages']} looks, {a['spending']} "
          f"spending, propensity ICC {args.icc}, invalid answers {args.invalid:.0%}; Monte "
          f"Carlo SE of a rate at alpha {mc:.4f}")
    print(f"{'G':>3s} {'protocol':10s} {'judge':6s} | {'early stop: calls   S     G     I     U':40s} | "
          f"{'fixed design: calls   S     G     I     U':42s} | saved")
    worst = {"S": 0.0, "G": 0.0}
    saved = []
    rows = []
    for g in args.clusters:
        for p in args.protocols:
            per = -(-AVAILABLE[p] // g)
            for judge in ("null", "effect"):
                cs = contrasts(p, judge, eff)
                res = {}
                for early in (True, False):
                    rng = np.random.default_rng([args.seed, g, len(p), judge == "null", early])
                    runs = [simulate_protocol(cs, n_clusters=g, per_cluster=per, rng=rng,
                                              early_stop=early, shared_control=SHARED[p],
                                              invalid=args.invalid, prop_icc=args.icc,
                                              audit_options=opts, **common)
                            for _ in range(args.reps)]
                    share = {v: sum(r["verdict"] == v for r in runs) / args.reps
                             for v in ("shortcut", "grounded", "inconclusive", "undecided")}
                    res[early] = (float(np.mean([r["calls"] for r in runs])), share,
                                  float(np.mean([r["fixed_calls"] for r in runs])))
                    if judge == "null":
                        worst["S"] = max(worst["S"], share["shortcut"])
                    else:
                        worst["G"] = max(worst["G"], share["grounded"])
                (ce, se_, _), (cf, sf, _) = res[True], res[False]
                saved.append(cf / ce)
                rows.append({"clusters": g, "protocol": p, "judge": judge,
                             "early_stop": {"calls": ce, **se_},
                             "fixed_design": {"calls": cf, **sf}, "saved": cf / ce})

                def row(c, s):
                    return (f"{c:6.0f} {s['shortcut']:.3f} {s['grounded']:.3f} "
                            f"{s['inconclusive']:.3f} {s['undecided']:.3f}")

                print(f"{g:3d} {p:10s} {judge:6s} | early stop: {row(ce, se_)} | fixed design:  "
                      f"{row(cf, sf)} | {cf / ce:4.2f}x", flush=True)
    print(f"\nsummary: shortcut error (null judge) max {worst['S']:.3f}, grounded error "
          f"(effect judge) max {worst['G']:.3f}, alpha {alpha}, MC SE {mc:.4f} (alpha + 2 SE = "
          f"{alpha + 2 * mc:.3f}); calls saved by early stopping {min(saved):.2f}x-"
          f"{max(saved):.2f}x (mean {np.mean(saved):.2f}x); {cpu_seconds() - c0:.0f} s CPU, "
          f"{time.time() - t0:.0f} s wall")
    if args.json is not None:
        by_g = {}
        for r in rows:
            by_g.setdefault(str(r["clusters"]), []).append(r["saved"])
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "benchmark": "benchmarks/audit_stopping.py", "reps": args.reps, "icc": args.icc,
            "invalid": args.invalid, "seed": args.seed, "alpha": alpha, "effect": eff,
            "stages": a["stages"], "spending": a["spending"], "clusters": args.clusters,
            "protocols": args.protocols, "mc_se": mc, "max_shortcut_error": worst["S"],
            "max_grounded_error": worst["G"],
            "saved_by_g": {g: [min(v), max(v)] for g, v in by_g.items()},
            "cpu_s": cpu_seconds() - c0, "wall_s": time.time() - t0, "rows": rows},
            indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
