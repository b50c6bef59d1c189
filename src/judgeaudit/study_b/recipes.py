"""Study B's recipes: how each metrics rule computes its outputs (the functions
scripts/study_b_metrics.py calls) and how the cell trace recomputes one row with the
same functions (see `judgeaudit.registry.Recipe`); `FILES` names the metrics files.

Apart from the outputs registry (`judgeaudit.study_b.outputs`, which joins them) so
the metrics rules' script imports, and by `judgeaudit.codedeps` depends on, its own
computation only: a caption or renderer edit never reruns the metrics.
"""

from __future__ import annotations

from judgeaudit.registry import Fn, Recipe
from judgeaudit.study_b import compute as C
from judgeaudit.vocab.study_b import CHANCE_JUDGE

M = "results/metrics/B"
FILES = {
    "accuracy": f"{M}/accuracy.tsv",
    "protocol_gap": f"{M}/protocol_gap.tsv",
    "cue_dependence": f"{M}/cue_dependence.tsv",
    "states": f"{M}/states.tsv",
    "distribution": f"{M}/state_distribution.tsv",
    "potemkin": f"{M}/potemkin.tsv",
    "chance": f"{M}/state_chance.tsv",
    "balance": f"{M}/balance.tsv",
    "text_gap": f"{M}/text_gap.tsv",
    "writer_ablation": f"{M}/writer_ablation.tsv",
}


def _recipe(
    *,
    metric: str,
    compute: Fn,
    outputs: tuple[str, ...],
    select: Fn | None = None,
    family: tuple[str, ...] = (),
    reads: dict[str, str] | None = None,
    params: tuple[str, ...] = (),
    rows_not_recomputed: dict[str, dict[str, str]] | None = None,
) -> Recipe:
    return Recipe(
        rule=f"study_b_{metric}",
        compute=compute,
        select=select,
        load=C.load,
        outputs={o: FILES[o] for o in outputs},
        source="scored_shards",
        rescore=C.rescore,
        family=family,
        # every metrics rule also reads the item files: each row's `n_voices` (the
        # voices the task's items are rendered with, stats.corpus.voices_by_task)
        rule_inputs={**({"scored": "all"} if reads is None else reads), "voices": "items"},
        rule_params=params,
        rows_not_recomputed=rows_not_recomputed or {},
        not_recomputed={"n_voices": (
            "the number of voices the task's items are rendered with, counted from the "
            "item files (stats.corpus.voices_by_task), not a statistic of the trials"),
            "voice_per_item": (
            "whether each of the task's items is rendered in its own voice, read from the "
            "item files (stats.corpus.voice_per_item_by_task), not a statistic of the trials")},
    )


RECIPES = (
    _recipe(
        metric="accuracy",
        compute=C.accuracy,
        outputs=("accuracy",),
        select=C.select_accuracy,
    ),
    # Holm per judge: the trace recomputes over every task of the row's judge
    _recipe(
        metric="protocol_gap",
        compute=C.protocol_gap,
        outputs=("protocol_gap",),
        select=C.select_protocol_gap,
        family=("judge",),
        reads={"scored": "protocol"},
    ),
    _recipe(
        metric="text_gap",
        compute=C.text_gap,
        outputs=("text_gap",),
        select=C.select_text_gap,
        family=("judge",),
        reads={"scored": "protocol"},
    ),
    _recipe(
        metric="cue_dependence",
        compute=C.cue_dependence,
        outputs=("cue_dependence",),
        select=C.select_cue_dependence,
        family=("judge",),
        reads={"scored": "cue_contrast"},
    ),
    _recipe(
        metric="states",
        compute=C.states,
        outputs=("states", "distribution", "potemkin", "chance"),
        select=C.select_states,
        reads={"scored": "state_input", "item_files": "items"},
        params=("gate", "p_scope"),
        # the state table interleaves each judge's states with the uniform-chance
        # judge's expected distribution, which no trial produced
        rows_not_recomputed={"judge": {CHANCE_JUDGE: (
            "the distribution expected from a judge answering every probe uniformly at "
            "random (study_b.chance.chance_distribution): computed, not observed, so no "
            "trials")}},
    ),
    _recipe(
        metric="balance",
        compute=C.balance,
        outputs=("balance",),
        reads={"quality": "reply_quality"},
        params=("corpora",),
    ),
)


def metric_recipe(metric: str) -> Recipe:
    """The recipe of a metric rule's `metric` param (scripts/study_b_metrics.py)."""
    rule = f"study_b_{metric}"
    for recipe in RECIPES:
        if recipe.rule == rule:
            return recipe
    raise KeyError(f"judgeaudit.study_b.recipes: no recipe for metric {metric!r} (rule "
                   f"{rule}); recipes are {[r.rule for r in RECIPES]}")


__all__ = ["FILES", "RECIPES", "metric_recipe"]
