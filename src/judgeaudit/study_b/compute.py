"""Study B recipes: the functions the metric rules' script calls
(scripts/study_b_metrics.py dispatches on the rule's `metric` param through the
registry), and the cell selections the trace uses to recompute one row with them.

Every compute function is f(inputs, params) -> {output name: DataFrame}; inputs:
  scored   the scored trial rows (`stats.study_b.read_scored` of the scored shards)
  items    the task items (`conditions.study_b.build.items_by_task`), states only
  quality  the reply-quality rows (balance only)
params: n_boot, seed (and gate for states). Every select function is
f(inputs, row) -> (the inputs behind one table row, its trial ids, a note).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgeaudit.vocab.study_b import DEPLOYMENT_PROTOCOL, NO_CUE, PROTOCOLS

PROBE_ROWS = {"probe_P": "P", "probe_O": "O"}  # accuracy's `protocol` of a probe row
BALANCE_DNSMOS = ("dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak")


def _boot(params: Mapping[str, Any]) -> dict[str, int]:
    return {"n_boot": int(params.get("n_boot", 2000)), "seed": int(params.get("seed", 0))}


# ------------------------------------------------------------------ scoring
def rescore(trials: Sequence[dict], responses: Sequence[dict], judge: str, shard: str,
            what: str = "") -> pd.DataFrame:
    """One shard scored as the metric rules read it: `stats.study_b.score_trials`
    (rule study_b_score) written as TSV and read back with `read_scored`."""
    from judgeaudit.stats import study_b as SB

    scored = SB.score_trials(trials, responses, judge, shard, what=what)
    buf = io.StringIO()
    scored.to_csv(buf, sep="\t", index=False, lineterminator="\n")
    buf.seek(0)
    return SB.read_scored(buf)


def load(scored: Sequence[pd.DataFrame], item_files: Sequence[str] = ()) -> dict[str, Any]:
    """compute's inputs from scored frames (and the items files, for states)."""
    out: dict[str, Any] = {"scored": pd.concat(list(scored), ignore_index=True)}
    if item_files:
        from judgeaudit.conditions.study_b.build import items_by_task

        out["items"] = items_by_task(list(item_files))
    return out


# ------------------------------------------------------------------ compute
def accuracy(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Accuracy per judge x task x protocol x cue and per probe (`stats.study_b.accuracy`)."""
    from judgeaudit.stats import study_b as SB

    return {"accuracy": SB.accuracy(inputs["scored"])}


def protocol_gap(inputs: Mapping[str, Any], params: Mapping[str, Any]
                 ) -> dict[str, pd.DataFrame]:
    """Pairwise - Pointwise per judge x task x cue (`stats.study_b.protocol_gap`)."""
    from judgeaudit.stats import study_b as SB

    return {"protocol_gap": SB.protocol_gap(inputs["scored"], **_boot(params))}


def cue_dependence(inputs: Mapping[str, Any], params: Mapping[str, Any]
                   ) -> dict[str, pd.DataFrame]:
    """acc(contrasted cue) - acc(NO_CUE) (`stats.study_b.cue_dependence`)."""
    from judgeaudit.stats import study_b as SB

    return {"cue_dependence": SB.cue_dependence(inputs["scored"], **_boot(params))}


def states(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """(P, O, J) states, their distribution, the chance distribution and the gated
    conditional Potemkin rate (`stats.study_b.states` / `state_distribution` /
    `potemkin`, `stats.chance.chance_distribution` / `gate_potemkin`)."""
    from judgeaudit.stats import chance as CH
    from judgeaudit.stats import study_b as SB

    st = SB.states(inputs["scored"], inputs["items"])
    chance = CH.chance_distribution(inputs["items"])
    pot = SB.potemkin(st)
    gate = params.get("gate")
    if gate is not None:
        gate = json.loads(gate) if isinstance(gate, str) else gate
        pot = CH.gate_potemkin(pot, st, chance, gate["alpha"], gate["min_n"])
    return {"states": st, "distribution": SB.state_distribution(st), "potemkin": pot,
            "chance": chance}


def balance(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """R1 - R0 quality gaps per task x metric (`stats.study_b.balance`)."""
    from judgeaudit.conditions.study_b.build import LEXICAL_METRICS
    from judgeaudit.stats import study_b as SB

    rows = inputs["quality"]
    metrics = [m for m in (*LEXICAL_METRICS, *BALANCE_DNSMOS) if m in rows.columns]
    return {"balance": SB.balance(rows.to_dict("records"), metrics, **_boot(params))}


# ------------------------------------------------------------------ cell selection
def _mine(scored: pd.DataFrame, row: Mapping[str, Any]) -> pd.Series:
    return (scored["judge"] == row["judge"]) & (scored["task"] == row["task"])


def _pick(inputs: Mapping[str, Any], cell: pd.Series, note: str = "the cell's trials"):
    scored = inputs["scored"]
    return ({**inputs, "scored": scored[cell]}, set(scored.loc[cell, "trial_id"]), note)


def select_accuracy(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    proto = row.get("protocol", "")
    if proto in PROBE_ROWS:
        cell = s["probe"] == PROBE_ROWS[proto]
        if proto == "probe_O":
            cell &= s["oracle"] == True  # noqa: E712
    else:
        cell = (s["protocol"] == proto) & (s["cue"] == row.get("cue", ""))
    return _pick(inputs, _mine(s, row) & cell)


def select_protocol_gap(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    return _pick(inputs, _mine(s, row) & s["protocol"].isin(PROTOCOLS)
                 & (s["cue"] == row.get("cue", "")))


def select_cue_dependence(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    return _pick(inputs, _mine(s, row) & (s["protocol"] == row.get("protocol", ""))
                 & s["cue"].isin([row.get("cue", ""), NO_CUE]))


def select_states(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    cell = s["probe"].isin(["P", "O"]) | ((s["protocol"] == DEPLOYMENT_PROTOCOL)
                                          & (s["cue"] == NO_CUE))
    return _pick(inputs, _mine(s, row) & cell,
                 "the P and O probes and the no-cue pointwise judgments of the judge's task")


__all__ = ["accuracy", "balance", "cue_dependence", "load", "protocol_gap", "rescore",
           "select_accuracy", "select_cue_dependence", "select_protocol_gap",
           "select_states", "states"]
