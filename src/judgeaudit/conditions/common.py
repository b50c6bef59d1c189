"""Helpers shared by the counter-condition builders of both studies: content-derived
trial ids, trial records, seeded derangements and stable per-key random streams."""

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


def derangement(labels: Sequence[str], seed: int,
                avoid: dict[str, str] | None = None, max_tries: int = 100_000) -> dict[str, str]:
    """A seeded permutation of `labels` with no fixed point (label -> a different label).

    Being a bijection, it uses every wrong label exactly once per true label, so a
    class-balanced clip set gets class-balanced wrong labels. With `avoid`, the
    result also never maps a label to `avoid[label]` (a second wrong label for
    cue conflicts)."""
    labels = list(labels)
    if len(set(labels)) != len(labels):
        raise ValueError(f"derangement: labels are not unique: {labels}")
    k = len(labels)
    if k < 2 or (avoid is not None and k < 3):
        raise ValueError(f"derangement: need at least {3 if avoid else 2} labels, got {k}")
    rng = rng_for("derangement", seed, *labels)
    for _ in range(max_tries):
        perm = rng.permutation(k)
        mapping = {labels[i]: labels[int(perm[i])] for i in range(k)}
        if any(src == dst for src, dst in mapping.items()):
            continue
        if avoid is not None and any(avoid.get(src) == dst for src, dst in mapping.items()):
            continue
        return mapping
    raise RuntimeError(f"derangement: none found for {labels} with avoid={avoid}")
