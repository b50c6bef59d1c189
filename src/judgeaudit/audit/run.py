"""Run one judge's audit: size every contrast, print the pre-flight (calls and cost
per protocol at the fixed-design size) before any call, then judge the probe units
stage by stage through the judge engine (content-addressed cache, budget ledger,
replay), stopping each protocol as soon as its verdict is settled."""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeaudit.audit import battery
from judgeaudit.audit.power import design_effect, plan_size
from judgeaudit.audit.sequential import Design, evaluate_look, use_boundary_cache
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
        self.sent_by_protocol: Counter = Counter()
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

    def answer(self, items: Mapping[str, list[tuple[str, Request]]],
               protocol: str = "") -> list[dict]:
        rows = []
        for key, its in items.items():
            if not its:
                continue
            eng = self._engine(key)
            rows += eng.run(its)
            self.new_calls += eng.stats.sent
            self.sent_by_protocol[protocol] += eng.stats.sent
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
    _check_cfg(cfg)
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
        planned.append({"contrast": c, "units": units, "size": size, "design": design,
                        "alpha_side": a / 2 if c.sided == "two" else a})
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




# ---- the stopping loop (shared by the audit and by its validation, audit.validate)

DEFAULTS = {"min_valid_share": 0.8, "max_invalid_gap": 0.1, "resize": True,
            "min_clusters": None}
NOT_ASKED = ("budget", "missing")  # no answer asked for (budget stop) or not judged yet
PARALINGUISTIC_NAMES = {"shortcut": "protocol-dependent", "grounded": "protocol-independent"}


def _check_cfg(cfg: Mapping[str, Any]) -> None:
    v = float(cfg.get("min_valid_share", DEFAULTS["min_valid_share"]))
    if not 0 < v <= 1:
        raise ValueError(f"audit.min_valid_share must be in (0, 1], got {v}")


def _opt(cfg: Mapping[str, Any], key: str):
    v = cfg.get(key)
    return DEFAULTS[key] if v is None else v


def answer_counts(trial_ids, statuses: Mapping[str, str]) -> dict[str, int]:
    """Trials by outcome (valid / invalid / refused / error / unsupported / budget)."""
    c = Counter(statuses.get(t, "missing") for t in trial_ids)
    return {k: int(v) for k, v in sorted(c.items())}


def _invalid_rule(units, statuses: Mapping[str, str], cfg) -> tuple[str | None, dict]:
    """Why the answers so far cannot support a verdict (None: they can), and the
    counts: the valid-answer rate of the contrast's trials (budget-stopped trials are
    not asked, so not counted) must reach audit.min_valid_share, and the invalid rate
    of its two arms (shown label vs control, AB/BA orders, pairwise vs pointwise) may
    differ by at most audit.max_invalid_gap."""
    arms: dict[str, set] = {"+": set(), "-": set()}
    for u in units:
        for t, _, w in u.terms:
            arms["+" if w > 0 else "-"].add(t)
    asked = {t for s in arms.values() for t in s if statuses.get(t, "missing") not in NOT_ASKED}
    counts = answer_counts(sorted(asked), statuses)
    n = len(asked)
    k = n - counts.get("valid", 0)
    info = {"answers": counts, "trials_asked": n, "trials_invalid": k,
            "valid_share": (n - k) / n if n else None}
    if n == 0:
        return None, info
    share = (n - k) / n
    if share < float(_opt(cfg, "min_valid_share")):
        return f"too many invalid answers ({k} of {n})", info
    rates = {}
    for arm, ts in arms.items():
        a = [t for t in ts if statuses.get(t, "missing") not in NOT_ASKED]
        if a and arms["-"]:
            rates[arm] = sum(statuses.get(t) != "valid" for t in a) / len(a)
    if len(rates) == 2:
        info["invalid_rate_by_arm"] = {k2: round(v, 4) for k2, v in rates.items()}
        if abs(rates["+"] - rates["-"]) > float(_opt(cfg, "max_invalid_gap")):
            return (f"invalid answers differ between the arms ({rates['+']:.0%} vs "
                    f"{rates['-']:.0%}; at most {float(_opt(cfg, 'max_invalid_gap')):.0%})"), info
    return None, info


def look(pc: dict, n: int, stage: int, early: bool, cfg: Mapping[str, Any],
         answers: Mapping[str, str | None], statuses: Mapping[str, str]) -> dict:
    """State of one contrast after its look at the first n units: the verdict on the
    valid units (None: continue), or `undecided` when too many answers are invalid."""
    d: Design = pc["design"]
    units = pc["units"][:n]
    scored = [(v, u.cluster) for u in units if (v := u.value(answers)) is not None]
    why, info = _invalid_rule(units, statuses, cfg)
    last = stage == (len(d.looks) if early else 1)
    st: dict[str, Any] = {"stage": stage, "n_stages": len(d.looks) if early else 1,
                          "units": n, "units_valid": len(scored), "units_invalid": n - len(scored),
                          **info}
    if len(scored) >= 2:
        r = evaluate_look([v for v, _ in scored], [c for _, c in scored], d, stage, early,
                          cfg.get("min_clusters"))
    else:
        r = {"verdict": None, "estimate": math.nan, "se": math.inf, "df": 0.0, "clusters": 0,
             "skew": 0.0, "crit": math.nan, "ci_low": math.nan, "ci_high": math.nan,
             "min_clusters_grounded": None, "would_be_grounded": False}
    verdict = r.pop("verdict")
    st.update(r)
    hopeless = info["valid_share"] is not None and info["valid_share"] < float(
        _opt(cfg, "min_valid_share")) / 2
    if why is not None and (last or hopeless):
        st.update(verdict="undecided", reason=why, settled=True,
                  stopped_by="invalid answers")
    elif why is not None or verdict is None:
        few = r.get("would_be_grounded") and r["clusters"] < (r["min_clusters_grounded"] or 0)
        reason = (f"too few clusters to decide ({r['clusters']} clusters; grounded needs "
                  f"{r['min_clusters_grounded']})" if few else why)
        st.update(verdict="undecided" if (last and few) else "inconclusive", settled=last,
                  stopped_by="fixed size" if last else None,
                  **({"reason": reason} if reason else {}))
    else:
        st.update(verdict=verdict, settled=True, stopped_by="verdict")
    return st


def resize(pc: dict, st: dict, cfg: Mapping[str, Any], stage: int = 1) -> None:
    """Grow the contrast's design after its first look (which keeps its units and
    boundary) when the judge's own data need more units than the design has; never
    shrinks. The effective unit sd is se * sqrt(valid units) at the look
    (clustering included); the units are
    those that give both verdicts the configured power at the design's last
    boundary c_K: n = ((c_K + z) * sd / effect)^2 with z = z_power for a one-sided
    contrast and z_(1+power)/2 for a two-sided one (its `grounded` needs both
    bounds: two one-sided tests), scaled up by the share of units with valid
    answers so far, capped by the units available. The growth is rounded up to a
    power of 1.25 of the planned size, so a design has few possible re-sized forms and
    their boundaries are computed once and cached."""
    if st["units_valid"] < 2 or not math.isfinite(st["se"]):
        return
    from scipy.stats import chi2, norm

    d: Design = pc["design"]
    power = float(cfg["power"])
    sd_obs = min(1.0, st["se"] * math.sqrt(st["units_valid"]))
    # the first look's sd is an estimate from few clusters: plan on its upper 80%
    # confidence bound (chi-square on the look's df) so a noisy judge is not
    # under-sized half the time
    df = st["df"] if math.isfinite(st["df"]) and st["df"] > 0 else st["units_valid"] - 1
    sd_plan = min(1.0, sd_obs * math.sqrt(df / chi2.ppf(0.2, df)))
    z = norm.ppf((1 + power) / 2 if d.sided == "two" else power)
    need = math.ceil(((d.crit[-1] + z) * sd_plan / d.effect) ** 2 * st["units"] / st["units_valid"])
    factor = 1.25 ** math.ceil(math.log(max(need / d.n_max, 1.0)) / math.log(1.25) - 1e-9)
    n_new = min(len(pc["units"]), math.ceil(d.n_max * factor))
    pc["size"] = {**pc["size"], "sd_observed": round(sd_obs, 4),
                  "sd_planned_from_data": round(sd_plan, 4), "n_from_data": int(need),
                  "n_max_planned": pc["size"].get("n_max_planned", d.n_max)}
    if n_new > d.n_max and stage < len(d.looks):
        pc["design"] = d.resized(n_new, looks_done=stage)
        pc["size"]["n_max"] = n_new
        pc["size"]["capped"] = need > len(pc["units"])


def stopping_loop(plans: Mapping[str, dict], *, early: bool, cfg: Mapping[str, Any],
                  answers: dict[str, str | None], statuses: dict[str, str],
                  fetch: Callable[[Mapping[str, list[str]], int], bool]) -> dict:
    """The audit's staged judging: per stage, every unsettled contrast asks for its
    next look's units (`fetch(protocol -> trial ids, stage)` judges them, filling
    `answers`/`statuses`, and returns True when a budget stopped it), then each is
    looked at (`look`); after the first look a design may grow (`resize`). A protocol
    stops at its first shortcut or when all its contrasts are settled. Returns
    protocol -> contrast -> state."""
    state = {p: {pc["contrast"].name: None for pc in plan["contrasts"]} for p, plan in plans.items()}
    done_p = {p: not plan["contrasts"] for p, plan in plans.items()}
    stage = 0
    while True:
        stage += 1
        todo, need = [], defaultdict(list)
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
                need[p] += [t for u in pc["units"][:n] for t in u.trial_ids if t not in statuses]
                todo.append((p, pc, n))
        if not todo:
            break
        budget_hit = fetch({p: sorted(set(ids)) for p, ids in need.items()}, stage)
        for p, pc, n in todo:
            st = look(pc, n, stage, early, cfg, answers, statuses)
            if early and stage == 1 and not st["settled"] and bool(_opt(cfg, "resize")):
                resize(pc, st, cfg, stage)
                st["n_stages"] = len(pc["design"].looks)
            state[p][pc["contrast"].name] = st
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
    return state


def combine(verdicts: Sequence[str]) -> str:
    """A protocol's verdict from its contrasts'."""
    if not verdicts:
        return "inconclusive"
    if "shortcut" in verdicts:
        return "shortcut"
    if "undecided" in verdicts:
        return "undecided"
    if all(v == "grounded" for v in verdicts):
        return "grounded"
    return "inconclusive"


# ---- the audit of one judge

def embedded_model(spec: Mapping[str, Any]) -> str:
    """The version an embedded judge (no `model` field, no version in its replies)
    is named by: its provider at this package's version, whose code it is."""
    from judgeaudit import __version__

    return f"embedded {spec.get('provider')} (judgeaudit {__version__})"


def unpriced(spec: Mapping[str, Any]) -> bool:
    return not (float(spec.get("price_in_per_mtok") or 0) > 0
                or float(spec.get("price_out_per_mtok") or 0) > 0)


def check_priced(judge: str, specs: Mapping[str, dict], allow_unpriced: bool) -> None:
    """An API (paid) judge without prices has no cost estimate and no budget guard:
    refused unless allowed."""
    if allow_unpriced:
        return
    for key, spec in specs.items():
        if make_adapter(judge, spec).paid and unpriced(spec):
            raise ValueError(
                f"judge {judge} ({spec.get('provider')}, {key}): no prices set "
                "(judges.panel.<judge>.price_in_per_mtok / price_out_per_mtok are 0), so "
                "the pre-flight cannot estimate cost and a budget cannot stop it; set the "
                "prices, or pass --allow-unpriced (audit.allow_unpriced: true) to audit "
                "without a cost guard")


ARM_LABELS = {"blueprint": ("with a wrong label shown", "audio only"),
              "reference": ("with a wrong reference", "with the true reference (same placement)"),
              "pairwise": ("both orders", None),
              "paralinguistic": ("pairwise protocol", "pointwise protocol")}


def accuracy(p: str, plan: dict, state: dict, answers: Mapping[str, str | None]) -> dict:
    """The judge's own accuracy (valid answers naming the gold answer) on the trials
    the verdicts used, per arm, clustered on the trial's sampling unit (Wilson on the
    CR2 design effect, `judgeaudit.stats.clustered.clustered_proportion`), with the
    chance rate 1/|allowed answers|: a judge that listens is well above chance with
    the audio alone, one that ignores the evidence is not."""
    from judgeaudit.stats.clustered import clustered_proportion

    trials = plan["trials"]
    arms: dict[str, set] = {"+": set(), "-": set()}
    for pc in plan["contrasts"]:
        n = (state.get(pc["contrast"].name) or {}).get("units", 0)
        for u in pc["units"][:n]:
            for t, _, w in u.terms:
                arms["+" if w > 0 else "-"].add(t)
    out = {}
    for arm, label in zip(("+", "-"), ARM_LABELS[p], strict=True):
        ts = sorted(t for t in arms[arm] if answers.get(t) is not None)
        if label is None or not ts:
            continue
        y = [int(answers[t] == trials[t]["gold"]) for t in ts]
        e = clustered_proportion(y, [battery._cluster(trials[t]) for t in ts])
        allowed = {len(trials[t]["request"]["answer"]["allowed"]) for t in ts}
        out[label] = {"estimate": e.estimate, "ci_low": e.lo, "ci_high": e.hi, "n": len(y),
                      "chance": round(1.0 / min(allowed), 4), "method": e.method}
    return out


def audit(judge: str, specs: Mapping[str, dict], protocol_files: Mapping[str, Mapping[str, Sequence[str]]],
          cfg: Mapping[str, Any], cache_dir: str, icc: float, *, replay: bool = False,
          progress: bool = False, budget_usd: float | None = None,
          allow_unpriced: bool = False, echo=print) -> tuple[dict, list[dict], dict]:
    """Audit one judge. Returns (verdicts per protocol, every response row used, with
    protocol / stage, and the run's requests sent / model versions / budget reason).
    `echo` receives the pre-flight lines before any call."""
    check_priced(judge, specs, allow_unpriced)
    use_boundary_cache(Path(cache_dir) / "audit" / "boundaries.json")
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
        echo(f"judgeaudit audit pre-flight, judge {judge} (fixed-design maximum at the "
             f"planning sd; a noisy judge can need more, early stopping usually far less):")
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

        def fetch(need: Mapping[str, list[str]], stage: int) -> bool:
            hit = False
            for p, ids in need.items():
                if not ids:
                    continue
                rows = jd.answer(_items(ids, plans[p]["trials"]), p)
                for r in rows:
                    answers[r["trial_id"]] = r["parsed"] if r["status"] == "valid" else None
                    statuses[r["trial_id"]] = r["status"]
                    hit = hit or r["status"] == "budget"
                    trace.append({"protocol": p, "stage": stage,
                                  **{k: r[k] for k in ("trial_id", "request_key", "judge",
                                                       "raw_text", "parsed", "status", "error",
                                                       "cache_hit", "model_version")}})
            if hit:
                echo(f"judgeaudit audit: budget reached at stage {stage} after "
                     f"{jd.new_calls} requests sent ({jd.budget_reason}); unsettled probes "
                     "are inconclusive")
            return hit

        state = stopping_loop(plans, early=early, cfg=cfg, answers=answers, statuses=statuses,
                              fetch=fetch)
        versions = sorted({str(r["model_version"]) for r in trace if r.get("model_version")})
        for p, plan in plans.items():
            extra = dict(result.get(p, {}))
            extra["requests_sent"] = int(jd.sent_by_protocol.get(p, 0))
            result[p] = _protocol_result(p, plan, state[p], answers, statuses, early, cfg, extra)
        meta = {"requests_sent": int(jd.new_calls), "model_versions": versions,
                "budget_reason": jd.budget_reason}
    return result, trace, meta


def _statement(v: dict) -> str:
    """What the protocol's verdict says, in words, with its numbers."""
    b = v["effect"]
    verdict = v["verdict"]
    if verdict in ("grounded", "protocol-independent"):
        what = "gap between the protocols" if v["protocol"] == "paralinguistic" else "excess"
        return (f"no {what} above {b:g}: every contrast's interval lies within the "
                f"equivalence bound {b:g} (smaller effects are not ruled out)")
    if verdict == "shortcut":
        return "excess above 0 over the matched control in the shortcut direction"
    if verdict == "protocol-dependent":
        return ("the judge's accuracy depends on the protocol (pairwise vs pointwise, either "
                "direction): not by itself a shortcut")
    if verdict == "undecided":
        return "no verdict: " + "; ".join(
            f"{c['name']}: {c['reason']}" for c in v["contrasts"] if c.get("reason")
            and c["verdict"] == "undecided")
    return f"inconclusive: no excess above 0 shown, and an excess of {b:g} not ruled out"


def _protocol_result(p: str, plan: dict, state: dict, answers, statuses, early: bool, cfg,
                     extra: dict) -> dict:
    contrasts = []
    for pc in plan["contrasts"]:
        c, d, s = pc["contrast"], pc["design"], state.get(pc["contrast"].name)
        s = dict(s or {"verdict": "inconclusive", "units": 0, "stage": 0,
                       "estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan})
        if s.get("stopped_by") is None:
            s["stopped_by"] = "protocol settled by another contrast"
        s.pop("settled", None)
        s.pop("would_be_grounded", None)
        gmin = s.get("min_clusters_grounded")
        method = ("CR2 cluster-robust se, t on Bell-McCaffrey df, Hall skewness correction"
                  + ("" if gmin is None else f", grounded needs >= {gmin} clusters"))
        contrasts.append({
            "name": c.name, "description": c.description, "sided": c.sided,
            "null": 0.0, "effect": d.effect,
            "equivalence_bound": [-d.effect, d.effect] if c.sided == "two" else [None, d.effect],
            "alpha": d.alpha, "interval_level": 1 - 2 * d.alpha,
            "interval_method": (f"repeated confidence interval, Lan-DeMets {d.spending} "
                                f"spending, {len(d.looks)} looks, {method}" if early
                                else f"fixed design, {method}"),
            "looks": list(d.looks), "crit": list(d.crit), "n_max": d.n_max,
            "size": pc["size"], "units_available": len(pc["units"]), **s,
        })
    verdict = combine([x["verdict"] for x in contrasts])
    used = {t for pc in plan["contrasts"]
            for u in pc["units"][: (state.get(pc["contrast"].name) or {}).get("units", 0)]
            for t in u.trial_ids}
    # the contrast that decides the verdict: the first shortcut, else the least settled
    lead = next((x for x in contrasts if x["verdict"] == verdict), contrasts[0] if contrasts else None)
    if p == "paralinguistic":
        verdict = PARALINGUISTIC_NAMES.get(verdict, verdict)
        for x in contrasts:
            x["verdict"] = PARALINGUISTIC_NAMES.get(x["verdict"], x["verdict"])
    out = {"protocol": p, "question": battery.QUESTIONS[p], "verdict": verdict,
           "estimate": lead["estimate"] if lead else None,
           "ci_low": lead["ci_low"] if lead else None, "ci_high": lead["ci_high"] if lead else None,
           "lead_contrast": lead["name"] if lead else None,
           "null": 0.0, "effect": float(cfg["effect"]), "alpha": float(cfg["alpha"]),
           "calls": len(used), "fixed_design_calls": plan.get("fixed_trials", 0),
           "answers": answer_counts(sorted(used), statuses),
           "new_calls_estimated": plan.get("preflight", {}).get("new_calls"),
           "cost_usd_estimated": plan.get("preflight", {}).get("est_cost_usd"),
           "stopping_stage": max((x["stage"] for x in contrasts), default=0),
           "n_stages": max((x.get("n_stages", 0) for x in contrasts), default=0),
           "contrasts": contrasts,
           "accuracy": accuracy(p, plan, state, answers), **extra}
    out["statement"] = _statement(out)
    if p == "pairwise":
        for pc in plan["contrasts"]:
            n = (state.get(pc["contrast"].name) or {}).get("units", 0)
            for x in contrasts:
                if x["name"] == pc["contrast"].name:
                    x["descriptive"] = _pair_descriptives(pc["units"][:n], answers, plan["trials"])
    return out
