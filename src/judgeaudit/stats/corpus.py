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


# ------------------------------------------------------------------ sentences used
SENTENCE_COLUMNS = ("sentence_id", "statement", "transcript")  # first one a manifest has


def sentences_by_task(trials: Iterable[Mapping[str, Any]],
                      manifests: Mapping[str, pd.DataFrame]) -> dict[str, int]:
    """task -> k, the number of distinct sentences read by the clips of the task's
    classification trials, for every task whose clips cross sentences with clusters
    (some sentence read in two or more clusters, e.g. every speaker reading the same 2
    sentences); tasks without a crossing are left out. `manifests`: corpus -> its
    manifest (clip_id and a sentence column, `SENTENCE_COLUMNS`' first present); the
    sentence of a clip is looked up by the trial's facts.corpus and facts.clip_id. The
    one place the captions' "conditional on the k sentences used" comes from."""
    used: dict[str, dict[str, str]] = {}
    for t in trials:
        f = t.get("facts") or {}
        if f.get("family") == "pairwise" or f.get("clip_id") is None:
            continue
        used.setdefault(str(t["task"]), {})[str(f["clip_id"])] = (
            f"{f.get('corpus')}\x1f{f.get('cluster')}")
    out: dict[str, int] = {}
    lookup: dict[str, dict[str, str]] = {}
    for corpus, m in manifests.items():
        col = next((c for c in SENTENCE_COLUMNS if c in m.columns), None)
        if col is None or "clip_id" not in m.columns:
            raise ValueError(f"manifest of {corpus}: needs clip_id and one of "
                             f"{list(SENTENCE_COLUMNS)} to count the sentences used")
        lookup[corpus] = dict(zip(m["clip_id"].astype(str), m[col].astype(str), strict=True))
    for task, clips in sorted(used.items()):
        clusters_of: dict[str, set[str]] = {}
        for clip, key in clips.items():
            corpus, cluster = key.split("\x1f", 1)
            sentence = lookup.get(corpus, {}).get(clip)
            if sentence is None or sentence in ("", "nan"):
                continue
            clusters_of.setdefault(sentence, set()).add(cluster)
        if clusters_of and max(len(c) for c in clusters_of.values()) >= 2:
            out[task] = len(clusters_of)
    return out


def population_clause(n_sentences: Iterable[Any]) -> str:
    """The caption sentence naming what an interval generalises over, from the
    `n_sentences` column of the rows a table shows (empty when no row crosses
    sentences with speakers)."""
    ks = sorted({int(k) for k in n_sentences
                 if k is not None and not (isinstance(k, float) and pd.isna(k))
                 and str(k) not in ("", "nan")})
    if not ks:
        return ""
    k = "/".join(str(x) for x in ks)
    noun = "sentence" if ks == [1] else "sentences"
    return (f"Speakers read the same sentences: every interval is conditional on the {k} "
            f"{noun} used (it generalises over speakers, not over sentences)")
