"""Study A recipes: the functions the metric rule's script calls, and the cell
selection the trace uses to recompute one row with them.

`join_inputs(trials, responses, params, manifests)` -> inputs ({"df": one row per
trial, "sentence_of": clip_id -> its sentence from the corpus manifests});
`judge_metrics(inputs, params)` -> {"metrics", "contrasts", "twoway"} of one judge (the rule
`study_a_metrics_judge`, scripts/study_a_metrics_judge.py);
`select_cell(inputs, row)` -> (the inputs behind one table row, its trial ids, a note).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgeaudit.vocab.study_a import (
    BLUEPRINT_CONDITIONS,
    CONFLICT_CONDITION,
    CONFLICT_FALLIBLE,
    FALLIBLE_PLACEMENTS,
    MATCH_CONDITION,
    PAIR_FORMATS,
    PLACEMENTS,
)

AUDIO_ONLY = "audio_only"  # the condition rf_adj reads the judge's own answers from


def join_inputs(trials: Sequence[dict], responses: Sequence[dict], params: Mapping[str, Any],
                manifests: Mapping[str, pd.DataFrame] | None = None) -> dict[str, Any]:
    """One row per trial with this judge's response (`study_a.metrics.join`), and each
    classification clip's sentence from the corpus manifests (`stats.corpus.
    clip_sentences`; the two-way interval's second dimension)."""
    from judgeaudit.stats.corpus import clip_sentences
    from judgeaudit.study_a import metrics as sa

    return {"df": sa.join(trials, responses, str(params["judge"])),
            "sentence_of": clip_sentences(trials, manifests or {})}


def judge_metrics(inputs: Mapping[str, Any], params: Mapping[str, Any]
                  ) -> dict[str, pd.DataFrame]:
    """Every metric row of one judge (`study_a.metrics.metrics` + the outcome counts of
    `stats.outcomes.add_outcome_counts`), its pre-specified paired contrasts
    (`study_a.metrics.contrast_rows`; Holm is applied across judges later) and the
    two-way (speaker x sentence) rows of the tasks whose clips cross >= 8 sentences
    with speakers (`study_a.metrics.twoway_rates`)."""
    return {name: judge_output(inputs, params, name)[name] for name in JUDGE_OUTPUTS}


JUDGE_OUTPUTS = ("metrics", "contrasts", "twoway")


def judge_output(inputs: Mapping[str, Any], params: Mapping[str, Any], name: str
                 ) -> dict[str, pd.DataFrame]:
    """`judge_metrics`' output `name` alone (each is computed from the trials on its
    own): a trace of a contrasts row need not bootstrap every metric row too."""
    from judgeaudit.stats.outcomes import add_outcome_counts
    from judgeaudit.study_a import metrics as sa

    df = inputs["df"]
    if name == "metrics":
        return {name: add_outcome_counts(sa.metrics(df, n_boot=int(params.get("n_boot", 0))),
                                         df)}
    if name == "contrasts":
        return {name: pd.DataFrame(sa.contrast_rows(df), columns=sa.CONTRAST_COLUMNS)}
    if name == "twoway":
        return {name: pd.DataFrame(sa.twoway_rates(df, inputs.get("sentence_of") or {}),
                                   columns=sa.TWOWAY_COLUMNS)}
    raise KeyError(f"judge_metrics has no output {name!r}; outputs are {JUDGE_OUTPUTS}")


def family_of(condition: str) -> str | None:
    """The shard family a condition belongs to (tables without a `family` column)."""
    if condition in BLUEPRINT_CONDITIONS:
        return "blueprint"
    if condition in (*PLACEMENTS, *FALLIBLE_PLACEMENTS, MATCH_CONDITION):
        return "reference"
    if condition in PAIR_FORMATS:
        return "pairwise"
    if condition in (CONFLICT_CONDITION, CONFLICT_FALLIBLE):
        return "conflict"
    return None


def select_cell(inputs: Mapping[str, Any], row: Mapping[str, Any]
                ) -> tuple[dict[str, Any], set[str], str]:
    """The trials behind one row: judge x task x (family) x condition (x seed unless
    pooled); rf_adj also reads the judge's audio-only answers of the task; a contrast
    row reads every trial of its task (its pairing spans conditions)."""
    from judgeaudit.study_a.metrics import POOLED

    df = inputs["df"]
    keep = {k: v for k, v in inputs.items() if k != "df"}  # the clips' sentences
    mine = (df["task"] == row["task"]) if "task" in row else pd.Series(True, index=df.index)
    if "contrast" in row:
        return ({**keep, "df": df[mine]}, set(df.loc[mine, "trial_id"]),
                "every trial of the judge's task (a contrast pairs two conditions)")
    condition = row["condition"]
    family = row.get("family") or family_of(str(condition))
    cell = mine & (df["condition"] == condition)
    if family:
        cell &= df["family"] == family
    if str(row.get("seed", POOLED) or POOLED) != POOLED:
        cell &= df["seed"] == str(row["seed"])
    used = cell.copy()
    note = "the cell's trials"
    if row.get("metric") == "rf_adj":
        used |= mine & (df["condition"] == AUDIO_ONLY)
        note += f" plus this judge's {AUDIO_ONLY} trials of the task (rf_adj reads them)"
    return {**keep, "df": df[used]}, set(df.loc[cell, "trial_id"]), note


__all__ = ["JUDGE_OUTPUTS", "family_of", "join_inputs", "judge_metrics", "judge_output",
           "select_cell"]
