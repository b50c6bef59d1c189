"""Shared statistics for both studies: cluster-robust estimates (`clustered`: the
interval every printed rate uses), Wilson intervals, cluster and paired bootstraps,
McNemar contrasts with Holm correction, follow-rate normalisation and pairwise-order
modes. Every method is named explicitly (statsmodels / SciPy)."""

from judgeaudit.stats.ci import proportion, wilson
from judgeaudit.stats.clustered import (
    Estimate,
    chance_normalised,
    cluster_bootstrap,
    clustered_difference,
    clustered_mean,
    clustered_proportion,
    invalid_bounds,
    paired_bootstrap,
)
from judgeaudit.stats.contrasts import holm, mcnemar_paired
from judgeaudit.stats.rates import (
    PAIR_MODES,
    chance_follow,
    normalise_follow,
    pair_mode,
    pair_summary,
)

__all__ = [
    "PAIR_MODES", "Estimate", "chance_follow", "chance_normalised", "cluster_bootstrap",
    "clustered_difference", "clustered_mean", "clustered_proportion", "holm",
    "invalid_bounds", "mcnemar_paired",
    "normalise_follow", "paired_bootstrap", "pair_mode", "pair_summary", "proportion",
    "wilson",
]
