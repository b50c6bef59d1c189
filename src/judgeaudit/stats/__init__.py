"""Shared statistics for both studies: cluster-robust estimates (`clustered`: the
interval every printed rate uses), Wilson intervals, cluster and paired bootstraps,
McNemar contrasts with Holm correction, follow-rate normalisation and pairwise-order
modes. Every method is named explicitly (statsmodels / SciPy)."""

from importlib import import_module

# Names resolved on first use (PEP 562), so a script that needs one submodule (e.g.
# stats.study_b for scoring) does not pay for importing SciPy and statsmodels.
_WHERE = {
    "cluster_bootstrap": "clustered", "paired_bootstrap": "clustered",
    "proportion": "ci", "wilson": "ci",
    "Estimate": "clustered", "chance_normalised": "clustered",
    "clustered_difference": "clustered", "clustered_mean": "clustered",
    "clustered_proportion": "clustered", "invalid_bounds": "clustered",
    "holm": "contrasts", "mcnemar_paired": "contrasts",
    "PAIR_MODES": "rates", "chance_follow": "rates", "normalise_follow": "rates",
    "pair_mode": "rates", "pair_summary": "rates",
}
# The modules those names come from, for judgeaudit.codedeps (which cannot see the
# computed import below): a script importing `judgeaudit.stats` declares all four.
__code_deps__ = ("judgeaudit.stats.ci", "judgeaudit.stats.clustered",
                 "judgeaudit.stats.contrasts", "judgeaudit.stats.rates")

__all__ = [
    "PAIR_MODES", "Estimate", "chance_follow", "chance_normalised", "cluster_bootstrap",
    "clustered_difference", "clustered_mean", "clustered_proportion", "holm",
    "invalid_bounds", "mcnemar_paired",
    "normalise_follow", "paired_bootstrap", "pair_mode", "pair_summary", "proportion",
    "wilson",
]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"judgeaudit.stats.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
