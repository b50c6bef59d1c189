"""Benchmark: the judge audit's group-sequential stopping vs the fixed design.

Audits the simulated panel (the embedded judges' planted propensities from
config.yaml, plus two calibration judges sitting exactly on the null and on the
configured effect) many times at the statistics level: probe units are drawn by the
independent simulator `judgeaudit.audit.simcheck` (NumPy only, no code shared with
the estimator) and judged by the audit's own stopping rule
(`judgeaudit.audit.validate.simulate_protocol`, the logic of `judgeaudit.audit.run`).
Prints, with and without early stopping side by side: mean calls per protocol, the
share of each verdict, and per verdict its type-I error (shortcut when every contrast
has no excess; grounded when some contrast has excess >= effect) and its power.

    PYTHONPATH=src .venv/bin/python benchmarks/audit_stopping.py [--reps 400]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import yaml

from judgeaudit.audit import simcheck
from judgeaudit.audit.validate import simulate_protocol

REPO = Path(__file__).resolve().parents[1]
PLACEMENTS = ("system", "rubric", "before", "after")


def panel_scenarios(cfg: dict, effect: float, k_classes: int = 8) -> dict[str, dict]:
    """judge -> protocol -> contrasts [{kind, params, sided}] from the planted knobs.
    base = how often the judge names the shown wrong label from the audio alone."""
    out: dict[str, dict] = {}

    def follow(f, base):
        return {"kind": "follow", "params": {"follow": f, "base": base}, "sided": "greater"}

    def slot(first, second):
        return {"kind": "slot", "params": {"first": first, "second": second, "spread": 0.3},
                "sided": "two"}

    for name, spec in cfg["judges"]["panel"].items():
        prov = spec["provider"]
        if prov == "listener":
            # perception is deterministic per clip: the same answer with and without the
            # label, the same clip chosen in both orders -> every difference is 0
            fb, fr, base = {}, {}, 0.0
            lk = {"concat": {"first": 0.0, "second": 0.0}, "native": {"first": 0.0, "second": 0.0}}
        elif prov == "label_reader":
            # copies every shown label; without one it answers from a hash of the text,
            # the same in both pair orders: locked on A for some criteria, on B for others
            fb = {"with_audio": 1.0, "with_audio_fallible": 1.0}
            fr = dict.fromkeys(PLACEMENTS, 1.0)
            base = 1 / k_classes
            lk = {"concat": {"first": 0.5, "second": 0.5}, "native": {"first": 0.5, "second": 0.5}}
        elif prov == "first_slot":
            fb, fr, base = {}, {}, 0.0  # the first label in both conditions: differences 0
            lk = {"concat": {"first": 1.0, "second": 0.0}, "native": {"first": 1.0, "second": 0.0}}
        else:
            s = spec["simulated"]
            fb, fr, lk = s.get("follow_block") or {}, s.get("follow_reference") or {}, s.get("lock") or {}
            acc = float(s.get("audio_accuracy", 1.0))
            base = (1 - acc) / (k_classes - 1)
            # without a planted lock: each order right with probability acc, independently
            noise = {"first": acc * (1 - acc), "second": acc * (1 - acc)}
            lk = {f: lk.get(f, noise) for f in ("concat", "native")}
        out[name] = {
            "blueprint": [follow(fb.get("with_audio", 0.0), base),
                          follow(fb.get("with_audio_fallible", 0.0), base)],
            "reference": [follow(fr.get(p, 0.0), base) for p in PLACEMENTS],
            "pairwise": [slot(lk[f]["first"], lk[f]["second"]) for f in ("concat", "native")],
        }
    # calibration judges: every contrast exactly on the null / one exactly on the
    # effect, with the planning sd at the null (follow: base 0.15 -> sd 0.505; slot:
    # 0.125 each way -> sd 0.5)
    base, lk0 = 0.15, 0.125
    out["calib-null"] = {"blueprint": [follow(0.0, base)] * 2,
                         "reference": [follow(0.0, base)] * 4,
                         "pairwise": [slot(lk0, lk0)] * 2}
    eff_f = effect / (1 - base)
    out["calib-effect"] = {"blueprint": [follow(eff_f, base), follow(0.0, base)],
                           "reference": [follow(eff_f, base)] + [follow(0.0, base)] * 3,
                           "pairwise": [slot(lk0 + effect, lk0), slot(lk0, lk0)]}
    return out


def truth(c: dict) -> float:
    if c["kind"] == "follow":
        return simcheck.follow_truth(**c["params"])
    return simcheck.population_mean("slot", c["params"], n=200_000)


LAYOUT = {"blueprint": (1, True), "reference": (1, True), "pairwise": (2, False)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--config", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--per-cluster", type=int, default=4, help="probe units per cluster")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--stages", type=int, default=None, help="override audit.stages")
    ap.add_argument("--spending", choices=["obf", "pocock"], default=None,
                    help="override audit.spending")
    args = ap.parse_args(argv)
    from judgeaudit.config import load_config

    cfg = load_config(args.config)
    a = dict(cfg["audit"])
    a["stages"] = args.stages or a["stages"]
    a["spending"] = args.spending or a["spending"]
    icc = a["icc"] if a["icc"] is not None else cfg["power"]["icc"]
    eff = float(a["effect"])
    common = dict(stages=a["stages"], alpha=a["alpha"], effect=eff, power=a["power"], sd=a["sd"],
                  icc=icc, per_cluster=args.per_cluster, spending=a["spending"])
    scen = panel_scenarios(yaml.safe_load(args.config.read_text()) | {"judges": cfg["judges"]}, eff)
    t0 = time.time()
    print(f"audit stopping benchmark: {args.reps} simulated audits per judge x protocol x design; "
          f"effect {eff}, alpha {a['alpha']} per verdict, power {a['power']}, {a['stages']} looks, "
          f"{a['spending']} spending, {args.per_cluster} units/cluster, icc {icc}")
    print(f"{'judge':13s} {'protocol':10s} {'true diffs':24s} | {'early stop: calls  S     G     I':33s}"
          f" | {'fixed design: calls  S     G     I':35s} | ratio")
    panel = {True: 0.0, False: 0.0}
    agg = {e: {"calls": 0.0, "t1_S": [], "t1_G": [], "pow_S": [], "pow_G": []} for e in (True, False)}
    for judge, prots in scen.items():
        for p, contrasts in prots.items():
            tr = [truth(c) for c in contrasts]
            null = all(abs(x) < 1e-9 for x in tr)
            alt = any(abs(x) >= eff - 1e-9 for x in tr)
            res = {}
            for early in (True, False):
                rng = np.random.default_rng([args.seed, hash(judge) % 10**6, len(p), int(early)])
                tpu, shared = LAYOUT[p]
                runs = [simulate_protocol(contrasts, rng=rng, early_stop=early,
                                          trials_per_unit=tpu, shared_control=shared, **common)
                        for _ in range(args.reps)]
                share = {v: sum(r["verdict"] == v for r in runs) / args.reps
                         for v in ("shortcut", "grounded", "inconclusive")}
                calls = float(np.mean([r["calls"] for r in runs]))
                res[early] = (calls, share)
                agg[early]["calls"] += calls
                if not judge.startswith("calib-"):
                    panel[early] += calls
                if null:
                    agg[early]["t1_S"].append(share["shortcut"])
                    agg[early]["pow_G"].append(share["grounded"])
                if alt:
                    agg[early]["t1_G"].append(share["grounded"])
                    agg[early]["pow_S"].append(share["shortcut"])
            (ce, se_), (cf, sf) = res[True], res[False]
            diffs = ",".join(f"{x:+.2f}" for x in tr)
            print(f"{judge:13s} {p:10s} {diffs:24s} | {ce:13.0f} {se_['shortcut']:.3f} "
                  f"{se_['grounded']:.3f} {se_['inconclusive']:.3f} | {cf:15.0f} "
                  f"{sf['shortcut']:.3f} {sf['grounded']:.3f} {sf['inconclusive']:.3f} | "
                  f"{cf / ce:4.2f}x")
    mc = math.sqrt(a["alpha"] * (1 - a["alpha"]) / args.reps)
    print("\nsummary (S = shortcut, G = grounded; type-I: S when every contrast is null, "
          "G when some contrast is >= effect; max over judge x protocol; Monte Carlo SE of a "
          f"rate at alpha: {mc:.3f})")
    for early in (True, False):
        g = agg[early]
        print(f"  {'early stop  ' if early else 'fixed design'}: total calls {g['calls']:9.0f}; "
              f"type-I S max {max(g['t1_S']):.3f}, G max {max(g['t1_G']):.3f}; "
              f"power S min {min(g['pow_S']):.3f} (mean {np.mean(g['pow_S']):.3f}), "
              f"G min {min(g['pow_G']):.3f} (mean {np.mean(g['pow_G']):.3f})")
    print(f"  calls saved by early stopping: {agg[False]['calls'] / agg[True]['calls']:.2f}x fewer "
          f"over every row; {panel[False] / panel[True]:.2f}x over the configured panel (without "
          f"the two calibration judges) ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
