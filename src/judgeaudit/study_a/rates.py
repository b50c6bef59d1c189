"""Pairwise-order modes (Study A).

(Chance-normalised follow rates: `stats.clustered.chance_level` / `chance_normalised`.)

Pairs are judged in AB and BA order. With `better` = the slot holding the better
clip in AB order, each valid pair falls in exactly one mode:
  consistent_correct  chooses the better clip in both orders
  consistent_wrong    chooses the worse clip in both orders
  locked_first        chooses slot A in both orders
  locked_second       chooses slot B in both orders
Lock rate = locked_first + locked_second; g = share of single judgments whose
chosen slot holds the better clip (both: study_a.metrics.pairwise_metrics).
"""

from __future__ import annotations

SLOTS = ("A", "B")


def pair_mode(choice_ab: str | None, choice_ba: str | None, better_ab: str) -> str | None:
    """Mode of one pair from the slot chosen in AB order, in BA order, and the slot
    of the better clip in AB order. None when either judgment is invalid."""
    if better_ab not in SLOTS:
        raise ValueError(f"pair_mode: better slot must be 'A' or 'B', got {better_ab!r}")
    if choice_ab not in SLOTS or choice_ba not in SLOTS:
        return None
    if choice_ab == choice_ba:
        return "locked_first" if choice_ab == "A" else "locked_second"
    return "consistent_correct" if choice_ab == better_ab else "consistent_wrong"
