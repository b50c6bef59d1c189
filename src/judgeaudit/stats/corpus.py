"""The `corpus` column of every Study A/B metric table: one corpus per task, read
from the trials' facts (`facts["corpus"]`) or the scored rows, and attached after
the `task` column."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
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
# a clip's one sentence, as the corpus declares it (the two-way interval's second
# dimension): a transcript is not one where a clip joins several sentences of a bank
# (synth_language reads 2+ of 10 sentences per clip, in a seeded order)
SENTENCE_ID_COLUMNS = ("sentence_id", "statement")


def read_manifests(paths: Iterable[str | Path]) -> dict[str, pd.DataFrame]:
    """corpus -> its manifest (data/<corpus>/manifest.tsv, every column a string), as
    the Study A metrics rule and the cell trace read them."""
    return {Path(p).parent.name: pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
            for p in paths}


def _sentence_lookup(manifests: Mapping[str, pd.DataFrame], columns: Sequence[str],
                     strict: bool) -> dict[str, dict[str, str]]:
    """corpus -> {clip_id: sentence} from the first of `columns` each manifest has (a
    manifest without one: an error when `strict`, else left out)."""
    lookup: dict[str, dict[str, str]] = {}
    for corpus, m in manifests.items():
        col = next((c for c in columns if c in m.columns), None)
        if col is None or "clip_id" not in m.columns:
            if strict:
                raise ValueError(f"manifest of {corpus}: needs clip_id and one of "
                                 f"{list(columns)} to count the sentences used")
            continue
        lookup[corpus] = {c: s for c, s in zip(m["clip_id"].astype(str), m[col].astype(str),
                                               strict=True) if s not in ("", "nan")}
    return lookup


def clip_sentences(trials: Iterable[Mapping[str, Any]],
                   manifests: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """clip_id -> its sentence (`SENTENCE_ID_COLUMNS`: the one sentence the corpus says
    the clip reads) for the clips of the classification trials whose corpus declares
    one; the input of `study_a.metrics.twoway_rates`. Clips of corpora without such a
    column are left out (their tasks get no two-way interval)."""
    lookup = _sentence_lookup(manifests, SENTENCE_ID_COLUMNS, strict=False)
    out: dict[str, str] = {}
    for t in trials:
        f = t.get("facts") or {}
        if f.get("family") == "pairwise" or f.get("clip_id") is None:
            continue
        sentence = lookup.get(str(f.get("corpus")), {}).get(str(f["clip_id"]))
        if sentence is not None:
            out[str(f["clip_id"])] = sentence
    return out


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
    lookup = _sentence_lookup(manifests, SENTENCE_COLUMNS, strict=True)
    for task, clips in sorted(used.items()):
        clusters_of: dict[str, set[str]] = {}
        for clip, key in clips.items():
            corpus, cluster = key.split("\x1f", 1)
            sentence = lookup.get(corpus, {}).get(clip)
            if sentence is None:
                continue
            clusters_of.setdefault(sentence, set()).add(cluster)
        if clusters_of and max(len(c) for c in clusters_of.values()) >= 2:
            out[task] = len(clusters_of)
    return out


def _ks(values: Iterable[Any]) -> list[int]:
    return sorted({int(k) for k in values
                   if k is not None and not (isinstance(k, float) and pd.isna(k))
                   and str(k) not in ("", "nan")})


def population_clause(n_sentences: Iterable[Any], tasks: Iterable[Any] | None = None,
                      twoway_tasks: Iterable[str] = (), twoway_where: str = "") -> str:
    """The caption sentence naming what an interval generalises over, from the
    `n_sentences` column of the rows a table shows (empty when no row crosses
    sentences with speakers). With `tasks` (the rows' task column, beside
    `n_sentences`), per task; a task in `twoway_tasks` (those with a two-way speaker x
    sentence row, `study_a.metrics.twoway_rates`) is pointed to `twoway_where` (the
    two-way table's label and name)."""
    ns = list(n_sentences)
    ks = _ks(ns)
    if not ks:
        return ""
    if tasks is None:
        k = "/".join(str(x) for x in ks)
        noun = "sentence" if ks == [1] else "sentences"
        return (f"Speakers read the same sentences: every interval is conditional on the "
                f"{k} {noun} used (it generalises over speakers, not over sentences)")
    by_task: dict[str, list[Any]] = {}
    for task, k in zip(tasks, ns, strict=True):
        by_task.setdefault(str(task), []).append(k)
    two = set(map(str, twoway_tasks))
    parts = []
    for task, vals in sorted(by_task.items()):
        k = "/".join(str(x) for x in _ks(vals))
        if not k:
            continue
        noun = "sentence" if k == "1" else "sentences"
        text = f"{task}: conditional on the {k} {noun} used"
        if task in two and twoway_where:
            text += (f"; the two-way speaker x sentence interval, which generalises over "
                     f"sentences as well as speakers, is in {twoway_where}")
        parts.append(text)
    return ("Speakers read the same sentences, so every interval generalises over "
            "speakers, not over sentences (" + "; ".join(parts) + ")")


# ------------------------------------------------------------------ voices used (Study B)
def voices_by_task(items: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, int]:
    """task -> the number of distinct voices its items are rendered with (each item's
    `voice`, `study_b.items`), from the run's item files; a task whose items name no
    voice (e.g. recorded speech) is left out. The one place the Study B captions'
    voice sentence (`voice_clause`) counts from."""
    return {task: len(set(v)) for task, (v, _) in _item_voices(items).items()}


def voice_per_item_by_task(items: Mapping[str, Iterable[Mapping[str, Any]]]
                           ) -> dict[str, bool]:
    """task -> whether every item is rendered in a voice no other item of the task
    uses (`study_b.items.assign_voices`): then the item is also the voice's cluster."""
    return {task: len(set(v)) == len(v) == n for task, (v, n) in _item_voices(items).items()}


def _item_voices(items: Mapping[str, Iterable[Mapping[str, Any]]]
                 ) -> dict[str, tuple[list[str], int]]:
    """task -> (the voices its items name, the number of items), for tasks whose items
    name any voice."""
    out: dict[str, tuple[list[str], int]] = {}
    for task, rows in sorted(items.items()):
        rows = list(rows)
        voices = [str(r.get("voice")) for r in rows
                  if r.get("voice") is not None and str(r.get("voice")) not in ("", "nan")]
        if voices:
            out[str(task)] = (voices, len(rows))
    return out


def voice_clause(n_voices: Iterable[Any], tasks: Iterable[Any],
                 voice_per_item: Iterable[Any] | None = None,
                 cluster_unit: Iterable[Any] | None = None) -> str:
    """The caption sentence naming what a Study B interval generalises over, from the
    `n_voices`, `task` and (when present) `voice_per_item` and `cluster_unit` columns
    of the rows a table shows (empty when no row names its voices). Three designs:
    each item in its own voice (the item is the voice's cluster: the intervals
    generalise over voices); items sharing voices, clustered on the voice
    (`study_b.metrics.item_clusters`; also over voices); items sharing too few voices
    to cluster on, clustered on the item (conditional on the voices used). Which unit a
    row clustered on is its own `cluster_unit`, never re-derived here."""
    tasks = [str(t) for t in tasks]
    n_voices = list(n_voices)
    own = list(voice_per_item) if voice_per_item is not None else [False] * len(tasks)
    units = list(cluster_unit) if cluster_unit is not None else ["item"] * len(tasks)
    by_task: dict[str, list[Any]] = {}
    own_by_task: dict[str, set] = {}
    unit_by_task: dict[str, set] = {}
    for task, v, o, u in zip(tasks, n_voices, own, units, strict=True):
        by_task.setdefault(task, []).append(v)
        if _ks([v]):  # a row naming no voices (e.g. a chance row) says nothing of them
            own_by_task.setdefault(task, set()).add(_truthy(o))
            unit_by_task.setdefault(task, set()).add(str(u))
    shared, clustered, separate = [], [], []
    for task, vals in sorted(by_task.items()):
        ks = _ks(vals)
        if not ks:
            continue
        k = "/".join(str(x) for x in ks)
        noun = "voice" if k == "1" else "voices"
        if own_by_task.get(task) == {True}:
            separate.append(f"{task}: {k} items, {k} voices")
        elif unit_by_task.get(task) == {"voice"}:
            clustered.append(f"{task}: {k} {noun}")
        else:
            shared.append(f"{task}: the {k} {noun} used")
    parts = []
    if separate:
        parts.append("Each item is rendered in its own voice (" + "; ".join(separate)
                     + ") and the intervals cluster on the item, so they generalise over "
                     "items and over voices drawn like the study's espeak roster")
    if clustered:
        parts.append("Items share the voices they are rendered with (" + "; ".join(clustered)
                     + ") and the intervals cluster on the voice (n_clusters counts voices), "
                     "so they generalise over voices drawn like the study's espeak roster "
                     "and the items read in them")
    if shared:
        parts.append("Items are nested in the voices they are rendered with and the "
                     "intervals cluster on the item, so they are conditional on the voices "
                     "used (" + "; ".join(shared) + "): they generalise over items read in "
                     "these voices, not over voices")
    return ". ".join(parts)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() == "true"
    try:
        return bool(value) and value == value  # NaN is not True
    except (TypeError, ValueError):
        return False
