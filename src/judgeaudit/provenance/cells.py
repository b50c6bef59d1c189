"""Trace one number of a table back to the exact trials and judge responses behind
it, and recompute it from them with the same statistics function the metrics rule
used (`judgeaudit trace <table> --row <key> --column <col>`).

Generic over table columns: a table is any TSV with a provenance record; its rows
are picked by their non-numeric key columns, whatever they are. The chain of rules
is read from the provenance records (pruned to the files of this row's judge/task);
the recomputation recipe is chosen by the metrics rule found in that chain:

- `study_a_metrics_judge` (Study A tables and metrics): `stats.study_a.join` +
  `stats.study_a.metrics` on the cell's trials;
- `study_b_accuracy`, `study_b_protocol_gap`, `study_b_cue_dependence`,
  `study_b_states` (Study B): `stats.study_b.score_trials` + the rule's function.

Tables made some other way are traced (rules, config) but not recomputed, and the
trace says so.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.io import read_jsonl
from judgeaudit.provenance import record_path
from judgeaudit.vocab.study_b import PROTOCOLS

# files whose records the cell chain follows; anything else is listed as a leaf
FOLLOW_PREFIXES = ("results/tables/", "results/metrics/", "results/responses/",
                   "results/trials/")
STOP_PREFIXES = ("results/trials/",)  # listed with their record, not followed further
STAT_NAMES = {"method", "ci_method"}  # text columns that describe a number, not a key
RAW_TEXT_CHARS = 240


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


def key_columns(frame: pd.DataFrame) -> list[str]:
    """The shortest prefix of the text columns (in table order) that tells the rows
    apart; all text columns when none does."""
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
    p = Path(path).resolve()
    try:
        return str(p), p.stat().st_mtime_ns
    except OSError:
        return str(p), -1


def _record(path: str) -> dict[str, Any] | None:
    return _record_at(*_stamp(record_path(path)))


@functools.lru_cache(maxsize=4096)
def _record_at(rec: str, mtime: int) -> dict[str, Any] | None:
    return json.loads(Path(rec).read_text(encoding="utf-8")) if mtime >= 0 else None


def _other_values(frame: pd.DataFrame, index: int) -> set[str]:
    """Values that other rows have in a key column and this row does not: a path
    naming one of them (e.g. another judge's responses) is not behind this row."""
    out: set[str] = set()
    own: set[str] = set()
    for col in text_columns(frame):
        mine = _keystr(frame.at[index, col])
        own.add(mine)
        out |= {v for v in map(_keystr, frame[col].unique()) if len(v) > 2 and v != mine}
    # a value this row has in any key column is its own (condition `conflict_fallible`
    # of family `conflict` reads the shard `conflict.jsonl`)
    return out - own


def _relevant(path: str, others: set[str]) -> bool:
    p = Path(path)
    parts = set(p.parts[:-1]) | {p.stem, p.stem.split(".")[0]}
    return not (parts & others)


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
        return any(r.get("trial_id") in ids for r in _jsonl(str(root / path)))

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
def _jsonl(path: str) -> tuple[dict, ...]:
    return _jsonl_at(*_stamp(path))


@functools.lru_cache(maxsize=256)
def _jsonl_at(path: str, mtime: int) -> tuple[dict, ...]:
    return tuple(read_jsonl(path))


def _response_index(paths: Sequence[str]) -> dict[str, dict]:
    out = {}
    for p in paths:
        for line, r in enumerate(_jsonl(p), 1):
            out[r["trial_id"]] = dict(r, _source=f"{p}:{line}")
    return out


def _trial_rows(trials: Sequence[dict], responses: Mapping[str, dict]) -> list[dict]:
    rows = []
    for t in trials:
        r = responses.get(t["trial_id"], {})
        raw = r.get("raw_text")
        rows.append({"trial_id": t["trial_id"], "task": t.get("task"),
                     "condition": t.get("condition"), "gold": t.get("gold"),
                     "facts": t.get("facts", {}), "judge": r.get("judge"),
                     "status": r.get("status"), "parsed": r.get("parsed"),
                     "request_key": r.get("request_key"), "cache_hit": r.get("cache_hit"),
                     "model_version": r.get("model_version"), "raw_text": raw,
                     "response_source": r.get("_source")})
    return rows


def _param(ch: Sequence[dict], rule: str, name: str, default: Any = None) -> Any:
    for node in ch:
        if node["rule"] == rule and name in node["params"]:
            return node["params"][name]
    return default


def _files(ch: Sequence[dict], prefix: str, rule: str | None = None) -> list[str]:
    """Input files under `prefix` in chain order (record input order kept)."""
    out: list[str] = []
    for node in ch:
        if rule and node["rule"] != rule:
            continue
        out += [i["path"] for i in node["inputs"] if i["path"].startswith(prefix)
                and i["path"] not in out]
    return out


def _study_a(row: Mapping[str, Any], ch: Sequence[dict], root: Path
             ) -> tuple[pd.DataFrame, list[dict], str]:
    from judgeaudit.stats import study_a as sa

    judge, task = row["judge"], row["task"]
    trial_files = _files(ch, "results/trials/A/", "study_a_metrics_judge")
    resp_files = [f for f in _files(ch, "results/responses/", "study_a_metrics_judge")
                  if Path(f).parts[2] == judge]
    trials = [t for f in trial_files for t in _jsonl(str(root / f)) if t["task"] == task]
    resp = _response_index([str(root / f) for f in resp_files])
    df = sa.join(trials, [resp[t["trial_id"]] for t in trials if t["trial_id"] in resp], judge)
    cell = (df["family"] == row["family"]) & (df["condition"] == row["condition"])
    if str(row.get("seed", "all")) != sa.POOLED:
        cell &= df["seed"] == str(row["seed"])
    used = cell.copy()
    note = "the cell's trials"
    if row.get("metric") == "rf_adj":  # reads the judge's own audio-only answers
        used |= df["condition"] == "audio_only"
        note += " plus this judge's audio_only trials of the task (rf_adj reads them)"
    n_boot = int(_param(ch, "study_a_metrics_judge", "n_boot", 2000))
    from judgeaudit.stats.outcomes import add_outcome_counts

    # as scripts/study_a_metrics_judge.py: metrics, then the outcome counts
    recomputed = add_outcome_counts(sa.metrics(df[used], n_boot=n_boot), df[used])
    recomputed = recomputed.assign(format=recomputed["condition"])  # Table V's name
    ids = set(df.loc[cell, "trial_id"])
    cell_trials = [t for t in trials if t["trial_id"] in ids]
    return recomputed, _trial_rows(cell_trials, resp), (
        f"stats.study_a.metrics(stats.study_a.join(trials, responses), n_boot={n_boot}) "
        f"on {note}")


def _scored(ch: Sequence[dict], root: Path, judge: str, task: str
            ) -> tuple[pd.DataFrame, list[dict], dict[str, dict]]:
    """score_trials on every (trials, responses) shard of this judge and task, through
    the same TSV round trip (write, `read_scored`) the metrics rules read."""
    from judgeaudit.stats import study_b as SB

    frames, trials, resp_all = [], [], {}
    for node in ch:
        if not node["rule"].startswith("study_b_score"):  # study_b_score(_probes)
            continue
        wc = node["wildcards"]
        if wc.get("judge") != judge or wc.get("task") != task:
            continue
        tfile = next(i["path"] for i in node["inputs"] if i["role"] == "trials")
        rfile = next(i["path"] for i in node["inputs"] if i["role"] == "responses")
        t = list(_jsonl(str(root / tfile)))
        resp = _response_index([str(root / rfile)])
        scored = SB.score_trials(t, [resp[x["trial_id"]] for x in t if x["trial_id"] in resp],
                                 judge, wc["shard"], what=rfile)
        buf = io.StringIO()
        scored.to_csv(buf, sep="\t", index=False, lineterminator="\n")
        buf.seek(0)
        frames.append(SB.read_scored(buf))
        trials += t
        resp_all.update(resp)
    if not frames:
        raise CellError(f"no scored Study B shards of judge {judge!r}, task {task!r} in the "
                        f"provenance chain")
    return pd.concat(frames, ignore_index=True), trials, resp_all


def _study_b(metric: str):
    def recipe(row: Mapping[str, Any], ch: Sequence[dict], root: Path
               ) -> tuple[pd.DataFrame, list[dict], str]:
        from judgeaudit.stats import study_b as SB

        rule = f"study_b_{metric}"
        scored, trials, resp = _scored(ch, root, row["judge"], row["task"])
        n_boot = int(_param(ch, rule, "n_boot", 2000))
        seed = int(_param(ch, rule, "seed", 0))
        proto = row.get("protocol", "")
        if metric == "accuracy":
            if proto == "probe_P":
                cell = scored["probe"] == "P"
            elif proto == "probe_O":
                cell = (scored["probe"] == "O") & (scored["oracle"] == True)  # noqa: E712
            else:
                cell = (scored["protocol"] == proto) & (scored["cue"] == row.get("cue", ""))
            recomputed, how = SB.accuracy(scored[cell]), "stats.study_b.accuracy"
        elif metric == "protocol_gap":
            cell = scored["protocol"].isin(PROTOCOLS) & (
                scored["cue"] == row.get("cue", ""))
            recomputed = SB.protocol_gap(scored[cell], n_boot=n_boot, seed=seed)
            how = f"stats.study_b.protocol_gap(n_boot={n_boot}, seed={seed})"
        elif metric == "cue_dependence":
            cell = (scored["protocol"] == proto) & scored["cue"].isin([row.get("cue", ""),
                                                                        "none"])
            recomputed = SB.cue_dependence(scored[cell], n_boot=n_boot, seed=seed)
            how = f"stats.study_b.cue_dependence(n_boot={n_boot}, seed={seed})"
        else:  # states -> potemkin or state distribution
            from judgeaudit.conditions.study_b.build import items_by_task

            item_files = [str(root / f) for f in _files(ch, "results/conditions/B/",
                                                        "study_b_states")
                          if f.endswith("items.jsonl")]
            cell = scored["probe"].isin(["P", "O"]) | (
                (scored["protocol"] == "pointwise") & (scored["cue"] == "none"))
            st = SB.states(scored[cell], items_by_task(item_files))
            if "state" in row:
                recomputed, how = SB.state_distribution(st), "stats.study_b.state_distribution"
            else:
                recomputed, how = SB.potemkin(st), "stats.study_b.potemkin"
                gate = _param(ch, "study_b_states", "gate")
                if gate is not None:  # as scripts/study_b_metrics.py: the chance gate
                    from judgeaudit.stats import chance as CH

                    gate = json.loads(gate) if isinstance(gate, str) else gate
                    recomputed = CH.gate_potemkin(
                        recomputed, st, CH.chance_distribution(items_by_task(item_files)),
                        gate["alpha"], gate["min_n"])
                    how += " + stats.chance.gate_potemkin"
            how = f"stats.study_b.states + {how}"
        ids = set(scored.loc[cell, "trial_id"])
        rows = _trial_rows([t for t in trials if t["trial_id"] in ids], resp)
        return recomputed, rows, f"stats.study_b.score_trials -> read_scored -> {how}"
    return recipe


_MEMO: dict[tuple, tuple] = {}
# row fields a recipe's cell selection reads (rows agreeing on them share one
# recomputation, e.g. the six pair metrics of one judge x task x format)
_CELL_FIELDS = ("judge", "task", "family", "condition", "seed", "protocol", "cue", "state")


def _run_recipe(rule: str, row: Mapping[str, Any], ch: Sequence[dict], root: Path):
    files = tuple(sorted(_stamp(root / i["path"]) for n in ch for i in n["inputs"]
                         if i["path"].startswith(("results/trials/", "results/responses/"))))
    key = (rule, str(root.resolve()), row.get("metric") == "rf_adj",
           "state" in row, *(_keystr(row.get(f)) for f in _CELL_FIELDS), files)
    if key not in _MEMO:
        if len(_MEMO) > 64:
            _MEMO.clear()
        _MEMO[key] = RECIPES[rule](row, ch, root)
    return _MEMO[key]


RECIPES = {
    "study_a_metrics_judge": _study_a,
    "study_b_accuracy": _study_b("accuracy"),
    "study_b_protocol_gap": _study_b("protocol_gap"),
    "study_b_cue_dependence": _study_b("cue_dependence"),
    "study_b_states": _study_b("states"),
}
# Tables whose rows are not one metric-rule row each: traced to rules and config only.
NOT_RECOMPUTED = {
    "study_b_state_distribution": (
        "the table interleaves each judge's states with chance-baseline rows "
        "(stats.chance.chance_distribution); the judge rows are "
        "results/metrics/B/state_distribution.tsv, traceable and recomputed there"),
}

REQUIRED_KEYS = {"study_a_metrics_judge": ("judge", "task", "family", "condition", "metric")}


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


def _pick(recomputed: pd.DataFrame, row: Mapping[str, Any], keys: Sequence[str]
          ) -> pd.Series | None:
    if recomputed is None or recomputed.empty:
        return None
    mask = pd.Series(True, index=recomputed.index)
    for k in keys:
        if k in recomputed.columns:
            mask &= recomputed[k].map(_keystr) == _keystr(row[k])
    hits = recomputed[mask]
    return hits.iloc[0] if len(hits) == 1 else None


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
    if "condition" not in row_dict and "format" in row_dict:  # Table V: format = condition
        row_dict["condition"] = row_dict["format"]
    ch = chain(table, frame, index, root)
    config = _config_of(ch)
    base = dict(table=table, row_index=index, row_key=row_key(frame, index, keys),
                row=row_dict, chain=ch, config=config)
    cells = [CellTrace(column=c, value=_clean(frame.at[index, c]), **base) for c in columns]
    rule = next((n["rule"] for n in ch if n["rule"] in RECIPES), None)
    why_not = NOT_RECOMPUTED.get(Path(table).stem)
    if why_not:
        for c in cells:
            c.note = f"not recomputed: {why_not}"
        return cells
    missing = [k for k in REQUIRED_KEYS.get(rule, ("judge", "task"))
               if k not in row_dict]
    if rule is None or missing:
        note = (f"no recomputation recipe: no metrics rule of {sorted(RECIPES)} in the "
                f"provenance chain" if rule is None else
                f"no recomputation: the metrics rule {rule} needs key columns {missing} "
                f"that this table does not have")
        for c in cells:
            c.note = note
        return cells
    recomputed, trials, how = _run_recipe(rule, row_dict, ch, root)
    ch = _prune_to_trials(ch, {t["trial_id"] for t in trials}, root)
    for c in cells:
        c.chain = ch
        c.config = _config_of(ch)
    hit = _pick(recomputed, row_dict, text_columns(frame))
    for c in cells:
        c.trials, c.recipe = trials, how
        if hit is None or c.column not in hit.index:
            c.note = (f"the recomputation has no row/column matching {c.row_key} / "
                      f"{c.column}")
            c.match = False
            continue
        c.recomputed = _clean(hit[c.column])
        c.match = same_number(c.value, c.recomputed)
    return cells


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
        lines += ["", f"trials and responses ({len(t.trials)}; "
                      f"trial_id status parsed gold request_key source):"]
        for r in t.trials[:max_trials]:
            lines.append(f"  {r['trial_id']} {r['status']} {r['parsed']!s:>10} "
                         f"gold={r['gold']} key={str(r['request_key'])[:16]} "
                         f"{r['response_source']}")
            raw = (r.get("raw_text") or "").replace("\n", " ")
            lines.append(f"      raw: {raw[:RAW_TEXT_CHARS]}")
        if len(t.trials) > max_trials:
            lines.append(f"  ... {len(t.trials) - max_trials} more (use --json for all)")
    return "\n".join(lines)


__all__ = ["CellError", "CellTrace", "chain", "format_text", "key_columns", "read_table",
           "row_key", "same_number", "select_row", "trace_cell", "trace_row", "value_columns"]
