"""Study B recipes: the functions the metric rules' script calls
(scripts/study_b_metrics.py dispatches on the rule's `metric` param through the
registry), and the cell selections the trace uses to recompute one row with them.

Every compute function is f(inputs, params) -> {output name: DataFrame}; inputs:
  scored   the scored trial rows (`study_b.metrics.read_scored` of the scored shards)
  items    the task items (`study_b.build.items_by_task`): the states' items, and
           every rate's sampling unit (`study_b.metrics.item_clusters`: the voice
           where a task's items share voices, else the item)
  quality  the reply-quality rows (balance only)
params: n_boot, seed (and gate, p_scope for states). Every select function is
f(inputs, row) -> (the inputs behind one table row, its trial ids, a note). The
tables with a Holm column (protocol gap, text gap, cue dependence) adjust over one
family per judge (every row of that judge), so their selections hand compute the
judge's whole family and name the row's own trials as the cell's.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgeaudit.vocab.study_b import (
    AUDIO_PROTOCOLS,
    DEPLOYMENT_PROTOCOL,
    NO_CUE,
    TEXT_PROTOCOL,
)

PROBE_ROWS = {"probe_P": "P", "probe_O": "O"}  # accuracy's `protocol` of a probe row
BALANCE_DNSMOS = ("dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak")


P_SCOPE_DEFAULT = "trajectory"  # config study_b.tasks.positional.p_bit


def _boot(params: Mapping[str, Any]) -> dict[str, int]:
    return {"n_boot": int(params.get("n_boot", 2000)), "seed": int(params.get("seed", 0))}


def _clusters(inputs: Mapping[str, Any]) -> dict:
    """The voice cluster of each item of a task whose items share voices (empty when
    every item has its own voice, or when no item files were loaded)."""
    from judgeaudit.study_b import metrics as SB

    return SB.item_clusters(inputs.get("items") or ())


def _p_scope(params: Mapping[str, Any]) -> str:
    return str(params.get("p_scope") or P_SCOPE_DEFAULT)


# ------------------------------------------------------------------ scoring
def rescore(trials: Sequence[dict], responses: Sequence[dict], judge: str, shard: str,
            what: str = "") -> pd.DataFrame:
    """One shard scored as the metric rules read it: `study_b.metrics.score_trials`
    (rule study_b_score) written as TSV and read back with `read_scored`."""
    from judgeaudit.study_b import metrics as SB

    scored = SB.score_trials(trials, responses, judge, shard, what=what)
    buf = io.StringIO()
    scored.to_csv(buf, sep="\t", index=False, lineterminator="\n")
    buf.seek(0)
    return SB.read_scored(buf)


def load(scored: Sequence[pd.DataFrame], item_files: Sequence[str] = ()) -> dict[str, Any]:
    """compute's inputs from scored frames (and the items files, for states)."""
    out: dict[str, Any] = {"scored": pd.concat(list(scored), ignore_index=True)}
    if item_files:
        from judgeaudit.study_b.build import items_by_task

        out["items"] = items_by_task(list(item_files))
    return out


# ------------------------------------------------------------------ compute
def accuracy(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Accuracy per judge x task x protocol x cue and per probe (`study_b.metrics.accuracy`)."""
    from judgeaudit.study_b import metrics as SB

    return {"accuracy": SB.accuracy(inputs["scored"], _clusters(inputs))}


def protocol_gap(inputs: Mapping[str, Any], params: Mapping[str, Any]
                 ) -> dict[str, pd.DataFrame]:
    """Pairwise - Pointwise per judge x task x cue (`study_b.metrics.protocol_gap`)."""
    from judgeaudit.study_b import metrics as SB

    return {"protocol_gap": SB.protocol_gap(inputs["scored"], **_boot(params),
                                            clusters=_clusters(inputs))}


def text_gap(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Pointwise - Text (J - T: what listening adds) per judge x task x cue, Holm per
    judge (`study_b.metrics.text_gap`)."""
    from judgeaudit.study_b import metrics as SB

    return {"text_gap": SB.text_gap(inputs["scored"], **_boot(params),
                                    clusters=_clusters(inputs))}


def cue_dependence(inputs: Mapping[str, Any], params: Mapping[str, Any]
                   ) -> dict[str, pd.DataFrame]:
    """acc(contrasted cue) - acc(NO_CUE) (`study_b.metrics.cue_dependence`)."""
    from judgeaudit.study_b import metrics as SB

    return {"cue_dependence": SB.cue_dependence(inputs["scored"], **_boot(params),
                                                clusters=_clusters(inputs))}


def states(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """(P, O, J) states, their distribution, the chance distribution and the gated
    conditional Potemkin rate (`study_b.metrics.states` / `state_distribution` /
    `potemkin`, `study_b.chance.chance_distribution` / `gate_potemkin`)."""
    from judgeaudit.study_b import chance as CH
    from judgeaudit.study_b import metrics as SB

    p_scope = _p_scope(params)
    st = SB.states(inputs["scored"], inputs["items"], p_scope)
    chance = CH.chance_distribution(inputs["items"], p_scope=p_scope)
    clusters = _clusters(inputs)
    pot = SB.potemkin(st, clusters)
    gate = params.get("gate")
    if gate is not None:
        gate = json.loads(gate) if isinstance(gate, str) else gate
        pot = CH.gate_potemkin(pot, st, chance, gate["alpha"], gate["min_n"])
    return {"states": st, "distribution": SB.state_distribution(st, clusters), "potemkin": pot,
            "chance": chance}


def balance(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """R1 - R0 quality gaps per task x metric (`study_b.metrics.balance`): the lexical
    counts, the LLM scorer's ratings (flagged where |gap| exceeds the paper's) and
    DNSMOS, each where the reply-quality rows have it."""
    from judgeaudit.study_b import metrics as SB
    from judgeaudit.study_b import quality as Q
    from judgeaudit.study_b.build import LEXICAL_METRICS

    rows = inputs["quality"]
    metrics = [m for m in (*LEXICAL_METRICS, *Q.LLM_METRICS, *BALANCE_DNSMOS)
               if m in rows.columns]
    return {"balance": SB.balance(rows.to_dict("records"), metrics, **_boot(params),
                                  paper_gaps={m: Q.paper_gap(m) for m in Q.LLM_METRICS})}


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


def _pick_family(inputs: Mapping[str, Any], family: pd.Series, cell: pd.Series, what: str):
    """A Holm table's row: compute sees the judge's whole family (`family`: every task
    of the judge the inputs hold), the cell's trials are the row's (`cell`)."""
    scored = inputs["scored"]
    return ({**inputs, "scored": scored[family]}, set(scored.loc[family & cell, "trial_id"]),
            f"the cell's trials ({what}); recomputed over the judge's Holm family (the "
            f"judge's rows of every task the trace loaded)")


def select_protocol_gap(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    family = (s["judge"] == row["judge"]) & s["protocol"].isin(AUDIO_PROTOCOLS)
    return _pick_family(inputs, family, _mine(s, row) & (s["cue"] == row.get("cue", "")),
                        "Pointwise and Pairwise under the row's cue")


def select_text_gap(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    family = (s["judge"] == row["judge"]) & s["protocol"].isin(
        [DEPLOYMENT_PROTOCOL, TEXT_PROTOCOL])
    return _pick_family(inputs, family, _mine(s, row) & (s["cue"] == row.get("cue", "")),
                        "Pointwise and Text under the row's cue")


def select_cue_dependence(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    family = (s["judge"] == row["judge"]) & s["protocol"].isin(AUDIO_PROTOCOLS)
    return _pick_family(inputs, family, _mine(s, row)
                        & (s["protocol"] == row.get("protocol", ""))
                        & s["cue"].isin([row.get("cue", ""), NO_CUE]),
                        "the row's protocol under its cue and under no cue")


def select_states(inputs: Mapping[str, Any], row: Mapping[str, Any]):
    s = inputs["scored"]
    cell = s["probe"].isin(["P", "O"]) | (
        s["protocol"].isin([DEPLOYMENT_PROTOCOL, TEXT_PROTOCOL]) & (s["cue"] == NO_CUE))
    return _pick(inputs, _mine(s, row) & cell,
                 "the P and O probes and the no-cue pointwise and text-only judgments of "
                 "the judge's task")


__all__ = ["accuracy", "balance", "cue_dependence", "load", "protocol_gap", "rescore",
           "select_accuracy", "select_cue_dependence", "select_protocol_gap",
           "select_states", "select_text_gap", "states", "text_gap"]
