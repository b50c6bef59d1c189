"""The corpus a trial's clips come from: written into every trial's facts
(`facts["corpus"]`, the dataset name of the manifest the trial was built from) so
metrics and tables can name it on every row (issue 10: no silent fallback)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from judgeaudit.conditions.common import trial_id


def tag_corpus(trials: Iterable[dict[str, Any]], corpus: str) -> list[dict[str, Any]]:
    """Trials with `facts["corpus"] = corpus` and their content-derived id recomputed
    (the corpus is part of the content)."""
    if not corpus:
        raise ValueError("tag_corpus: empty corpus name")
    out = []
    for t in trials:
        facts = {**t["facts"], "corpus": corpus}
        out.append({**t, "facts": facts,
                    "trial_id": trial_id(t["study"], t["task"], t["condition"], facts)})
    return out


def trial_clips(trials: Iterable[dict[str, Any]]) -> list[str]:
    """Every clip id a set of trials shows a judge (classification clip, both pair
    clips, the speaker reference), sorted and unique."""
    keys = ("clip_id", "clip_a", "clip_b", "reference_clip")
    return sorted({str(t["facts"][k]) for t in trials for k in keys if t["facts"].get(k)})
