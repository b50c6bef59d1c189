"""Workflow planning of the audit stage (pure; used by rules/common.smk with the
workflow's `judgeaudit.workflow.Plan`): the trial shards each protocol draws on,
the judge's settings per shard task, and the reference panel a card shows."""

from __future__ import annotations

from typing import Any

from judgeaudit.vocab import study_a as vocab_a
from judgeaudit.workflow import JUDGE_COST_FIELDS, Plan, PlanError, as_param

AUDIT_DIR = "results/audit"


def protocol_files(plan: Plan) -> dict[str, dict[str, list[str]]]:
    """protocol -> role -> trial shard paths (configured protocols only)."""
    cfg = plan.config
    a = cfg["audit"]
    task = a["task"]
    out: dict[str, dict[str, list[str]]] = {}
    for p in a["protocols"]:
        if p == "blueprint":
            out[p] = {"trials": [f"results/trials/A/{task}/blueprint.jsonl"]}
        elif p == "reference":
            out[p] = {"trials": [f"results/trials/A/{task}/reference.jsonl"]}
        elif p == "pairwise":
            crit = cfg["study_a"]["pairwise"]["criteria"]
            if not crit:
                raise PlanError("audit.protocols has pairwise but study_a.pairwise.criteria is empty")
            out[p] = {f: [f"results/trials/A/{vocab_a.pair_task(c)}/{f}.jsonl" for c in crit]
                      for f in vocab_a.PAIR_FORMATS}
        elif p == "paralinguistic":
            bt = a["paralinguistic_task"]
            if not cfg["study_b"]["tasks"][bt]["enabled"]:
                raise PlanError(f"audit.paralinguistic_task {bt!r} is disabled in study_b.tasks")
            if not {"pointwise", "pairwise"} <= set(cfg["study_b"]["protocols"]):
                raise PlanError("audit paralinguistic needs study_b.protocols pointwise and pairwise")
            out[p] = {"pointwise": [f"results/trials/B/{bt}/pointwise-none.jsonl"],
                      "pairwise": [f"results/trials/B/{bt}/pairwise-none.jsonl"]}
    return out


def _spec_keys(plan: Plan) -> list[tuple[str, str]]:
    keys = set()
    for files in protocol_files(plan).values():
        for paths in files.values():
            for path in paths:
                _, _, study, task, _ = path.split("/", 4)
                keys.add((study, task))
    return sorted(keys)


def trial_inputs(plan: Plan) -> list[str]:
    return sorted({p for files in protocol_files(plan).values() for ps in files.values() for p in ps})


def judge_specs(plan: Plan, judge: str) -> dict[str, dict[str, Any]]:
    """'<study>/<task>' -> the judge's settings for that task's shards (perception
    models resolved per corpus); cost fields kept (the audit's pre-flight prices)."""
    plan.judge_spec(judge)  # a clear error for an unknown judge
    return {f"{s}/{t}": plan.judge_spec_for(judge, s, t) for s, t in _spec_keys(plan)}


def judge_specs_param(plan: Plan, judge: str) -> str:
    """judge_specs without cost fields (prices/budgets never re-run an audit)."""
    return as_param({k: {f: v for f, v in spec.items() if f not in JUDGE_COST_FIELDS}
                     for k, spec in judge_specs(plan, judge).items()})


def judge_models(plan: Plan, judge: str) -> list[str]:
    return sorted({m for s, t in _spec_keys(plan) for m in plan.judge_model_inputs(judge, s, t)})


def reference_panel(plan: Plan, judge: str) -> list[str]:
    panel = plan.config["audit"]["reference_panel"]
    unknown = [j for j in panel if j not in plan.config["judges"]["panel"]]
    if unknown:
        raise PlanError(f"audit.reference_panel names judges not in judges.panel: {unknown}")
    return [j for j in panel if j != judge]


def reference_verdicts(plan: Plan, judge: str) -> list[str]:
    return [f"{AUDIT_DIR}/{j}/verdicts.json" for j in reference_panel(plan, judge)]
