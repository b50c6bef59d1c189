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
# the falsifier (issue 21): every counter-condition that shows side information has a
# variant that adds the fallible-label instruction ("labels can be wrong, answer from
# the audio"); its condition name is the plain one + FALLIBLE_SUFFIX
FALLIBLE_SUFFIX = "_fallible"
FALLIBLE_PLACEMENTS: tuple[str, ...] = tuple(f"{p}{FALLIBLE_SUFFIX}" for p in PLACEMENTS)
CONFLICT_CONDITION = "conflict"
CONFLICT_FALLIBLE = f"{CONFLICT_CONDITION}{FALLIBLE_SUFFIX}"
# RQ1 blueprint conditions, and those that show a wrong label
BLUEPRINT_CONDITIONS: tuple[str, ...] = (
    "audio_only", "skeleton", "acoustic_description", "true_block", "wrong_block",
    "wrong_no_frame", "wrong_with_audio", "wrong_with_audio_fallible", "wrong_block_fallible",
)
WRONG_BLUEPRINT_CONDITIONS: tuple[str, ...] = (
    "wrong_block", "wrong_no_frame", "wrong_with_audio", "wrong_with_audio_fallible",
    "wrong_block_fallible")
# fallible variant -> its plain counterpart (the falsifier contrasts), by protocol
FALLIBLE_OF: dict[str, str] = {
    "wrong_block_fallible": "wrong_block",
    "wrong_with_audio_fallible": "wrong_with_audio",
    **{f"{p}{FALLIBLE_SUFFIX}": p for p in PLACEMENTS},
    CONFLICT_FALLIBLE: CONFLICT_CONDITION,
}
# the conditions that exist only when study_a.fallible_variants is on (the original
# RQ1 falsifier wrong_with_audio_fallible is always built)
OPTIONAL_FALLIBLE: tuple[str, ...] = tuple(c for c in FALLIBLE_OF
                                           if c != "wrong_with_audio_fallible")


def fallible_protocol(condition: str) -> str | None:
    """The falsifier family of a fallible condition: block (RQ1), reference (RQ2) or
    conflict; None for a plain condition."""
    plain = FALLIBLE_OF.get(condition)
    if plain is None:
        return None
    if plain in PLACEMENTS:
        return "reference"
    return "conflict" if plain == CONFLICT_CONDITION else "block"
# pair criterion -> the specialist kind that grounds it (and the listener judges it with)
CRITERION_KIND: dict[str, str] = {"naturalness": "naturalness", "cleanness": "naturalness",
                                  "speaker": "speaker", "emotion": "emotion"}
PAIR_CRITERIA: tuple[str, ...] = tuple(CRITERION_KIND)
PAIR_FORMATS: tuple[str, ...] = ("concat", "native")
PAIR_PREFIX = "pair_"
# knobs of a simulated judge's follow_reference (placements and their fallible variants)
REFERENCE_KNOBS: tuple[str, ...] = (*PLACEMENTS, *FALLIBLE_PLACEMENTS)
# attributes a simulated judge's knobs can be overridden for (judges.schema attributes)
SIM_ATTRIBUTES: tuple[str, ...] = tuple(dict.fromkeys((*CLS_TASKS, *CRITERION_KIND)))


def pair_task(criterion: str) -> str:
    return f"{PAIR_PREFIX}{criterion}"


def pair_criterion(task: str) -> str | None:
    """The criterion of a `pair_<criterion>` task, else None."""
    if task.startswith(PAIR_PREFIX) and task[len(PAIR_PREFIX):] in CRITERION_KIND:
        return task[len(PAIR_PREFIX):]
    return None


__all__ = ["BLUEPRINT_CONDITIONS", "CLS_SHARDS", "CLS_TASKS", "CONFLICT_CONDITION",
           "CONFLICT_FALLIBLE", "CRITERION_KIND", "FALLIBLE_OF", "FALLIBLE_PLACEMENTS",
           "FALLIBLE_SUFFIX", "MATCH_CONDITION", "OPTIONAL_FALLIBLE", "REFERENCE_KNOBS", "SIM_ATTRIBUTES", "fallible_protocol", "PAIR_CRITERIA", "PAIR_FORMATS", "PAIR_PREFIX", "PLACEMENTS",
           "WRONG_BLUEPRINT_CONDITIONS", "pair_criterion", "pair_task"]
# the four modes of an AB/BA pair (study_a.rates.pair_mode); lock = the two locked ones
PAIR_MODES = ("consistent_correct", "consistent_wrong", "locked_first", "locked_second")
# the metric names of the tables' columns (study_a.metrics writes them in the `metric`
# column; the outputs registry and the renderers read them from here)
FOLLOW_METRICS = ("rf", "rf_adj", "rf_norm")  # follow rate, adjusted, chance-normalised
CONFLICT_SHARES = ("follow_block", "follow_reference", "follow_gold", "follow_other")
PAIR_METRICS = ("lock", "g", *PAIR_MODES)  # position lock, gold-aligned rate, the modes
