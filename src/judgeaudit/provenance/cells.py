"""Trace one number of a table back to the exact trials and judge responses behind
it, and recompute it from them with the same statistics function the metrics rule
used (`judgeaudit trace <table> --row <key> --column <col>`).

Generic over table columns: a table is any TSV with a provenance record; its rows
are picked by their non-numeric key columns, whatever they are. The chain of rules
is read from the provenance records (pruned to the files of this row's judge/task).
The recomputation is not implemented here: the metrics rule found in the chain names
its recipe in the outputs registry (`judgeaudit.outputs.recipe_for_rule`), whose own
load, cell-selection and compute functions (`judgeaudit.study_a.compute`,
`judgeaudit.study_b.compute`, the functions the rule's script calls) run on the
records this module finds. Tables the registry marks `recomputed=False`, and tables
made some other way, are traced (rules, config) but not recomputed, and the trace
says so.

Per trial the trace keeps everything (nothing cut): the whole request as sent, the
audio paths, the labels the request showed (`labels_shown`), the parsed answer, the
raw answer and the file and line of the response (`trial_row`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit import outputs as registry
from judgeaudit.io import read_jsonl
from judgeaudit.provenance import record_path
from judgeaudit.registry import dotted

# files whose records the cell chain follows; anything else is listed as a leaf
FOLLOW_PREFIXES = ("results/tables/", "results/metrics/", "results/responses/",
                   "results/trials/")
STOP_PREFIXES = ("results/trials/",)  # listed with their record, not followed further
STAT_NAMES = {"method", "ci_method"}  # text columns that describe a number, not a key


class CellError(ValueError):
    """A table, row or column that cannot be traced (message names what and why)."""


# ------------------------------------------------------------------ tables and rows
def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """A TSV with its key columns as strings (NaN -> "")."""
    frame = pd.read_csv(path, sep="\t")
    for col in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(
                frame[col]):
            frame[col] = frame[col].map(_keystr)
    return frame


def _keystr(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def text_columns(frame: pd.DataFrame) -> list[str]:
    """Non-numeric columns (keys and labels), in table order, except method names."""
    return [c for c in frame.columns if c not in STAT_NAMES and (
        not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]))]


# Per-table facts the trace of every row of a table needs (its key columns, each text
# column's distinct values), computed once per table frame: a report traces every row
# of the same frame object (tables are read once and never modified). Keyed by the
# frame's id, checked against a weak reference so a new frame at a reused id is not
# mistaken for the old one.
_FRAME_MEMO: dict[int, tuple[Any, dict[str, Any]]] = {}


def _frame_memo(frame: pd.DataFrame) -> dict[str, Any]:
    got = _FRAME_MEMO.get(id(frame))
    if got is not None and got[0]() is frame and got[1]["shape"] == frame.shape:
        return got[1]
    if len(_FRAME_MEMO) > 64:
        _FRAME_MEMO.clear()
    memo: dict[str, Any] = {"shape": frame.shape}
    _FRAME_MEMO[id(frame)] = (weakref.ref(frame), memo)
    return memo


def key_columns(frame: pd.DataFrame) -> list[str]:
    """The shortest prefix of the text columns (in table order) that tells the rows
    apart; all text columns when none does."""
    memo = _frame_memo(frame)
    if "keys" not in memo:
        memo["keys"] = _key_columns(frame)
    return list(memo["keys"])


def _key_columns(frame: pd.DataFrame) -> list[str]:
    text = text_columns(frame)
    for i in range(1, len(text) + 1):
        if not frame.duplicated(subset=text[:i]).any():
            return text[:i]
    return text


def value_columns(frame: pd.DataFrame) -> list[str]:
    """Columns holding numbers (what a cell trace explains)."""
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])]


def row_key(frame: pd.DataFrame, index: int, keys: Sequence[str] | None = None) -> str:
    keys = key_columns(frame) if keys is None else keys
    if not keys:
        return str(index)
    return ",".join(f"{k}={frame.at[index, k]}" for k in keys)


def select_row(frame: pd.DataFrame, row: str | int, table: str = "") -> int:
    """Index of the one row `row` names: an integer (0-based) or `col=value,...`
    (a subset of columns; it must match exactly one row)."""
    if isinstance(row, int) or str(row).strip().isdigit():
        i = int(row)
        if not 0 <= i < len(frame):
            raise CellError(f"{table}: row {i} out of range (table has {len(frame)} rows)")
        return i
    mask = pd.Series(True, index=frame.index)
    for part in str(row).split(","):
        if "=" not in part:
            raise CellError(f"{table}: --row {row!r}: expected col=value[,col=value...] or a "
                            f"row number")
        col, val = (s.strip() for s in part.split("=", 1))
        if col not in frame.columns:
            raise CellError(f"{table}: --row names column {col!r}; columns are "
                            f"{list(frame.columns)}")
        mask &= frame[col].map(_keystr) == val
    hits = list(frame.index[mask])
    if len(hits) != 1:
        keys = key_columns(frame)
        shown = [row_key(frame, i, keys) for i in (hits or list(frame.index))[:8]]
        raise CellError(f"{table}: --row {row!r} matches {len(hits)} rows (need exactly 1); "
                        f"{'matching' if hits else 'rows'} e.g. {shown}")
    return int(hits[0])


# ------------------------------------------------------------------ provenance chain
def _stamp(path: str | os.PathLike) -> tuple[str, int]:
    """Cache key: absolute path and modification time (a rewritten file is re-read)."""
    p = _resolved(str(path))
    try:
        return p, os.stat(p).st_mtime_ns
    except OSError:
        return p, -1


@functools.lru_cache(maxsize=65536)
def _resolved(path: str) -> str:
    """Path.resolve of a path (memoised: a report resolves the same few hundred files
    tens of thousands of times; the mtime in `_stamp` is read afresh every time)."""
    return str(Path(path).resolve())


def _record(path: str) -> dict[str, Any] | None:
    return _record_at(*_stamp(_record_path(path)))


@functools.lru_cache(maxsize=65536)
def _record_path(path: str) -> str:
    return str(record_path(path))


@functools.lru_cache(maxsize=4096)
def _record_at(rec: str, mtime: int) -> dict[str, Any] | None:
    return json.loads(Path(rec).read_text(encoding="utf-8")) if mtime >= 0 else None


def _other_values(frame: pd.DataFrame, index: int) -> set[str]:
    """Values that other rows have in a key column and this row does not: a path
    naming one of them (e.g. another judge's responses) is not behind this row."""
    out: set[str] = set()
    own: set[str] = set()
    memo = _frame_memo(frame)
    if "distinct" not in memo:
        memo["distinct"] = [(col, [v for v in map(_keystr, frame[col].unique()) if len(v) > 2])
                            for col in text_columns(frame)]
    for col, distinct in memo["distinct"]:
        mine = _keystr(frame.at[index, col])
        own.add(mine)
        out |= {v for v in distinct if v != mine}
    # a value this row has in any key column is its own, and so is the stem of one
    # (condition `conflict_fallible` or knob `conflict_fallible.follow_block` of family
    # `conflict` reads the shard `conflict.jsonl`)
    out -= own
    return {o for o in out
            if not any(m.startswith((o + "_", o + ".")) for m in own)}


def _relevant(path: str, others: set[str]) -> bool:
    return not (_path_names(path) & others)


@functools.lru_cache(maxsize=65536)
def _path_names(path: str) -> frozenset:
    """A path's folder names and its stem (whole and to the first dot), memoised: every
    row's chain asks for the same few hundred paths."""
    p = Path(path)
    return frozenset(p.parts[:-1]) | {p.stem, p.stem.split(".")[0]}


def chain(table: str, frame: pd.DataFrame, index: int, root: Path) -> list[dict[str, Any]]:
    """Records from `table` back to the trials, pruned to this row: one entry per
    output (rule, params, config hash, inputs in record order)."""
    others = _other_values(frame, index)
    out, seen, todo = [], set(), [table]
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        rec = _record(str(root / path))
        if rec is None:
            continue
        inputs = [i for i in rec.get("inputs", []) if i.get("role") != "code"]
        follow = [] if path.startswith(STOP_PREFIXES) else [
            i["path"] for i in inputs
            if i["path"].startswith(FOLLOW_PREFIXES) and _relevant(i["path"], others)]
        out.append({"output": path, "rule": rec["rule"], "params": rec.get("params", {}),
                    "wildcards": (rec.get("extra") or {}).get("wildcards", {}),
                    "config_sha256": rec.get("config_sha256"),
                    "config_path": rec.get("config_path"),
                    "code": rec.get("code", {}),
                    "inputs": [{"path": i["path"], "role": i.get("role", ""),
                                "sha256": i.get("sha256"), "followed": i["path"] in follow}
                               for i in inputs
                               if i["path"] in follow or not i["path"].startswith(
                                   FOLLOW_PREFIXES)]})
        todo.extend(follow)
    return out


def _prune_to_trials(ch: list[dict], ids: set[str], root: Path) -> list[dict]:
    """Drop trial/response files that hold none of the cell's trials (and the
    records that exist only for them): the chain then lists only what is behind
    the number."""
    if not ids:
        return ch
    raw = ("results/trials/", "results/responses/")

    def keep(path: str) -> bool:
        if not path.startswith(raw) or not path.endswith(".jsonl"):
            return True
        return not ids.isdisjoint(_trial_ids(str(root / path)))

    out, dropped = [], set()
    for node in ch:
        if not keep(node["output"]):
            dropped.add(node["output"])
            continue
        had_raw = any(i["path"].startswith(raw) for i in node["inputs"])
        inputs = [i for i in node["inputs"] if keep(i["path"])]
        if had_raw and not any(i["path"].startswith(raw) for i in inputs):
            dropped.add(node["output"])  # e.g. another shard's scored table
            continue
        out.append(dict(node, inputs=inputs))
    return [dict(n, inputs=[i for i in n["inputs"] if i["path"] not in dropped]) for n in out]


# ------------------------------------------------------------------ recipes
# The recomputation is the outputs registry's: for the metrics rule found in a
# table's chain, `judgeaudit.outputs.recipe_for_rule(rule)` names the rule's own load,
# cell-selection and compute functions (judgeaudit.study_a.compute,
# judgeaudit.study_b.compute). This module only finds the files the chain names and
# hands their records to them.
def _jsonl(path: str) -> tuple[dict, ...]:
    return _jsonl_at(*_stamp(path))


def _trial_ids(path: str) -> frozenset:
    """The trial ids a trial or response file holds."""
    return _trial_ids_at(*_stamp(path))


@functools.lru_cache(maxsize=1024)
def _trial_ids_at(path: str, mtime: int) -> frozenset:
    return frozenset(r.get("trial_id") for r in _jsonl_at(path, mtime))


@functools.lru_cache(maxsize=256)
def _jsonl_at(path: str, mtime: int) -> tuple[dict, ...]:
    return tuple(read_jsonl(path))


def _response_index(paths: Sequence[str], root: Path) -> dict[str, dict]:
    """trial_id -> response, with the file (relative to root) and 1-based line of it."""
    out = {}
    for p in paths:
        out.update(_file_response_index(str(p), *_stamp(str(root / p))))
    return out


@functools.lru_cache(maxsize=1024)
def _file_response_index(rel: str, path: str, mtime: int) -> dict[str, dict]:
    """One response file's index (read-only: callers copy it into their own dict)."""
    return {r["trial_id"]: dict(r, _file=rel, _line=line)
            for line, r in enumerate(_jsonl_at(path, mtime), 1)}


# facts that are labels or slot assignments the request showed the judge
LABEL_FACTS = ("reference_label", "block_label", "wrong_label", "stated_label", "placement",
               "cue", "order", "swap", "rendering_a")


def request_parts(request: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The user turn's parts in order: text parts whole, audio parts by path."""
    out = []
    for part in (request or {}).get("parts", []):
        if part.get("kind") == "audio":
            out.append({"kind": "audio", "path": part.get("path"),
                        "sha256": part.get("sha256"), "format": part.get("format")})
        else:
            out.append({"kind": "text", "text": part.get("text", "")})
    return out


def request_text(request: Mapping[str, Any] | None) -> str:
    """The whole provider-neutral request as the judge received it: the system text,
    then every part of the user turn in order (audio parts as `[audio: <path>]`)."""
    req = request or {}
    lines = [f"[system]\n{req['system']}"] if req.get("system") else []
    lines.append("[user]")
    for part in request_parts(req):
        lines.append(f"[audio: {part['path']}]" if part["kind"] == "audio" else part["text"])
    return "\n".join(lines)


# A trial's request as its trace rows show it, by the request object (the trial
# records are the memoised file reads): every judge's row of one trial shows the same
# request, so its parts, text and audio are made once and shared (read-only, as the
# rows are). The request is kept with them so its id stays its own.
_REQUEST_MEMO: dict[int, tuple[Any, tuple[list, str, list]]] = {}
_LABELS_MEMO: dict[int, tuple[Any, dict]] = {}


def _by_object(memo: dict, obj: Any, make: Any) -> Any:
    """`make()` once per object (by id, the object kept so its id stays its own)."""
    got = memo.get(id(obj))
    if got is None or got[0] is not obj:
        if len(memo) > 200_000:
            memo.clear()
        got = memo[id(obj)] = (obj, make())
    return got[1]


def _request_view(request: Mapping[str, Any] | None) -> tuple[list, str, list]:
    def make() -> tuple[list, str, list]:
        parts = request_parts(request)
        return parts, request_text(request), [p["path"] for p in parts
                                              if p["kind"] == "audio"]

    return _by_object(_REQUEST_MEMO, request, make)


def _labels_shown(facts: Mapping[str, Any]) -> dict[str, Any]:
    return {k: facts[k] for k in LABEL_FACTS if facts.get(k) is not None and facts.get(k) != ""}


def trial_row(t: Mapping[str, Any], r: Mapping[str, Any]) -> dict[str, Any]:
    """One trial of a cell trace with its response: nothing cut (see
    docs/notes: registry_interface). The request's parts, text, audio and labels are
    shared by the rows of one trial (read-only)."""
    facts = t.get("facts", {}) or {}
    request = t.get("request")
    alt = (t.get("alt_requests") or {}).get(r.get("layout"))
    if alt:  # the judge got the trial's alternate layout (judges.shard.select_request)
        request, facts = alt.get("request"), {**facts, **(alt.get("facts") or {})}
        labels = _labels_shown(facts)
    else:  # the trial's own facts object: its labels once
        labels = _by_object(_LABELS_MEMO, facts, lambda: _labels_shown(facts))
    parts, text, audio = _request_view(request)
    source = f"{r['_file']}:{r['_line']}" if r.get("_file") else None
    return {"trial_id": t["trial_id"], "task": t.get("task"),
            "condition": t.get("condition"), "gold": t.get("gold"), "facts": facts,
            "judge": r.get("judge"), "status": r.get("status"), "parsed": r.get("parsed"),
            "request_key": r.get("request_key"), "cache_hit": r.get("cache_hit"),
            "model_version": r.get("model_version"), "raw_text": r.get("raw_text"),
            "request_system": (request or {}).get("system"), "layout": r.get("layout"),
            "request_parts": parts, "request_text": text, "audio": audio,
            "labels_shown": labels,
            "response_file": r.get("_file"), "response_line": r.get("_line"),
            "response_source": source}


def _trial_rows(trials: Sequence[dict], responses: Mapping[str, dict]) -> list[dict]:
    return [trial_row(t, responses.get(t["trial_id"], {})) for t in trials]


def _params(ch: Sequence[dict], rule: str, judge: str) -> dict[str, Any]:
    """The params the rule's record holds (the config values it received): of this
    judge's job where the rule runs per judge."""
    nodes = [n for n in ch if n["rule"] == rule and n["params"]]
    mine = [n for n in nodes if str(n["params"].get("judge", n["wildcards"].get(
        "judge", judge))) == str(judge)]
    return dict((mine or nodes)[0]["params"]) if (mine or nodes) else {}


def _files(ch: Sequence[dict], prefix: str, rule: str | None = None) -> list[str]:
    """Input files under `prefix` in chain order (record input order kept)."""
    out: list[str] = []
    for node in ch:
        if rule and node["rule"] != rule:
            continue
        out += [i["path"] for i in node["inputs"] if i["path"].startswith(prefix)
                and i["path"] not in out]
    return out


def _trials_responses(recipe, row: Mapping[str, Any], ch: Sequence[dict], root: Path):
    """The rule's trial and response files (this judge's, this task's trials)."""
    judge, task = row["judge"], row["task"]
    trial_files = _files(ch, "results/trials/", recipe.rule)
    resp_files = [f for f in _files(ch, "results/responses/", recipe.rule)
                  if Path(f).parts[2] == judge]
    files = (task, judge, tuple(_stamp(root / f) for f in trial_files),
             tuple((f, *_stamp(root / f)) for f in resp_files))
    # every row of a judge x task reads the same files: filtered and indexed once
    # (read-only, as the memoised loads)
    trials, resp = _memoised(_RAW_MEMO, files, lambda: (
        [t for f in trial_files for t in _jsonl(str(root / f)) if t["task"] == task],
        _response_index(resp_files, root)))
    return trials, resp, files


# the recipe's load of one judge x task (the same for every cell of it): read-only,
# the recipes' cell selections copy what they keep
_LOAD_MEMO: dict[tuple, Any] = {}
# the recipe's compute on one selection of a memoised load, and the trial rows of one
# set of its trials (read-only)
_CELL_MEMO: dict[tuple, Any] = {}
_ROWS_MEMO: dict[tuple, list] = {}
# one judge x task's trials and its responses by trial id (`_trials_responses`)
_RAW_MEMO: dict[tuple, tuple] = {}


def _memoised(store: dict, key: Any, make: Any, limit: int = 64) -> Any:
    """`store[key]`, made once by `make()`; a store past `limit` entries starts afresh
    (a report traces one table after another, so old entries are not read again)."""
    if key not in store:
        if len(store) > limit:
            store.clear()
        store[key] = make()
    return store[key]


def _scored_plan(recipe, row: Mapping[str, Any], ch: Sequence[dict], root: Path) -> tuple:
    """What `_scored_shards` reads, as a memo key: the judge, the task (None for a
    family), each scored shard's trial and response files with their stamps, and the
    item files with theirs."""
    judge = row["judge"]
    task = None if recipe.family else row["task"]
    shards = []
    for node in ch:
        if not node["rule"].startswith("study_b_score"):  # study_b_score(_probes)
            continue
        wc = node["wildcards"]
        if wc.get("judge") != judge or (task is not None and wc.get("task") != task):
            continue
        tfile = next(i["path"] for i in node["inputs"] if i["role"] == "trials")
        rfile = next(i["path"] for i in node["inputs"] if i["role"] == "responses")
        shards.append((wc["shard"], tfile, _stamp(root / tfile), rfile, _stamp(root / rfile)))
    items = [str(root / f) for f in _files(ch, "results/conditions/B/", recipe.rule)
             if f.endswith("items.jsonl")]
    return (recipe.rescore, recipe.load, judge, task, tuple(shards),
            tuple((f, _stamp(f)) for f in items))


def _scored_shards(plan: tuple, root: Path):
    """The scored shards of this judge and task (of every task of the row's family,
    when the recipe names one; `_scored_plan`), re-scored from their trials and
    responses with the recipe's own scoring function."""
    rescore, load, judge, task, shards, items = plan
    frames, trials, resp_all = [], [], {}
    for shard, tfile, _, rfile, _ in shards:
        t = list(_jsonl(str(root / tfile)))
        resp = _response_index([rfile], root)
        frames.append(rescore(t, [resp[x["trial_id"]] for x in t if x["trial_id"] in resp],
                              judge, shard, what=rfile))
        trials += t
        resp_all.update(resp)
    if not frames:
        raise CellError(f"no scored Study B shards of judge {judge!r}, task "
                        f"{task or 'any'!r} in the provenance chain")
    return load(frames, [f for f, _ in items]), trials, resp_all


def _family_chain(recipe, ch: Sequence[dict], root: Path,
                  family: tuple[pd.DataFrame, int] | None) -> Sequence[dict]:
    """The chain a recipe with a multiplicity family loads: the table's chain pruned
    only on the family columns (`family`: the table's rows on those columns and the
    row's index), so it holds every task of the row's judge; the row's own chain
    otherwise."""
    if not recipe.family or family is None or not ch:
        return ch
    return chain(ch[0]["output"], family[0], family[1], root)


_FAMILY_MEMO: dict[tuple, dict[str, pd.DataFrame]] = {}


def _compute(recipe, cell_inputs: Mapping[str, Any], params: Mapping[str, Any], key: tuple,
             name: str | None = None) -> dict[str, pd.DataFrame]:
    """The recipe's compute on the cell's inputs (its output `name` alone when the
    recipe can compute it alone: `Recipe.compute_output`); a family's (the same for
    every row of the family) computed once per family."""
    def run() -> dict[str, pd.DataFrame]:
        if recipe.compute_output is not None and name in recipe.outputs:
            return recipe.compute_output(cell_inputs, params, name)
        return recipe.compute(cell_inputs, params)

    if not recipe.family:
        return run()
    key = (*key, name)
    if key not in _FAMILY_MEMO:
        if len(_FAMILY_MEMO) > 64:
            _FAMILY_MEMO.clear()
        _FAMILY_MEMO[key] = run()
    return _FAMILY_MEMO[key]


def _recompute(recipe, row: Mapping[str, Any], ch: Sequence[dict], root: Path,
               family: tuple[pd.DataFrame, int] | None = None, name: str | None = None
               ) -> tuple[dict[str, pd.DataFrame], list[dict], str]:
    """(the recipe's outputs recomputed on the cell, the cell's trials, how); `name`:
    the output the traced table's rows come from (the only one a recipe with
    `compute_output` recomputes)."""
    params = _params(ch, recipe.rule, row["judge"])
    params["judge"] = row["judge"]
    ch = _family_chain(recipe, ch, root, family)
    load_key = None
    if recipe.source == "trials_responses":
        trials, resp, files = _trials_responses(recipe, row, ch, root)
        mans: list[str] = []
        if recipe.manifests is not None:  # the corpus manifests among the rule's inputs
            mans = [f for f in _files(ch, "data/", recipe.rule) if f.endswith("/manifest.tsv")]
            files = (*files, tuple((f, *_stamp(root / f)) for f in mans))
        load_key = (recipe.load, files, json.dumps(params, sort_keys=True, default=str))

        def load() -> Any:  # the manifests read only when the load is made, not per row
            extra = ({} if recipe.manifests is None else
                     {"manifests": recipe.manifests([root / f for f in mans])})
            return recipe.load(trials, [resp[t["trial_id"]] for t in trials
                                        if t["trial_id"] in resp], params, **extra)

        inputs = _memoised(_LOAD_MEMO, load_key, load)
    elif recipe.source == "scored_shards":
        # one re-scoring per judge x task (x family) and its files, not one per row:
        # every state of a judge x task, every row of a Holm family reads the same shards
        load_key = _scored_plan(recipe, row, ch, root)
        inputs, trials, resp = _memoised(_LOAD_MEMO, load_key,
                                         lambda: _scored_shards(load_key, root))
    else:
        raise CellError(f"recipe of rule {recipe.rule}: unknown source {recipe.source!r}")
    cell_inputs, ids, note = recipe.select(inputs, row)
    key = (recipe.rule, str(root.resolve()), *(_keystr(row.get(f)) for f in recipe.family),
           json.dumps(params, sort_keys=True, default=str), _raw_stamps(ch, root))
    # rows whose selections are the same rows of the same memoised load (e.g. every
    # contrast of one judge x task reads all of the task's trials) share one compute
    same = None
    # (values other than frames are carried whole from the memoised load)
    frames_in = {k: v for k, v in cell_inputs.items() if isinstance(v, pd.DataFrame)}
    if (load_key is not None and not recipe.family and frames_in
            and all(v.index.is_unique for v in frames_in.values())):
        same = (recipe.compute, name, load_key, json.dumps(params, sort_keys=True, default=str),
                tuple((k, tuple(v.index)) for k, v in sorted(frames_in.items())))
    if same is None:
        outputs = _compute(recipe, cell_inputs, params, key, name)
    else:
        outputs = _memoised(_CELL_MEMO, same,
                            lambda: _compute(recipe, cell_inputs, params, key, name))
    shown = {k: v for k, v in sorted(params.items()) if k in ("n_boot", "seed", "gate")}
    how = (f"{dotted(recipe.compute)}({', '.join(f'{k}={v}' for k, v in shown.items())}) "
           f"on {dotted(recipe.select)} of {dotted(recipe.load)}: {note}")
    def rows() -> list:
        return _trial_rows([t for t in trials if t["trial_id"] in ids], resp)

    if load_key is None:
        return outputs, rows(), how
    return outputs, _memoised(_ROWS_MEMO, (load_key, frozenset(ids)), rows), how


_MEMO: dict[tuple, tuple] = {}


def _raw_stamps(ch: Sequence[dict], root: Path) -> tuple:
    """The trial and response files a chain reads, with their modification times."""
    return tuple(sorted({_stamp(root / i["path"]) for n in ch for i in n["inputs"]
                         if i["path"].startswith(("results/trials/", "results/responses/"))}))


def _run_recipe(recipe, row: Mapping[str, Any], ch: Sequence[dict], root: Path,
                family: tuple[pd.DataFrame, int] | None = None, name: str | None = None):
    files = _raw_stamps(ch, root)
    # rows agreeing on the registry's cell fields (and on the output their table reads)
    # share one recomputation, unless a metric reads trials beyond its cell (the
    # registry's Metric.reads_beyond_cell)
    key = (recipe.rule, name, str(root.resolve()),
           registry.reads_beyond_cell(recipe.rule, row.get("metric")),
           *(_keystr(row.get(f)) for f in registry.CELL_FIELDS), files)
    if key not in _MEMO:
        if len(_MEMO) > 64:
            _MEMO.clear()
        _MEMO[key] = _recompute(recipe, row, ch, root, family, name)
    return _MEMO[key]


# ------------------------------------------------------------------ the trace
@dataclass
class CellTrace:
    table: str
    row_index: int
    row_key: str
    column: str
    value: Any
    row: dict[str, Any]
    chain: list[dict[str, Any]]
    config: dict[str, Any]
    recipe: str | None = None
    recomputed: Any = None
    match: bool | None = None
    trials: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return _clean(asdict(self))


def _clean(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item") and not isinstance(v, str | bytes):
        return _clean(v.item())
    return v


def same_number(a: Any, b: Any) -> bool:
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return _keystr(a) == _keystr(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return math.isclose(fa, fb, rel_tol=1e-9, abs_tol=1e-12)


# A recomputed frame's rows by their key columns' strings, by the frame and the key
# columns (the frame kept with them, so its id stays its own): the rows sharing one
# recomputation pick from one index, not by a mask over the frame each.
_KEY_INDEX_MEMO: dict[tuple[int, tuple], tuple[pd.DataFrame, dict[tuple, list[int]]]] = {}


def _key_index(frame: pd.DataFrame, cols: tuple[str, ...]) -> dict[tuple, list[int]]:
    got = _KEY_INDEX_MEMO.get((id(frame), cols))
    if got is not None and got[0] is frame:
        return got[1]
    if len(_KEY_INDEX_MEMO) > 64:
        _KEY_INDEX_MEMO.clear()
    index: dict[tuple, list[int]] = {}
    keys = (zip(*(frame[k].map(_keystr) for k in cols), strict=True) if cols
            else [()] * len(frame))
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    _KEY_INDEX_MEMO[(id(frame), cols)] = (frame, index)
    return index


def _pick(recomputed: pd.DataFrame, row: Mapping[str, Any], keys: Sequence[str]
          ) -> pd.Series | None:
    """The one row of `recomputed` whose key columns (those of `keys` it has) read as
    the row's (as strings); None when no row or several do."""
    if recomputed is None or recomputed.empty:
        return None
    cols = tuple(k for k in keys if k in recomputed.columns)
    hits = _key_index(recomputed, cols).get(tuple(_keystr(row[k]) for k in cols), ())
    return recomputed.iloc[hits[0]] if len(hits) == 1 else None


def _config_of(ch: Sequence[dict]) -> dict[str, Any]:
    """Config hash and resolved-config path of the table's record, and the params
    (the config values each rule of the chain received), closest rule first."""
    head = ch[0] if ch else {}
    params: dict[str, Any] = {}
    for n in ch:
        if n["params"] and n["rule"] not in params:
            params[n["rule"]] = n["params"]
    return {"config_sha256": head.get("config_sha256"), "config_path": head.get("config_path"),
            "params": params}


def trace_row(table: str | os.PathLike, row: str | int, columns: Sequence[str] | None = None,
              root: str | os.PathLike = ".", frame: pd.DataFrame | None = None
              ) -> list[CellTrace]:
    """Cell traces of one row (every numeric column, or `columns`), sharing one
    provenance chain and one recomputation."""
    root = Path(root)
    table = str(table)
    if not (root / table).is_file():
        raise CellError(f"{table}: no such table")
    if not record_path(root / table).exists():
        raise CellError(f"{table}: no provenance record at {record_path(table)}")
    frame = read_table(root / table) if frame is None else frame
    columns = value_columns(frame) if columns is None else list(columns)
    for column in columns:
        if column not in frame.columns:
            raise CellError(f"{table}: no column {column!r}; numeric columns are "
                            f"{value_columns(frame)}")
    index = select_row(frame, row, table)
    keys = key_columns(frame)
    row_dict = {c: _clean(frame.at[index, c]) for c in frame.columns}
    stem = Path(table).name.split(".")[0]
    entry = registry.TABLES.get(stem)
    for col, target in (entry.aliases.items() if entry else ()):
        row_dict.setdefault(target, row_dict.get(col))  # Table IV: format = condition
    for col, value in (entry.fixed.items() if entry else ()):
        row_dict.setdefault(col, value)
    for col, code in (entry.codes.items() if entry else ()):
        if col in row_dict:  # a key a TSV reader retyped (the state "011" read as 11)
            row_dict[col] = code(row_dict[col])
    ch = chain(table, frame, index, root)
    config = _config_of(ch)
    base = dict(table=table, row_index=index, row_key=row_key(frame, index, keys),
                row=row_dict, chain=ch, config=config)
    cells = [CellTrace(column=c, value=_clean(frame.at[index, c]), **base) for c in columns]
    recipe = next((registry.recipe_for_rule(n["rule"]) for n in ch
                   if registry.recipe_for_rule(n["rule"]) is not None), None)
    if entry is not None and not entry.recomputed:
        for c in cells:
            c.note = f"not recomputed: {entry.why_not}"
        return cells
    # a row a recipe declares not recomputed (its chain may name no per-judge rule: a
    # panel-level row reads every judge's metrics)
    why_row = next((why for r in ([recipe] if recipe else []) + list(registry.RECIPES.values())
                    if (why := r.row_not_recomputed(row_dict))), "")
    if why_row:
        for c in cells:
            c.note = f"not recomputed: {why_row}"
        return cells
    missing = [k for k in (recipe.required if recipe else ()) if k not in row_dict]
    if recipe is None or not recipe.select or missing:
        note = (f"no recomputation recipe: no metrics rule of {sorted(registry.RECIPES)} in "
                f"the provenance chain" if recipe is None else
                f"no recomputation: the rule {recipe.rule} is not recomputed from trials"
                if not recipe.select else
                f"no recomputation: the metrics rule {recipe.rule} needs key columns "
                f"{missing} that this table does not have")
        for c in cells:
            c.note = note
        return cells
    family = None
    if recipe.family:  # the family's rows of the table, on the family columns only
        family = (frame[[c for c in recipe.family if c in frame.columns]], index)
    name = _output_name(recipe, entry, stem, ch)
    outputs, trials, how = _run_recipe(recipe, row_dict, ch, root, family, name)
    recomputed = _as_table(outputs.get(name), entry)
    ch = _prune_to_trials(ch, {t["trial_id"] for t in trials}, root)
    for c in cells:
        c.chain = ch
        c.config = _config_of(ch)
    pick_keys = text_columns(frame) + [k for k in (entry.fixed if entry else ())
                                       if k not in frame.columns]
    codes = dict(entry.codes) if entry else {}
    if codes and recomputed is not None:  # key columns a TSV reader retyped (states)
        pick_keys += [k for k in codes if k not in pick_keys]
    hit = _pick(recomputed, row_dict, pick_keys)
    for c in cells:
        c.trials, c.recipe = trials, f"{how} -> output {name!r}"
        if c.column in recipe.not_recomputed:
            c.note = f"not recomputed: {recipe.not_recomputed[c.column]}"
            continue
        if hit is None or c.column not in hit.index:
            c.note = (f"the recomputation has no row/column matching {c.row_key} / "
                      f"{c.column}")
            c.match = False
            continue
        c.recomputed = _clean(hit[c.column])
        c.match = same_number(c.value, c.recomputed)
    return cells


# the recomputed frame as its table names and codes its keys, by the recomputed frame
# and the table entry (kept with it): the rows sharing one recomputation share it
_AS_TABLE_MEMO: dict[tuple[int, int], tuple[Any, Any, Any]] = {}


def _as_table(recomputed: pd.DataFrame | None, entry) -> pd.DataFrame | None:
    """`recomputed` with the table's aliased columns (Table IV: format = condition) and
    its coded keys (a state's 3-character code) as the table's reader sees them."""
    if recomputed is None or entry is None or not (entry.aliases or entry.codes):
        return recomputed
    got = _AS_TABLE_MEMO.get((id(recomputed), id(entry)))
    if got is not None and got[0] is recomputed and got[1] is entry:
        return got[2]
    base = recomputed
    for col, target in entry.aliases.items():
        if target in recomputed.columns:
            recomputed = recomputed.assign(**{col: recomputed[target]})
    codes = dict(entry.codes)
    if codes:  # key columns a TSV reader retyped (states)
        recomputed = recomputed.assign(**{k: recomputed[k].map(f) for k, f in codes.items()
                                          if k in recomputed.columns})
    if len(_AS_TABLE_MEMO) > 64:
        _AS_TABLE_MEMO.clear()
    _AS_TABLE_MEMO[(id(base), id(entry))] = (base, entry, recomputed)
    return recomputed


def _output_name(recipe, entry, stem: str, ch: Sequence[dict]) -> str | None:
    """Which of the recipe's outputs a traced table's rows come from: the traced file
    itself, else the table's input role of that name, else its stem, else the first
    output of the rule in the chain."""
    if ch and recipe.output_for(ch[0]["output"]):
        return recipe.output_for(ch[0]["output"])
    for role in (entry.inputs if entry else ()):
        if role in recipe.outputs:
            return role
    if stem in recipe.outputs:
        return stem
    return next((recipe.output_for(n["output"]) for n in ch if n["rule"] == recipe.rule
                 and recipe.output_for(n["output"])), None)


def trace_cell(table: str | os.PathLike, row: str | int, column: str,
               root: str | os.PathLike = ".", frame: pd.DataFrame | None = None
               ) -> CellTrace:
    """The trace of one number: table, row (number or col=value,...), column."""
    return trace_row(table, row, [column], root, frame)[0]


# ------------------------------------------------------------------ text rendering
def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def format_text(t: CellTrace, max_trials: int = 50) -> str:
    lines = [f"table   {t.table}", f"row     {t.row_key}   (row {t.row_index})",
             f"column  {t.column} = {_fmt(t.value)}", ""]
    if t.recipe is not None:
        verdict = "MATCH" if t.match else "MISMATCH"
        lines += [f"recomputed = {_fmt(t.recomputed)}   [{verdict}]",
                  f"  with {t.recipe}", f"  from {len(t.trials)} trials and their responses"]
    if t.note:
        lines.append(f"note: {t.note}")
    lines += ["", "rule chain (output <- rule; inputs behind this row):"]
    for n in t.chain:
        commit = str(n["code"].get("git_commit"))[:10]
        dirty = " dirty" if n["code"].get("git_dirty") else ""
        lines.append(f"  {n['output']} <- rule {n['rule']} (commit {commit}{dirty})")
        for i in n["inputs"]:
            lines.append(f"      {'>' if i['followed'] else ' '} {i['path']}  "
                         f"sha256 {(i['sha256'] or '')[:12]}")
    lines += ["", f"config  {t.config['config_sha256']}  "
                  f"(resolved: {t.config['config_path'] or 'not saved by this run'}; "
                  f"`judgeaudit config {str(t.config['config_sha256'])[:12]}`)"]
    for rule, params in t.config["params"].items():
        lines.append(f"  {rule}: {json.dumps(params, sort_keys=True)[:400]}")
    if t.trials:
        lines += ["", f"trials and responses ({len(t.trials)}; per trial: the labels the "
                      "request showed, the audio sent, the response's file:line, the whole "
                      "request and the raw answer):"]
        for r in t.trials[:max_trials]:
            lines.append(f"  {r['trial_id']} {r['status']} parsed={r['parsed']} "
                         f"gold={r['gold']} condition={r['condition']} "
                         f"key={str(r['request_key'])[:16]}")
            shown = ", ".join(f"{k}={v}" for k, v in r.get("labels_shown", {}).items())
            lines.append(f"      labels shown: {shown or '(none)'}")
            lines.append(f"      audio sent: {', '.join(map(str, r.get('audio') or [])) or '(none)'}")
            lines.append(f"      response: {r['response_source']}")
            lines.append("      request:")
            lines += [f"        | {x}" for x in (r.get("request_text") or "").splitlines()]
            raw = (r.get("raw_text") or "").replace("\n", " ")
            lines.append(f"      raw: {raw}")
        if len(t.trials) > max_trials:
            lines.append(f"  ... {len(t.trials) - max_trials} more (use --json for all)")
    return "\n".join(lines)


__all__ = ["LABEL_FACTS", "CellError", "CellTrace", "chain", "format_text", "key_columns",
           "read_table", "request_parts", "request_text", "row_key", "same_number",
           "select_row", "trace_cell", "trace_row", "trial_row", "value_columns"]
