"""The `corpus` column of every Study A/B metric table: one corpus per task, read
from the trials' facts (`facts["corpus"]`) or the scored rows, and attached after
the `task` column."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd


def corpus_by_task(rows: Iterable[Mapping[str, Any]] | pd.DataFrame,
                   what: str = "trials") -> dict[str, str]:
    """task -> corpus from trials (facts.corpus) or rows with task/corpus columns.
    A task drawn from two corpora, or a trial without a corpus, is an error."""
    if isinstance(rows, pd.DataFrame):
        if "corpus" not in rows.columns:
            raise ValueError(f"{what}: no 'corpus' column (rebuild the trials)")
        pairs = zip(rows["task"].astype(str), rows["corpus"], strict=True)
    else:
        pairs = ((str(t["task"]), (t.get("facts") or {}).get("corpus")) for t in rows)
    out: dict[str, set] = {}
    for task, corpus in pairs:
        if corpus is None or corpus == "" or (isinstance(corpus, float) and pd.isna(corpus)):
            raise ValueError(f"{what}: a {task!r} trial names no corpus (facts.corpus); "
                             "rebuild the trials with the conditions rules")
        out.setdefault(task, set()).add(str(corpus))
    mixed = {t: sorted(c) for t, c in out.items() if len(c) > 1}
    if mixed:
        raise ValueError(f"{what}: tasks drawn from more than one corpus: {mixed}")
    return {t: next(iter(c)) for t, c in sorted(out.items())}


def attach_corpus(frame: pd.DataFrame, corpora: Mapping[str, str],
                  what: str = "table") -> pd.DataFrame:
    """`frame` with a `corpus` column right after `task` (every task must be known)."""
    out = frame.drop(columns=["corpus"], errors="ignore").copy()
    if out.empty and "task" not in out.columns:
        return out.assign(corpus=pd.Series(dtype=str))
    if "task" not in out.columns:
        raise ValueError(f"{what}: no 'task' column to attach the corpus to")
    unknown = sorted(set(out["task"].astype(str)) - set(corpora))
    if unknown:
        raise ValueError(f"{what}: no corpus known for tasks {unknown} (have {dict(corpora)})")
    out.insert(list(out.columns).index("task") + 1, "corpus",
               out["task"].astype(str).map(dict(corpora)))
    return out
