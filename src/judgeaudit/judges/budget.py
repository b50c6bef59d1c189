"""Workflow-wide pre-flight cost estimate and budget check for API judges.

Before the first paid call of a run, every (judge, trial shard) pair the run will
judge is read; each distinct request (by cache key) not already answered in the
shared cache is priced with the judge's configured prices and its provider's
documented token rules (`Adapter.estimate_tokens`: audio seconds x audio tokens
per second, text ~ 4 characters per token, a fixed output allowance). The report
is written before anything is sent; a total above `judges.budget_usd`, or a
judge above its own `budget_usd`, is an error naming the judges and their
estimates. While the run goes on, the engine enforces the same limits call by call
(the spend ledger in the cache), so an estimate that was too low still cannot
overspend.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from judgeaudit.judges.adapters import is_paid, make_adapter
from judgeaudit.judges.adapters.base import HTTPAdapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import _audio_seconds, fingerprint


def missing_keys(panel: Mapping[str, Mapping[str, Any]], names: Iterable[str]) -> list[str]:
    """'judge: VAR' for every named API judge whose key variable is unset."""
    out = []
    for name in names:
        spec = panel[name]
        if not is_paid(spec):
            continue
        adapter = make_adapter(name, spec)
        if hasattr(adapter, "missing_env"):  # credentials in several variables (bedrock)
            out.extend(f"{name}: {var}" for var in adapter.missing_env())
            continue
        if not isinstance(adapter, HTTPAdapter) or adapter.spec.get("allow_no_key"):
            continue
        env = adapter.spec.get("api_key_env") or adapter.DEFAULT_KEY_ENV
        if not os.environ.get(env):
            out.append(f"{name}: {env}")
    return out


# the settings of a judge that say where its calls go (not part of its fingerprint,
# which holds the provider, the pinned model and every output-affecting setting)
ENDPOINT_FIELDS = ("base_url", "endpoint_url", "region", "api_version")


def budget_scope(config: Mapping[str, Any]) -> str | None:
    """The pinned ledger scope `judges.budget_scope`, or None: then the pre-flight
    derives it from what the run pays for (`paid_scope`)."""
    pinned = (config.get("judges") or {}).get("budget_scope")
    return str(pinned) if pinned else None


def paid_scope(judges: Mapping[str, Mapping[str, Any]]) -> str:
    """The budget scope of a run from what it pays for, and nothing else: per API
    judge its fingerprint (provider, pinned model, request-shaping settings) and
    endpoint, and the set of its requests (their cache keys: the trial set as the
    judge sees it). Estimator, rendering and report settings, budgets, prices and
    rate limits change none of these, so editing them keeps the scope and what it
    has spent. `judges = {name: {"fingerprint", "endpoint", "keys"}}`."""
    from judgeaudit.io import sha256_json

    return "study-" + sha256_json({
        name: {"fingerprint": j["fingerprint"], "endpoint": j["endpoint"],
               "requests": sha256_json(sorted(j["keys"]))}
        for name, j in sorted(judges.items())})[:16]


def estimate(jobs: Iterable[tuple[str, str | Path]], panel: Mapping[str, Mapping[str, Any]],
             cache_dir: str | Path, audio_root: str | Path = ".",
             scope: str | None = None) -> dict[str, Any]:
    """Per-judge estimate over (judge, trials path) pairs, minus what the cache holds,
    and what the budget scope already spent (the ledger): `scope` when given (pinned),
    else `paid_scope` of these judges and requests (`report["budget_scope"]`)."""
    from judgeaudit.judges.shard import read_trial_requests

    by_judge: dict[str, list[Path]] = {}
    for judge, path in jobs:
        by_judge.setdefault(judge, []).append(Path(path))
    report: dict[str, Any] = {"judges": {}, "total_est_cost_usd": 0.0, "total_new_calls": 0,
                              "budget_scope": scope, "spent_usd": 0.0}
    root = Path(audio_root)
    basis: dict[str, dict[str, Any]] = {}
    with ResponseCache(cache_dir) as cache:
        for judge in sorted(by_judge):
            spec = panel[judge]
            adapter = make_adapter(judge, spec)
            fp = fingerprint(adapter)
            todo = {}
            trials = unsupported = 0
            cells: dict[tuple[str, str], dict[str, Any]] = {}
            for path in sorted(set(by_judge[judge])):
                cell = trial_cell(path)
                for _, req, layout in read_trial_requests(path, adapter.max_audio_inputs):
                    trials += 1
                    c = cells.setdefault(cell, {"trials": 0, "unsupported": 0, "reason": None,
                                                "max_audio_parts": 0, "layouts": {}})
                    c["trials"] += 1
                    if layout is not None:  # the request chosen for this judge's limit
                        c["layouts"][layout] = c["layouts"].get(layout, 0) + 1
                    c["max_audio_parts"] = max(c["max_audio_parts"], req.n_audio)
                    why = adapter.unsupported_reason(req)
                    if why:
                        unsupported += 1
                        c["unsupported"] += 1
                        c["reason"] = c["reason"] or why
                        continue
                    todo.setdefault(req.cache_key(fp), req)
            cached = cache.get_many(todo)
            tin = tout = 0
            for key, req in todo.items():
                if key in cached:
                    continue
                a, b = adapter.estimate_tokens(req, _audio_seconds(req, root))
                tin, tout = tin + a, tout + b
            new = len(todo) - len(cached)
            cost = adapter.estimate_cost(tin, tout)
            report["judges"][judge] = {
                "provider": spec["provider"], "model": spec.get("model"),
                "shards": len(set(by_judge[judge])), "trials": trials,
                "distinct_requests": len(todo), "cached": len(cached), "new_calls": new,
                "unsupported": unsupported, "est_tokens_in": tin, "est_tokens_out": tout,
                "price_in_per_mtok": float(spec.get("price_in_per_mtok") or 0),
                "price_out_per_mtok": float(spec.get("price_out_per_mtok") or 0),
                "est_cost_usd": round(cost, 6), "budget_usd": spec.get("budget_usd"),
                "spent_usd": 0.0,
                "max_audio_inputs": adapter.max_audio_inputs,
                # every (task, format) cell this judge cannot take (all or part), and why:
                # said before any call, so no money is spent on a cell that is lost
                "not_runnable": [
                    {"task": t, "format": f, "unsupported": c["unsupported"],
                     "trials": c["trials"], "max_audio_parts": c["max_audio_parts"],
                     "reason": c["reason"]}
                    for (t, f), c in sorted(cells.items()) if c["unsupported"]],
                # the cells whose trials offer a layout choice (Study A speaker concat),
                # with the layout this judge's limit takes: {"joined": n} etc.
                "layouts": [{"task": t, "format": f, "layouts": dict(sorted(c["layouts"].items()))}
                            for (t, f), c in sorted(cells.items()) if c["layouts"]],
            }
            report["total_est_cost_usd"] += cost
            report["total_new_calls"] += new
            basis[judge] = {"fingerprint": fp, "keys": list(todo),
                            "endpoint": {k: spec[k] for k in ENDPOINT_FIELDS if spec.get(k)}}
        scope = scope or paid_scope(basis)
        report["budget_scope"] = scope
        for judge, r in report["judges"].items():
            r["spent_usd"] = round(cache.spent(judge=judge, scope=scope), 6)
        report["spent_usd"] = round(cache.spent(scope=scope), 6)
        # the scope this cache's last pre-flight for these judges used: a change is said
        names = ",".join(sorted(by_judge))
        previous = cache.swap_scope(names, scope)
        if previous is not None and previous != scope:
            report["previous_budget_scope"] = {
                "scope": previous, "spent_usd": round(cache.spent(scope=previous), 6)}
    report["total_est_cost_usd"] = round(report["total_est_cost_usd"], 6)
    return report


def trial_cell(path: str | Path) -> tuple[str, str]:
    """(task, format/family) of a trial shard `results/trials/<study>/<task>/<shard>.jsonl`
    (pair shards are named by their format: concat, native)."""
    p = Path(path)
    return p.parent.name, p.stem


def check(report: Mapping[str, Any], budget_usd: float | None) -> list[str]:
    """Budget violations of a pre-flight report (empty = within budget)."""
    problems = []
    # what earlier runs of the same study already spent counts against the budget
    over = [f"{j} ${r['est_cost_usd']:.4f} + ${r.get('spent_usd', 0.0):.4f} spent > its "
            f"budget_usd ${r['budget_usd']:g}"
            for j, r in report["judges"].items()
            if r.get("budget_usd") is not None
            and r["est_cost_usd"] + r.get("spent_usd", 0.0) > float(r["budget_usd"]) + 1e-12]
    if over:
        problems.append("per-judge budget exceeded before starting: " + "; ".join(over))
    spent = float(report.get("spent_usd") or 0.0)
    if budget_usd is not None and report["total_est_cost_usd"] + spent > float(budget_usd) + 1e-12:
        each = ", ".join(f"{j} ${r['est_cost_usd']:.4f} ({r['new_calls']} new calls)"
                         for j, r in report["judges"].items())
        problems.append(f"estimated cost ${report['total_est_cost_usd']:.4f} + ${spent:.4f} "
                        f"already spent in budget scope {report.get('budget_scope')!r} exceeds "
                        f"judges.budget_usd ${float(budget_usd):g}: {each}")
    return problems


def describe(report: Mapping[str, Any], budget_usd: float | None) -> str:
    lines = ["pre-flight cost estimate (new calls only; cached answers are free):"]
    for j, r in report["judges"].items():
        lines.append(
            f"  {j} ({r['provider']} {r['model']}): {r['trials']} trials in {r['shards']} "
            f"shards, {r['distinct_requests']} distinct requests, {r['cached']} cached, "
            f"{r['new_calls']} new calls, {r['unsupported']} unsupported; est. "
            f"{r['est_tokens_in']} in + {r['est_tokens_out']} out tokens = "
            f"${r['est_cost_usd']:.4f}"
            + (f" (cap ${r['budget_usd']:g})" if r.get("budget_usd") is not None else ""))
        for c in r.get("not_runnable") or []:
            lines.append(
                f"    NOT RUNNABLE {j} {c['task']}/{c['format']}: {c['unsupported']} of "
                f"{c['trials']} trials (requests carry up to {c['max_audio_parts']} audio "
                f"inputs; judge limit {r.get('max_audio_inputs')}): {c['reason']}")
        for c in r.get("layouts") or []:
            if set(c["layouts"]) - {"separate"}:
                lines.append(
                    f"    LAYOUT {j} {c['task']}/{c['format']}: " + ", ".join(
                        f"{n} trials {lay}" for lay, n in c["layouts"].items())
                    + f" (judge limit {r.get('max_audio_inputs')} audio inputs)")
    prev = report.get("previous_budget_scope")
    if prev:
        lines.append(
            f"  BUDGET SCOPE CHANGED: the last run of judges {', '.join(report['judges'])} "
            f"on this cache used scope {prev['scope']!r} (spent ${prev['spent_usd']:.4f}); "
            f"this run pays for different judges or requests: scope "
            f"{report.get('budget_scope')!r} (spent ${float(report.get('spent_usd') or 0):.4f}). "
            f"Set judges.budget_scope to keep one budget across such changes")
    lines.append(f"  total: {report['total_new_calls']} new calls, est. "
                 f"${report['total_est_cost_usd']:.4f}; already spent in budget scope "
                 f"{report.get('budget_scope')!r}: ${float(report.get('spent_usd') or 0):.4f}; "
                 f"judges.budget_usd = "
                 + ("unlimited" if budget_usd is None else f"${float(budget_usd):g}"))
    return "\n".join(lines)
