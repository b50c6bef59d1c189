"""Run one judge's audit: size every contrast, print the pre-flight (calls and cost
per protocol at the fixed-design size) before any call, then judge the probe units
stage by stage through the judge engine (content-addressed cache, budget ledger,
replay), stopping each protocol as soon as its verdict is settled."""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeaudit.audit import battery
from judgeaudit.audit.power import design_effect, plan_size
from judgeaudit.audit.sequential import Design, clustered_mean, decide, small_sample_crit
from judgeaudit.judges.adapters import make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import Engine, EngineOptions
from judgeaudit.judges.request import Request
from judgeaudit.judges.shard import attempts_log_path

log = logging.getLogger("judgeaudit.audit")


class _Judge:
    """One adapter + engine per (study, task) spec (perception models differ by
    corpus), all sharing one response cache."""

    def __init__(self, name: str, specs: Mapping[str, dict], cache: ResponseCache,
                 cache_dir: str, options: dict):
        self.name, self.specs, self.cache, self.cache_dir = name, specs, cache, cache_dir
        self.options = options
        self.adapters: dict[str, Any] = {}
        self.new_calls = 0
        self.cost_usd = 0.0
        self.budget_reason: str | None = None

    def adapter(self, key: str):
        if key not in self.adapters:
            spec = self.specs[key]
            ad = make_adapter(self.name, spec)
            if hasattr(ad, "perception_store"):
                ad.perception_store = str(Path(self.cache_dir) / "perception.sqlite")
            self.adapters[key] = ad
        return self.adapters[key]

    def _engine(self, key: str) -> Engine:
        spec = self.specs[key]
        cap = spec.get("budget_usd")
        opts = EngineOptions.from_spec(
            spec, judge_cap_usd=None if cap is None else float(cap),
            attempts_log=attempts_log_path(self.cache_dir, self.name), **self.options)
        return Engine(self.adapter(key), self.cache, opts)

    def unsupported(self, key: str, req: Request) -> str | None:
        return self.adapter(key).unsupported_reason(req)

    def preflight(self, items: Mapping[str, list[tuple[str, Request]]]) -> dict:
        new = cached = unsupported = 0
        cost = 0.0
        for key, its in items.items():
            if not its:
                continue
            _, _, st = self._engine(key).preflight(its)
            new, cached, unsupported = new + st.new, cached + st.cached, unsupported + st.unsupported
            cost += st.est_cost_usd
        return {"new_calls": new, "cached": cached, "unsupported": unsupported,
                "est_cost_usd": round(cost, 6)}

    def answer(self, items: Mapping[str, list[tuple[str, Request]]]) -> list[dict]:
        rows = []
        for key, its in items.items():
            if not its:
                continue
            eng = self._engine(key)
            rows += eng.run(its)
            self.new_calls += eng.stats.sent
            self.cost_usd += eng.stats.est_cost_usd if self.adapter(key).paid else 0.0
            if eng.budget_reason:
                self.budget_reason = eng.budget_reason
        return rows


def _spec_key(trial: dict) -> str:
    return f"{trial['study']}/{trial['task']}"


def plan_protocol(protocol: str, files: Mapping[str, Sequence[str]], cfg: Mapping[str, Any],
                  icc: float) -> dict:
    """Contrasts (units in sampling order), sizes and designs of one protocol."""
    contrasts, trials = battery.build(protocol, files)
    m = len(contrasts)
    planned = []
    for c in contrasts:
        units = battery.interleave(c.units, int(cfg["seed"]))
        per_cluster = len(units) / max(1, len({u.cluster for u in units}))
        a = float(cfg["alpha"]) / m  # Bonferroni over the protocol's contrasts
        size = plan_size(float(cfg["effect"]), a / 2 if c.sided == "two" else a,
                         float(cfg["power"]), float(cfg["sd"]),
                         design_effect(per_cluster, icc), len(units))
        design = Design.make(size["n_max"], int(cfg["stages"]), a, float(cfg["effect"]),
                             c.sided, cfg["spending"])
        planned.append({"contrast": c, "units": units, "size": size, "design": design})
    return {"protocol": protocol, "contrasts": planned, "trials": trials}


def _items(trial_ids: Sequence[str], trials: Mapping[str, dict]) -> dict[str, list]:
    out: dict[str, list] = defaultdict(list)
    for tid in sorted(set(trial_ids)):
        t = trials[tid]
        out[_spec_key(t)].append((tid, Request.from_json(t["request"])))
    return out


def _pair_descriptives(units, answers: Mapping[str, str | None], trials: Mapping[str, dict]):
    from judgeaudit.stats.clustered import clustered_proportion

    lock, lock_cl, g, g_cl = [], [], [], []
    for u in units:
        (ab, _, _), (ba, _, _) = u.terms[0], u.terms[1]
        a, b = answers.get(ab), answers.get(ba)
        if a in ("A", "B") and b in ("A", "B"):
            lock.append(int(a == b))
            lock_cl.append(u.cluster)
        for tid, ans in ((ab, a), (ba, b)):
            if ans in ("A", "B"):
                g.append(int(ans == trials[tid]["gold"]))
                g_cl.append(u.cluster)
    out = {}
    for name, y, cl in (("lock", lock, lock_cl), ("g", g, g_cl)):
        if y:
            e = clustered_proportion(y, cl)
            out[name] = {"estimate": e.estimate, "ci_low": e.lo, "ci_high": e.hi, "n": len(y),
                         "method": e.method}
    return out


def audit(judge: str, specs: Mapping[str, dict], protocol_files: Mapping[str, Mapping[str, Sequence[str]]],
          cfg: Mapping[str, Any], cache_dir: str, icc: float, *, replay: bool = False,
          progress: bool = False, budget_usd: float | None = None,
          echo=print) -> tuple[dict, list[dict]]:
    """Audit one judge. Returns (verdicts per protocol, every response row used, with
    protocol / stage). `echo` receives the pre-flight lines before any call."""
    plans = {p: plan_protocol(p, protocol_files[p], cfg, icc) for p in cfg["protocols"]}
    early = bool(cfg["early_stop"])
    options = {"audio_root": ".", "progress": progress, "replay": replay,
               "budget_usd": budget_usd}
    answers: dict[str, str | None] = {}
    statuses: dict[str, str] = {}
    trace: list[dict] = []
    result: dict[str, dict] = {}
    with ResponseCache(cache_dir) as cache:
        jd = _Judge(judge, specs, cache, cache_dir, options)
        # formats the judge cannot take (e.g. two audio inputs) are left out up front
        for p, plan in plans.items():
            keep = []
            for pc in plan["contrasts"]:
                t0 = plan["trials"][pc["units"][0].trial_ids[0]]
                why = jd.unsupported(_spec_key(t0), Request.from_json(t0["request"]))
                if why:
                    result.setdefault(p, {}).setdefault("skipped", []).append(
                        {"contrast": pc["contrast"].name, "reason": why})
                else:
                    keep.append(pc)
            plan["contrasts"] = keep
        # ---- pre-flight: every call the fixed design could need, before any is made
        echo(f"judgeaudit audit pre-flight, judge {judge} (fixed-design maximum; "
             f"early stopping usually needs far less):")
        total_cost = 0.0
        for p, plan in plans.items():
            ids = {t for pc in plan["contrasts"] for u in pc["units"][: pc["design"].n_max]
                   for t in u.trial_ids}
            pf = jd.preflight(_items(sorted(ids), plan["trials"]))
            plan["fixed_trials"] = len(ids)
            plan["preflight"] = pf
            total_cost += pf["est_cost_usd"]
            sizes = ", ".join(f"{pc['contrast'].name} n_max={pc['design'].n_max}"
                              + (f" (needs {pc['size']['n_fixed']}, capped)" if pc["size"]["capped"] else "")
                              for pc in plan["contrasts"])
            echo(f"  {p:15s} {len(ids):6d} trials ({pf['new_calls']} new calls, "
                 f"{pf['cached']} cached), est. cost ${pf['est_cost_usd']:.4f}; {sizes}")
        echo(f"  {'total':15s} est. cost ${total_cost:.4f}"
             + (f" (budget ${budget_usd:.2f})" if budget_usd is not None else ""))
        # ---- stages
        state = {p: {pc["contrast"].name: None for pc in plan["contrasts"]} for p, plan in plans.items()}
        done_p = {p: not plan["contrasts"] for p, plan in plans.items()}
        n_stages = max((len(pc["design"].looks) if early else 1 for plan in plans.values()
                        for pc in plan["contrasts"]), default=0)
        for stage in range(1, n_stages + 1):
            need: list[str] = []
            todo = []
            for p, plan in plans.items():
                if done_p[p]:
                    continue
                for pc in plan["contrasts"]:
                    d = pc["design"]
                    looks = d.looks if early else (d.looks[-1],)
                    st = state[p][pc["contrast"].name]
                    if (st is not None and st["settled"]) or stage > len(looks):
                        continue
                    n = looks[stage - 1]
                    need += [t for u in pc["units"][:n] for t in u.trial_ids if t not in answers]
                    todo.append((p, pc, n, stage))
            if not todo:
                break
            by_p: dict[str, list[str]] = defaultdict(list)
            for tid in need:
                by_p[next(p for p, pl in plans.items() if tid in pl["trials"])].append(tid)
            for p, ids in by_p.items():
                rows = jd.answer(_items(ids, plans[p]["trials"]))
                for r in rows:
                    answers[r["trial_id"]] = r["parsed"] if r["status"] == "valid" else None
                    statuses[r["trial_id"]] = r["status"]
                    trace.append({"protocol": p, "stage": stage,
                                  **{k: r[k] for k in ("trial_id", "request_key", "judge",
                                                       "raw_text", "parsed", "status", "error",
                                                       "cache_hit", "model_version")}})
            budget_hit = any(statuses.get(t) == "budget" for t in need)
            for p, pc, n, stg in todo:
                d = pc["design"]
                units = pc["units"][:n]
                vals = [u.value(answers) for u in units]
                est, se, df = clustered_mean(vals, [u.cluster for u in units])
                c = small_sample_crit(d.crit[stg - 1] if early else d.fixed_crit(), df)
                verdict, lo, hi = decide(est, se, c, d.effect, d.sided)
                last = stg == (len(d.looks) if early else 1)
                state[p][pc["contrast"].name] = {
                    "verdict": verdict or "inconclusive", "settled": verdict is not None or last,
                    "estimate": est, "se": se, "ci_low": lo, "ci_high": hi, "crit": c,
                    "stage": stg, "n_stages": len(d.looks) if early else 1, "units": n,
                    "n_invalid": sum(1 for u in units for t in u.trial_ids
                                     if answers.get(t) is None),
                    "stopped_by": "verdict" if verdict else ("fixed size" if last else None)}
            for p in plans:
                if done_p[p]:
                    continue
                sts = list(state[p].values())
                if any(s and s["verdict"] == "shortcut" for s in sts) or all(s and s["settled"] for s in sts):
                    done_p[p] = True
            if budget_hit:
                for p in plans:
                    for s in state[p].values():
                        if s is not None and not s["settled"]:
                            s.update(verdict="inconclusive", settled=True, stopped_by="budget")
                    done_p[p] = True
                break
        # ---- verdicts
        for p, plan in plans.items():
            result[p] = _protocol_result(p, plan, state[p], answers, early, cfg, result.get(p, {}))
    return result, trace


def _protocol_result(p: str, plan: dict, state: dict, answers, early: bool, cfg, extra: dict) -> dict:
    contrasts = []
    for pc in plan["contrasts"]:
        c, d, s = pc["contrast"], pc["design"], state.get(pc["contrast"].name)
        s = dict(s or {"verdict": "inconclusive", "units": 0, "stage": 0,
                       "estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan})
        if s.get("stopped_by") is None:
            s["stopped_by"] = "protocol settled by another contrast"
        s.pop("settled", None)
        contrasts.append({
            "name": c.name, "description": c.description, "sided": c.sided,
            "null": 0.0, "effect": d.effect,
            "equivalence_bound": [-d.effect, d.effect] if c.sided == "two" else [None, d.effect],
            "alpha": d.alpha, "interval_level": 1 - 2 * d.alpha,
            "interval_method": ("repeated confidence interval, Lan-DeMets "
                                f"{d.spending} spending, {len(d.looks)} looks, CR1 cluster-robust se, t on G-1 df"
                                if early else "fixed design, CR1 cluster-robust se, t on G-1 df"),
            "looks": list(d.looks), "crit": list(d.crit), "n_max": d.n_max,
            "size": pc["size"], "units_available": len(pc["units"]), **s,
        })
    verdicts = [x["verdict"] for x in contrasts]
    if not contrasts:
        verdict = "inconclusive"
    elif "shortcut" in verdicts:
        verdict = "shortcut"
    elif all(v == "grounded" for v in verdicts):
        verdict = "grounded"
    else:
        verdict = "inconclusive"
    used = {t for pc in plan["contrasts"] for u in pc["units"][: (state.get(pc["contrast"].name) or {}).get("units", 0)]
            for t in u.trial_ids}
    # the contrast that decides the verdict: the first shortcut, else the least settled
    lead = next((x for x in contrasts if x["verdict"] == verdict), contrasts[0] if contrasts else None)
    out = {"protocol": p, "question": battery.QUESTIONS[p], "verdict": verdict,
           "estimate": lead["estimate"] if lead else None,
           "ci_low": lead["ci_low"] if lead else None, "ci_high": lead["ci_high"] if lead else None,
           "lead_contrast": lead["name"] if lead else None,
           "null": 0.0, "effect": float(cfg["effect"]), "alpha": float(cfg["alpha"]),
           "calls": len(used), "fixed_design_calls": plan.get("fixed_trials", 0),
           "new_calls_estimated": plan.get("preflight", {}).get("new_calls"),
           "cost_usd_estimated": plan.get("preflight", {}).get("est_cost_usd"),
           "stopping_stage": max((x["stage"] for x in contrasts), default=0),
           "n_stages": max((x.get("n_stages", 0) for x in contrasts), default=0),
           "contrasts": contrasts, **extra}
    if p == "pairwise":
        for pc in plan["contrasts"]:
            n = (state.get(pc["contrast"].name) or {}).get("units", 0)
            for x in contrasts:
                if x["name"] == pc["contrast"].name:
                    x["descriptive"] = _pair_descriptives(pc["units"][:n], answers, plan["trials"])
    return out
