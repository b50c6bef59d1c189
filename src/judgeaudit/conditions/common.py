"""Helpers shared by the counter-condition builders of both studies: content-derived
trial ids, trial records, distinct derangements (cyclic shifts of the class order)
and stable per-key random streams."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from judgeaudit.io import sha256_json
from judgeaudit.judges.request import Request

TRIAL_ID_HEX = 16


def trial_id(study: str, task: str, condition: str, facts: dict[str, Any]) -> str:
    """sha256 of (study, task, condition, facts), first 16 hex (CONTRACTS section 3).

    The id depends only on content, so rebuilding the same trials gives the same ids
    and a changed fact (clip, wrong label, placement, seed, template hash) a new one."""
    return sha256_json({"study": study, "task": task, "condition": condition,
                        "facts": facts})[:TRIAL_ID_HEX]


def make_trial(study: str, task: str, condition: str, request: Request, gold: str,
               facts: dict[str, Any]) -> dict[str, Any]:
    """One trial row; the request's content hash enters the facts so that two trials
    with identical facts but different prompts never share an id."""
    facts = {**facts, "request_sha256": request.content_hash()}
    return {
        "trial_id": trial_id(study, task, condition, facts),
        "study": study,
        "task": task,
        "condition": condition,
        "request": request.to_json(),
        "gold": gold,
        "facts": facts,
    }


def check_unique_ids(trials: Sequence[dict[str, Any]], where: str = "trials") -> None:
    seen: dict[str, dict] = {}
    for t in trials:
        if t["trial_id"] in seen:
            raise ValueError(f"{where}: duplicate trial id {t['trial_id']} "
                             f"({t['condition']} {t['facts']})")
        seen[t["trial_id"]] = t


def stable_seed(*keys: Hashable) -> int:
    """A 64-bit seed derived from the keys' text (independent of PYTHONHASHSEED)."""
    text = "\x1f".join(str(k) for k in keys)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def rng_for(*keys: Hashable) -> np.random.Generator:
    return np.random.default_rng(stable_seed(*keys))


def derangement_shift(seed: int, k: int) -> int:
    """The cyclic shift (1..K-1) a derangement seed selects: ((seed - 1) mod (K-1)) + 1,
    so seeds 1..K-1 give the K-1 distinct shifts and seed s and s + (K-1) coincide."""
    if k < 2:
        raise ValueError(f"derangement: need at least 2 labels, got {k}")
    return (int(seed) - 1) % (k - 1) + 1


def derangement(labels: Sequence[str], seed: int,
                avoid: dict[str, str] | None = None) -> dict[str, str]:
    """The wrong-label mapping of a seed: a cyclic shift of the class order,
    labels[i] -> labels[(i + shift) % K], shift = `derangement_shift(seed, K)`.

    A shift 1..K-1 has no fixed point, and being a bijection it uses every wrong label
    exactly once per true label; over the K-1 shifts every class meets every wrong
    label exactly once (balanced). Different shifts differ at every label. With
    `avoid`, the result is the next shift (cyclically) that never maps a label to
    `avoid[label]` (a second wrong label for cue conflicts)."""
    labels = list(labels)
    if len(set(labels)) != len(labels):
        raise ValueError(f"derangement: labels are not unique: {labels}")
    k = len(labels)
    if k < 2 or (avoid is not None and k < 3):
        raise ValueError(f"derangement: need at least {3 if avoid else 2} labels, got {k}")
    first = derangement_shift(seed, k)
    # the seed's own shift first; with `avoid` the other shifts first (the avoided map
    # is usually the seed's own block mapping), the own shift last
    steps = list(range(k - 1)) if avoid is None else [*range(1, k - 1), 0]
    for step in steps:
        shift = (first - 1 + step) % (k - 1) + 1
        mapping = {labels[i]: labels[(i + shift) % k] for i in range(k)}
        if avoid is None or all(avoid.get(src) != dst for src, dst in mapping.items()):
            return mapping
    raise ValueError(f"derangement: no cyclic shift of {labels} avoids {avoid}")


def derangements(labels: Sequence[str], seeds: Sequence[int], where: str = "derangements"
                 ) -> dict[int, dict[str, str]]:
    """{seed: mapping} for a seed sweep; refuses a seed list in which two seeds give the
    same mapping (they would weight one draw twice), naming the seeds."""
    labels = list(labels)
    out: dict[int, dict[str, str]] = {}
    by_shift: dict[int, list[int]] = {}
    for s in seeds:
        by_shift.setdefault(derangement_shift(s, len(labels)), []).append(int(s))
        out[int(s)] = derangement(labels, s)
    dup = {sh: ss for sh, ss in by_shift.items() if len(ss) > 1}
    if dup:
        detail = "; ".join(f"seeds {', '.join(map(str, ss))} all give cyclic shift {sh}"
                           for sh, ss in sorted(dup.items()))
        raise ValueError(
            f"{where}: derangement seeds repeat a wrong-label mapping ({detail}); "
            f"with K = {len(labels)} classes there are only K-1 = {len(labels) - 1} distinct "
            f"mappings (cyclic shifts), selected by seeds 1..{len(labels) - 1}")
    return out
