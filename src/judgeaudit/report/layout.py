"""Paper-layout pivots of the long-format result tables, for the report.

Each table's TSV is long (one row per judge x task x condition x metric ...); the
papers print one row per judge with the conditions as columns. A `Pivot` says how:
which rows of the long table to keep (`where`), which key columns make the printed
rows (`rows`, the judge last) and which make the printed columns (`cols`, in the
paper's order). Every printed cell keeps the index of the long row it came from, so
the report links it to that row's trace.

Control judges (listener, label-reader, first-slot: behaviour known by construction)
are printed after the audited judges, under their own header row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgeaudit.judges.adapters import providers
from judgeaudit.vocab import study_a as vocab_a
from judgeaudit.vocab.study_b import CUES, PROBES, PROTOCOLS, STATES, TASKS

# config providers of the control judges, read off the adapter classes' `control` role
CONTROL_PROVIDERS = providers(control=True)
MAX_ROWS = 60  # no table printed in index.html has more rows than this
STATE_COLUMNS = ("state",)  # Study B (P, O, J) states: 3-character strings


@dataclass(frozen=True)
class Pivot:
    """How one long table is printed in the paper's layout."""

    rows: tuple[str, ...]
    cols: tuple[str, ...]
    where: Mapping[str, Any] = field(default_factory=dict)  # column -> value or tuple
    order: Mapping[str, Sequence[str]] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)  # column value -> header text
    title: str = ""
    clip_low: float | None = None  # print max(clip_low, x) (x in the TSV), marked
    est: str = "estimate"
    lo: str = "ci_low"
    hi: str = "ci_high"


_PAIR_TASKS = tuple(vocab_a.pair_task(c) for c in vocab_a.PAIR_CRITERIA)
# the papers' order of the values of common key columns (a pivot's own order wins),
# from the studies' vocabularies (the names their metrics write)
DEFAULT_ORDER: dict[str, tuple[str, ...]] = {
    "task": (*vocab_a.CLS_TASKS, *_PAIR_TASKS, *TASKS),
    "condition": (*vocab_a.BLUEPRINT_CONDITIONS, *vocab_a.PLACEMENTS,
                  vocab_a.MATCH_CONDITION),
    "format": vocab_a.PAIR_FORMATS, "protocol": PROTOCOLS, "cue": CUES,
    "state": STATES,
    "metric": ("accuracy", *vocab_a.FOLLOW_METRICS, *vocab_a.PAIR_METRICS,
               *vocab_a.CONFLICT_SHARES, *PROBES, "J"),
}
def from_registry(p: Any, title: str = "") -> Pivot:
    """A registry `Pivot` (judgeaudit.registry) as printed here; value `gap` reads its
    interval from gap_ci_low / gap_ci_high."""
    value = getattr(p, "value", "estimate") or "estimate"
    lo, hi = ("ci_low", "ci_high") if value == "estimate" else (f"{value}_ci_low",
                                                                f"{value}_ci_high")
    order = {p.columns[0]: tuple(p.column_order)} if p.column_order else {}
    return Pivot(rows=tuple(p.rows), cols=tuple(p.columns), where=dict(p.where),
                 order=order, labels=dict(getattr(p, "labels", {})),
                 title=title or getattr(p, "title", ""),
                 clip_low=getattr(p, "clip_low", None), est=value, lo=lo, hi=hi)


def pivots_of(stem: str) -> tuple[Pivot, ...]:
    """The registry's pivot of a table (the paper's layout), then its extra panels."""
    from judgeaudit import outputs

    out: list[Pivot] = []
    entry = outputs.TABLES.get(stem)
    if entry is not None and entry.pivot is not None:
        out.append(from_registry(entry.pivot, entry.estimand))
    if entry is not None:
        out += [from_registry(p) for p in entry.extra_pivots]
    return tuple(out)


def states_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """(P, O, J) states are 3-character strings (`011`, `000`): a TSV reader makes
    them integers (11, 0); put the leading zeros back."""
    out = frame
    for c in STATE_COLUMNS:
        if c in out.columns:
            vals = out[c]
            out = out.assign(**{c: [_state(v) for v in vals]})
    return out


def state_text(v: Any) -> str:
    """One (P, O, J) state as its 3-character code (11 -> "011"), "-" when missing."""
    s = _state(v)
    return "-" if s is None or (isinstance(s, float) and math.isnan(s)) else str(s)


def _state(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return v
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    s = str(v)
    return s.zfill(3) if s.isdigit() and len(s) <= 3 else s


def is_control(judge: str, panel: Mapping[str, Any]) -> bool:
    spec = panel.get(judge) or {}
    return str(spec.get("provider", "")) in CONTROL_PROVIDERS


@dataclass
class Cell:
    est: float
    lo: float
    hi: float
    row: int  # index in the long table
    one_sided: str = ""
    n: float = math.nan
    n_clusters: float = math.nan
    method: str = ""
    p: float = math.nan  # the row's test p-value (pvalue), where it has one
    p_holm: float = math.nan  # Holm-adjusted within its family (p_holm)
    reject: str = ""  # reject_holm as printed: "True" / "False" / "" (not tested)


@dataclass
class Printed:
    """A pivot filled from one long table."""

    pivot: Pivot
    header: list[tuple[str, ...]]  # one tuple of column-key values per printed column
    body: list[tuple[tuple[Any, ...], bool, list[Cell | None]]]  # (row key, control, cells)
    methods: list[str]
    rows_used: list[int]


def _match(frame: pd.DataFrame, where: Mapping[str, Any]) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for col, val in where.items():
        if col not in frame.columns:
            continue
        vals = val if isinstance(val, tuple | list) else (val,)
        mask &= frame[col].astype(str).isin([str(v) for v in vals])
    return mask


def _ordered(values: Sequence[Any], order: Sequence[str] | None) -> list[Any]:
    vals = list(dict.fromkeys(values))
    if not order:
        return sorted(vals, key=str)
    rank = {str(o): i for i, o in enumerate(order)}
    return sorted(vals, key=lambda v: (rank.get(str(v), len(rank)), str(v)))


def fill(pivot: Pivot, frame: pd.DataFrame, panel: Mapping[str, Any]) -> Printed | None:
    """The pivot's printed table from `frame` (the long TSV as read), or None when
    the frame lacks its columns or has no matching row."""
    need = {*pivot.rows, *pivot.cols, pivot.est}
    if not need <= set(frame.columns):
        return None
    frame = states_as_text(frame)
    sub = frame[_match(frame, pivot.where)]
    if sub.empty:
        return None
    col_keys: list[tuple[str, ...]] = [()]
    for c in pivot.cols:
        vals = _ordered(sub[c].astype(str).tolist(), pivot.order.get(c, DEFAULT_ORDER.get(c)))
        col_keys = [(*k, v) for k in col_keys for v in vals]
    present = {tuple(str(r[c]) for c in pivot.cols) for _, r in sub.iterrows()}
    col_keys = [k for k in col_keys if k in present]
    cells: dict[tuple, dict[tuple, Cell]] = {}
    methods: list[str] = []
    for i, r in sub.iterrows():
        rk = tuple(str(r[c]) for c in pivot.rows)
        ck = tuple(str(r[c]) for c in pivot.cols)
        if ck in cells.get(rk, {}):
            continue  # first row of a duplicate key wins (as pivot_table's "first")
        m = str(r.get("method", "") or "")
        if m and m != "nan" and m not in methods:
            methods.append(m)
        cells.setdefault(rk, {})[ck] = Cell(
            _f(r.get(pivot.est)), _f(r.get(pivot.lo)), _f(r.get(pivot.hi)), int(i),
            "" if _blank(r.get("one_sided")) else str(r.get("one_sided")),
            _f(r.get("n")), _f(r.get("n_clusters")), m, _f(r.get("pvalue")),
            _f(r.get("p_holm")), "" if _blank(r.get("reject_holm")) else str(r.get("reject_holm")))
    judge_pos = pivot.rows.index("judge") if "judge" in pivot.rows else None
    row_keys = list(cells)
    # order: the group keys (task, format) in their paper order, audited judges before
    # controls, judges by name
    ranks = []
    for pos, c in enumerate(pivot.rows):
        if pos == judge_pos:
            continue
        ranks.append((pos, {str(v): i for i, v in enumerate(_ordered(
            [k[pos] for k in row_keys], pivot.order.get(c, DEFAULT_ORDER.get(c))))}))

    def sort_key(k: tuple) -> tuple:
        group = tuple(rank[k[pos]] for pos, rank in ranks)
        if judge_pos is None:
            return (group, False, k)
        return (group, is_control(k[judge_pos], panel), k[judge_pos])

    body = []
    for rk in sorted(row_keys, key=sort_key):
        ctrl = judge_pos is not None and is_control(rk[judge_pos], panel)
        body.append((rk, ctrl, [cells[rk].get(ck) for ck in col_keys]))
    used = sorted(c.row for row in cells.values() for c in row.values())
    return Printed(pivot, col_keys, body, methods, used)


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v) in ("", "nan")


def _f(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def fmt(x: float, digits: int = 2) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{x:.{digits}f}"


def printed_pivots(stem: str, frame: pd.DataFrame, panel: Mapping[str, Any],
                   pivots: Mapping[str, Sequence[Pivot]] | None = None) -> list[Printed]:
    """The table's pivots (registry first) filled from its long frame."""
    out = []
    for p in (pivots[stem] if pivots is not None and stem in pivots else pivots_of(stem)):
        filled = fill(p, frame, panel)
        if filled is not None:
            out.append(filled)
    return out


Linker = Callable[[int, str], str]

__all__ = ["CONTROL_PROVIDERS", "DEFAULT_ORDER", "MAX_ROWS", "Cell", "Pivot", "Printed",
           "fill", "fmt", "from_registry", "is_control", "pivots_of",
           "printed_pivots", "state_text", "states_as_text"]
