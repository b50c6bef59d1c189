"""Study A: classification tasks and their shard families, reference placements,
pair criteria (with the specialist kind that grounds each) and pair formats.

Trial shards are `results/trials/A/<task>/<shard>.jsonl` with task in CLS_TASKS
(shards CLS_SHARDS) or `pair_<criterion>` (shards PAIR_FORMATS)."""

from __future__ import annotations

CLS_TASKS: tuple[str, ...] = ("emotion", "language")
# shard families of a classification task (RQ1 blueprint, RQ2 reference, cue conflict)
CLS_SHARDS: tuple[str, ...] = ("blueprint", "reference", "conflict")
# where a reference label is placed in the request (RQ2); `match` is the control
PLACEMENTS: tuple[str, ...] = ("system", "rubric", "before", "after")
MATCH_CONDITION = "match"
# RQ1 blueprint conditions, and those that show a wrong label
BLUEPRINT_CONDITIONS: tuple[str, ...] = (
    "audio_only", "skeleton", "acoustic_description", "true_block", "wrong_block",
    "wrong_no_frame", "wrong_with_audio", "wrong_with_audio_fallible",
)
WRONG_BLUEPRINT_CONDITIONS: tuple[str, ...] = (
    "wrong_block", "wrong_no_frame", "wrong_with_audio", "wrong_with_audio_fallible")
# pair criterion -> the specialist kind that grounds it (and the listener judges it with)
CRITERION_KIND: dict[str, str] = {"naturalness": "naturalness", "cleanness": "naturalness",
                                  "speaker": "speaker", "emotion": "emotion"}
PAIR_CRITERIA: tuple[str, ...] = tuple(CRITERION_KIND)
PAIR_FORMATS: tuple[str, ...] = ("concat", "native")
PAIR_PREFIX = "pair_"


def pair_task(criterion: str) -> str:
    return f"{PAIR_PREFIX}{criterion}"


def pair_criterion(task: str) -> str | None:
    """The criterion of a `pair_<criterion>` task, else None."""
    if task.startswith(PAIR_PREFIX) and task[len(PAIR_PREFIX):] in CRITERION_KIND:
        return task[len(PAIR_PREFIX):]
    return None


__all__ = ["BLUEPRINT_CONDITIONS", "CLS_SHARDS", "CLS_TASKS", "CRITERION_KIND",
           "MATCH_CONDITION", "PAIR_CRITERIA", "PAIR_FORMATS", "PAIR_PREFIX", "PLACEMENTS",
           "WRONG_BLUEPRINT_CONDITIONS", "pair_criterion", "pair_task"]
