"""Study A's recipe: how its per-judge metrics rule computes its outputs (the
functions scripts/study_a_metrics_judge.py calls) and how the cell trace recomputes
one row with the same functions (see `judgeaudit.registry.Recipe`).

Apart from the outputs registry (`judgeaudit.study_a.outputs`, which joins it) so the
metrics rule's script imports, and by `judgeaudit.codedeps` depends on, its own
computation only: a caption or renderer edit never reruns the metrics.
"""

from __future__ import annotations

from judgeaudit.registry import Recipe
from judgeaudit.stats.corpus import read_manifests
from judgeaudit.study_a import compute

JUDGE_RULE = "study_a_metrics_judge"

RECIPE = Recipe(
    rule=JUDGE_RULE,
    compute=compute.judge_metrics,
    compute_output=compute.judge_output,
    select=compute.select_cell,
    load=compute.join_inputs,
    outputs={
        "metrics": "results/metrics/A/judges/{judge}.tsv",
        "contrasts": "results/metrics/A/judges/{judge}.contrasts.tsv",
        "twoway": "results/metrics/A/judges/{judge}.twoway.tsv",
    },
    manifests=read_manifests,
    required=("judge", "task"),
    not_recomputed={
        "p_holm": (
            "Holm's adjustment runs over every audited judge of the family "
            "(rule study_a_metrics), not over one judge's trials"
        ),
        "reject_holm": "as p_holm",
        "planted": "the planted rate is the simulated judge's config, not an estimate",
        "simulates": (
            "the published judge a twin simulates: the config's "
            "simulated.twin_of, not an estimate"
        ),
        "n_sentences": (
            "the number of sentences the task's speakers read in two or more clusters, "
            "counted from the clips' manifest rows (stats.corpus.sentences_by_task), "
            "not a statistic of the trials"
        ),
    },
    rows_not_recomputed={
        "family": {
            "capability_dependence": (
                "a panel-level test over every audited judge's "
                "seed-pooled metric rows (rule study_a_metrics, "
                "study_a.metrics.capability_test), not one judge's "
                "trials; its cells are traced in "
                "study_a_capability"
            )
        }
    },
)
RECIPES = (RECIPE,)

__all__ = ["JUDGE_RULE", "RECIPE", "RECIPES"]
