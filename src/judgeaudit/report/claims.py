"""Claims: every sentence of the report that states a number, a ranking or a comparison.

A claim is declared once (`judgeaudit.study_a.claims.CLAIMS`,
`judgeaudit.study_b.claims.CLAIMS`, beside each study's outputs registry): the table it reads, the row selector (every
column that distinguishes rows, condition and format included), the judges it ranges
over, how one row is chosen (exactly one row matches, or the row with the smallest /
largest value of a stated column), which columns it takes from another claim's row,
and the null value its interval is read against. `evaluate` is the one function that
turns a declaration into a result; the report's sentence templates only format
results. A claim whose selector matches no row, or more rows than it declares, raises
`ClaimError` when the report is built: it never becomes a sentence.

A claim whose table is not in the run (a config that runs one study) is skipped, and
so is every claim that takes a column from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgeaudit.claimspec import AMONG, RANKS, Claim, Comparison, Count, Total
from judgeaudit.report.layout import is_control, states_as_text


class ClaimError(ValueError):
    """A declared claim that does not hold as declared on this run's tables."""


@dataclass(frozen=True)
class Result:
    """A claim evaluated: the long-table row it chose and its values."""

    claim: Claim
    row: int
    values: Mapping[str, Any]
    verdict: str = ""  # "above" | "below" | "includes" | "" (no null / no interval)

    @property
    def table(self) -> str:
        return self.claim.table

    def __getitem__(self, col: str) -> Any:
        return self.values[col]

    def get(self, col: str, default: Any = None) -> Any:
        return self.values.get(col, default)


@dataclass(frozen=True)
class Outcome:
    comparison: Comparison
    winner: str  # "a" | "b" | "overlap"


def _float(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def null_verdict(lo: Any, hi: Any, null: float) -> str:
    """Where a 95% interval lies relative to the null value."""
    a, b = _float(lo), _float(hi)
    if math.isnan(a) or math.isnan(b):
        return ""
    if a > null:
        return "above"
    if b < null:
        return "below"
    return "includes"


def judge_role(judge: str, panel: Mapping[str, Any]) -> str:
    """"listener" (the audio-grounded control), "control" (another control of known
    behaviour) or "audited"."""
    if str((panel.get(judge) or {}).get("provider", "")) == "listener":
        return "listener"
    return "control" if is_control(judge, panel) else "audited"


def _in_scope(judges: pd.Series, among: str, panel: Mapping[str, Any]) -> pd.Series:
    if among == "all":
        return pd.Series(True, index=judges.index)
    roles = judges.astype(str).map(lambda j: judge_role(j, panel))
    if among == "control":
        return roles.isin(("control", "listener"))
    return roles == among


def _values(v: Any) -> list[str]:
    return [str(x) for x in (v if isinstance(v, tuple | list) else (v,))]


def evaluate(claim: Claim, frame: pd.DataFrame, panel: Mapping[str, Any],
             bound: Mapping[str, Result]) -> Result:
    """The row `claim` names in `frame` (the long table, states as text)."""
    where = dict(claim.select)
    for col, other in claim.bind.items():
        if other not in bound:
            raise ClaimError(f"claim {claim.id}: binds {col!r} to claim {other!r}, which "
                             "was not evaluated first")
        where[col] = bound[other][col]
    for col, order in claim.prefer.items():
        if col not in frame.columns:
            raise ClaimError(f"claim {claim.id}: table {claim.table} has no column {col!r}")
        have = set(frame[col].astype(str))
        pick = next((v for v in order if v in have), None)
        if pick is None:
            raise ClaimError(f"claim {claim.id}: table {claim.table} has none of "
                             f"{col} = {', '.join(order)}")
        where[col] = pick
    mask = _mask(frame, where, claim.id, claim.table)
    if "judge" in frame.columns:
        mask &= _in_scope(frame["judge"], claim.among, panel)
    if claim.by in frame.columns:
        mask &= pd.to_numeric(frame[claim.by], errors="coerce").notna()
    sub = frame[mask]
    shown = ", ".join(f"{k}={'|'.join(_values(v))}" for k, v in sorted(where.items()))
    if sub.empty:
        raise ClaimError(f"claim {claim.id}: no row of {claim.table} with {shown} "
                         f"(judges: {claim.among}) and a value in {claim.by!r}")
    if not claim.rank:
        if len(sub) > 1:
            raise ClaimError(f"claim {claim.id}: {len(sub)} rows of {claim.table} match "
                             f"{shown} (judges: {claim.among}); it declares exactly one")
        i = sub.index[0]
    else:
        x = pd.to_numeric(sub[claim.by], errors="coerce")
        i = {"min": x.idxmin, "max": x.idxmax, "absmax": x.abs().idxmax}[claim.rank]()
    values = frame.loc[i].to_dict()
    verdict = ("" if claim.null is None else
               null_verdict(values.get("ci_low"), values.get("ci_high"), claim.null))
    return Result(claim, int(i), values, verdict)


def compare(c: Comparison, results: Mapping[str, Result]) -> Outcome:
    a, b = results[c.a], results[c.b]
    if _float(a.get("ci_low")) > _float(b.get("ci_high")):
        return Outcome(c, "a")
    if _float(b.get("ci_low")) > _float(a.get("ci_high")):
        return Outcome(c, "b")
    return Outcome(c, "overlap")


@dataclass(frozen=True)
class Tally:
    """A `Count` evaluated: k of m rows (long-table indices of the m, and of the k)."""

    count: Count
    k: int
    m: int
    rows: tuple[int, ...]
    hits: tuple[int, ...] = ()
    table: str = ""


def _mask(frame: pd.DataFrame, where: Mapping[str, Any], cid: str, table: str) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for col, v in where.items():
        _need(frame, col, cid, table)
        mask &= frame[col].astype(str).isin(_values(v))
    return mask


def _need(frame: pd.DataFrame, col: str, cid: str, table: str) -> None:
    if col not in frame.columns:
        raise ClaimError(f"claim {cid}: table {table} has no column {col!r} "
                         f"(its columns: {', '.join(map(str, frame.columns))})")


def _counted(c: Count, sel: pd.DataFrame, table: str) -> pd.Series:
    mask = _mask(sel, c.of, c.id, table)
    for col, bound in c.below.items():
        _need(sel, col, c.id, table)
        mask &= pd.to_numeric(sel[col], errors="coerce") < float(bound)
    if c.straddles:
        for col in (c.straddles, "ci_low", "ci_high"):
            _need(sel, col, c.id, table)
        x, lo, hi = (pd.to_numeric(sel[col], errors="coerce")
                     for col in (c.straddles, "ci_low", "ci_high"))
        mask &= (lo < x) & (x < hi)
    return mask


def tally(c: Count, frame: pd.DataFrame, table: str | None = None) -> Tally:
    table = table or c.table
    sel = frame[_mask(frame, c.select, c.id, table)]
    if sel.empty:
        raise ClaimError(f"claim {c.id}: no row of {table} matches {dict(c.select)}")
    hit = _counted(c, sel, table)
    return Tally(c, int(hit.sum()), len(sel), tuple(int(i) for i in sel.index),
                 tuple(int(i) for i in sel.index[hit]), table)


def tally_every(c: Count, frames: Mapping[str, pd.DataFrame]) -> dict[str, Tally]:
    """A `Count` of table "*": one tally per table that has its columns and a counted
    row, in table-name order."""
    cols = {*c.select, *c.of, *c.below, *([c.straddles, "ci_low", "ci_high"]
                                          if c.straddles else [])}
    out = {}
    for stem in sorted(frames):
        frame = frames[stem]
        if frame.empty or not cols <= set(frame.columns):
            continue
        t = tally(c, frame, stem)
        if t.k:
            out[stem] = t
    return out


def total(c: Total, frames: Mapping[str, pd.DataFrame]) -> int:
    return int(sum(pd.to_numeric(f[col], errors="coerce").fillna(0).sum()
                   for f in frames.values() for col in c.columns if col in f.columns))


@dataclass
class Evaluated:
    """Every claim of a run: results by id, comparison outcomes by id, and the ids
    skipped because their table is not in the run."""

    results: dict[str, Result] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    tallies: dict[str, Tally] = field(default_factory=dict)
    per_table: dict[str, dict[str, Tally]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def __contains__(self, cid: str) -> bool:
        return (cid in self.results or cid in self.outcomes or cid in self.tallies
                or cid in self.per_table or cid in self.totals)

    def __getitem__(self, cid: str) -> Result:
        return self.results[cid]

    def get(self, cid: str) -> Result | None:
        return self.results.get(cid)


def evaluate_all(claims: Sequence[Claim | Comparison | Count | Total],
                 frames: Mapping[str, pd.DataFrame], panel: Mapping[str, Any]) -> Evaluated:
    """Every claim in declaration order (a claim binds only to earlier ones)."""
    out = Evaluated()
    texts: dict[str, pd.DataFrame] = {}
    for c in claims:
        if isinstance(c, Total):
            out.totals[c.id] = total(c, frames)
            continue
        if isinstance(c, Count) and c.table == "*":
            out.per_table[c.id] = tally_every(c, frames)
            continue
        if isinstance(c, Comparison):
            if c.a in out.results and c.b in out.results:
                out.outcomes[c.id] = compare(c, out.results)
            else:
                out.skipped.append(c.id)
            continue
        frame = frames.get(c.table)
        if isinstance(c, Count):
            if frame is None or frame.empty:
                out.skipped.append(c.id)
            else:
                out.tallies[c.id] = tally(c, frame)
            continue
        if frame is None or any(o in out.skipped for o in c.bind.values()):
            out.skipped.append(c.id)
            continue
        if c.table not in texts:
            texts[c.table] = states_as_text(frame)
        out.results[c.id] = evaluate(c, texts[c.table], panel, out.results)
    return out


def declared() -> tuple[Claim | Comparison | Count, ...]:
    """Every study's claims, Study A's first (the report's order)."""
    from judgeaudit.study_a.claims import CLAIMS as A
    from judgeaudit.study_b.claims import CLAIMS as B

    ids = [c.id for c in (*A, *B)]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ClaimError(f"claims declared twice: {', '.join(dup)}")
    return (*A, *B)


def describe(claims: Iterable[Claim | Comparison | Count]) -> list[dict[str, str]]:
    """One row per claim: id, the table it reads, what it asserts (the claim list)."""
    rows = []
    for c in claims:
        if isinstance(c, Comparison):
            rows.append({"claim": c.id, "table": f"(compares {c.a} with {c.b})",
                         "says": c.says})
        else:
            rows.append({"claim": c.id, "table": c.table, "says": c.says})
    return rows


__all__ = ["AMONG", "RANKS", "Claim", "ClaimError", "Comparison", "Evaluated", "Outcome",
           "Result", "Tally", "compare", "declared", "describe", "evaluate", "evaluate_all",
           "judge_role", "null_verdict", "tally"]
