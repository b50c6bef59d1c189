"""Workflow planning of the audit stage (pure; used by rules/common.smk with the
workflow's `judgeaudit.workflow.Plan`): the trial shards each protocol draws on,
the judge's settings per shard task, and the reference panel a card shows.

Every audit is of one judge on one protocol set, and its files live in that set's
folder (`card_dir`): the full set (every protocol, the default) in
`results/audit/<judge>/`, any other set in `results/audit/<judge>/protocols/<set>/`
(`<set>` = the protocols in battery order joined by `+`, e.g. `blueprint+pairwise`).
The set comes from the path, not from `audit.protocols` (which only chooses the
target `judgeaudit audit` asks for), so auditing a judge on another set never
re-runs or overwrites the verdicts and card of a set audited before, nor the
reference panel's verdicts on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from judgeaudit.audit.battery import PROTOCOLS
from judgeaudit.vocab import study_a as vocab_a
from judgeaudit.workflow import JUDGE_COST_FIELDS, Plan, PlanError, as_param

AUDIT_DIR = "results/audit"
SET_DIR = "protocols"  # results/audit/<judge>/protocols/<set>/: a set other than the full one
SET_JOIN = "+"


def protocol_set(protocols: Iterable[str]) -> tuple[str, ...]:
    """The protocols in battery order (the set's one spelling), duplicates dropped; an
    error naming the unknown ones."""
    ps = list(protocols)
    bad = [p for p in ps if p not in PROTOCOLS]
    if bad or not ps:
        raise PlanError(f"audit protocol set {ps}: unknown {bad or 'empty set'}; known: "
                        f"{list(PROTOCOLS)}")
    return tuple(p for p in PROTOCOLS if p in ps)


def set_name(protocols: Iterable[str]) -> str:
    return SET_JOIN.join(protocol_set(protocols))


def card_dir(judge: str, protocols: Iterable[str]) -> str:
    """The folder of `judge`'s audit on `protocols` (card.json, card.html, verdicts.json,
    responses.jsonl): results/audit/<judge> for the full set, else
    results/audit/<judge>/protocols/<set>."""
    ps = protocol_set(protocols)
    base = f"{AUDIT_DIR}/{judge}"
    return base if ps == PROTOCOLS else f"{base}/{SET_DIR}/{SET_JOIN.join(ps)}"


def set_of(wildcard: str | None) -> tuple[str, ...]:
    """The protocol set of a job from its `protocols` wildcard (None: the full set's
    folder); a set not spelled in battery order is refused (one folder per set)."""
    if wildcard is None:
        return PROTOCOLS
    ps = protocol_set(wildcard.split(SET_JOIN))
    if SET_JOIN.join(ps) != wildcard or ps == PROTOCOLS:
        right = card_dir("<judge>", ps)
        raise PlanError(f"audit folder protocols/{wildcard}: a protocol set is written once, "
                        f"in battery order; this set's folder is {right}")
    return ps


def protocol_files(plan: Plan, protocols: Iterable[str] | None = None
                   ) -> dict[str, dict[str, list[str]]]:
    """protocol -> role -> trial shard paths of a protocol set (default: the
    configured `audit.protocols`)."""
    cfg = plan.config
    a = cfg["audit"]
    task = a["task"]
    out: dict[str, dict[str, list[str]]] = {}
    for p in protocol_set(a["protocols"] if protocols is None else protocols):
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


def _spec_keys(plan: Plan, protocols=None) -> list[tuple[str, str]]:
    keys = set()
    for files in protocol_files(plan, protocols).values():
        for paths in files.values():
            for path in paths:
                _, _, study, task, _ = path.split("/", 4)
                keys.add((study, task))
    return sorted(keys)


def trial_inputs(plan: Plan, protocols=None) -> list[str]:
    return sorted({p for files in protocol_files(plan, protocols).values()
                   for ps in files.values() for p in ps})


def judge_specs(plan: Plan, judge: str, protocols=None) -> dict[str, dict[str, Any]]:
    """'<study>/<task>' -> the judge's settings for that task's shards (perception
    models resolved per corpus); cost fields kept (the audit's pre-flight prices)."""
    plan.judge_spec(judge)  # a clear error for an unknown judge
    return {f"{s}/{t}": plan.judge_spec_for(judge, s, t) for s, t in _spec_keys(plan, protocols)}


def judge_specs_param(plan: Plan, judge: str, protocols=None) -> str:
    """judge_specs without cost fields (prices/budgets never re-run an audit)."""
    return as_param({k: {f: v for f, v in spec.items() if f not in JUDGE_COST_FIELDS}
                     for k, spec in judge_specs(plan, judge, protocols).items()})


def judge_models(plan: Plan, judge: str, protocols=None) -> list[str]:
    return sorted({m for s, t in _spec_keys(plan, protocols)
                   for m in plan.judge_model_inputs(judge, s, t)})


def cfg_param(plan: Plan, protocols=None) -> str:
    """The audit settings a probe job runs with (its protocol set from its folder;
    budget, prices and the panel never re-run an audit)."""
    a = plan.config["audit"]
    cfg = {k: v for k, v in a.items() if k not in ("budget_usd", "reference_panel",
                                                  "allow_unpriced", "protocols")}
    cfg["protocols"] = list(protocol_set(a["protocols"] if protocols is None else protocols))
    return as_param(cfg)


def reference_panel(plan: Plan, judge: str) -> list[str]:
    panel = plan.config["audit"]["reference_panel"]
    unknown = [j for j in panel if j not in plan.config["judges"]["panel"]]
    if unknown:
        raise PlanError(f"audit.reference_panel names judges not in judges.panel: {unknown}")
    return [j for j in panel if j != judge]


def reference_verdicts(plan: Plan, judge: str, protocols=None) -> list[str]:
    """The panel judges' verdicts on the same protocol set (their own set folders)."""
    ps = plan.config["audit"]["protocols"] if protocols is None else protocols
    return [f"{card_dir(j, ps)}/verdicts.json" for j in reference_panel(plan, judge)]
