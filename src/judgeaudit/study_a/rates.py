"""Pairwise-order modes and summaries (Study A).

(Chance-normalised follow rates: `stats.clustered.chance_level` / `chance_normalised`.)

Pairs are judged in AB and BA order. With `better` = the slot holding the better
clip in AB order, each valid pair falls in exactly one mode:
  consistent_correct  chooses the better clip in both orders
  consistent_wrong    chooses the worse clip in both orders
  locked_first        chooses slot A in both orders
  locked_second       chooses slot B in both orders
Lock rate = locked_first + locked_second; g = share of single judgments whose
chosen slot holds the better clip.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from judgeaudit.vocab.study_a import PAIR_MODES

SLOTS = ("A", "B")


def other(slot: str) -> str:
    return "B" if slot == "A" else "A"


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


def pair_summary(pairs: Iterable[tuple[str | None, str | None, str]]) -> dict[str, Any]:
    """Counts over pairs (choice_ab, choice_ba, better_ab): modes, lock, g.

    g counts every valid single judgment (a pair with one invalid order still
    contributes its valid one); modes and lock need both orders valid."""
    counts = dict.fromkeys(PAIR_MODES, 0)
    n_pairs = n_invalid_pairs = g_k = g_n = g_invalid = 0
    for choice_ab, choice_ba, better_ab in pairs:
        for choice, better in ((choice_ab, better_ab), (choice_ba, other(better_ab))):
            if choice in SLOTS:
                g_n += 1
                g_k += int(choice == better)
            else:
                g_invalid += 1
        mode = pair_mode(choice_ab, choice_ba, better_ab)
        if mode is None:
            n_invalid_pairs += 1
        else:
            counts[mode] += 1
            n_pairs += 1
    return {"modes": counts, "n_pairs": n_pairs, "n_invalid_pairs": n_invalid_pairs,
            "lock_k": counts["locked_first"] + counts["locked_second"],
            "g_k": g_k, "g_n": g_n, "g_invalid": g_invalid}
