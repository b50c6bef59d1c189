"""Shared statistics for both studies: Wilson intervals, cluster and paired
bootstraps, McNemar contrasts with Holm correction, follow-rate normalisation and
pairwise-order modes. Every method is named explicitly (statsmodels / SciPy)."""

from judgeaudit.stats.bootstrap import cluster_bootstrap, paired_bootstrap
from judgeaudit.stats.ci import proportion, wilson
from judgeaudit.stats.contrasts import holm, mcnemar_paired
from judgeaudit.stats.rates import (
    PAIR_MODES,
    chance_follow,
    normalise_follow,
    pair_mode,
    pair_summary,
)

__all__ = [
    "PAIR_MODES", "chance_follow", "cluster_bootstrap", "holm", "mcnemar_paired",
    "normalise_follow", "paired_bootstrap", "pair_mode", "pair_summary", "proportion",
    "wilson",
]
