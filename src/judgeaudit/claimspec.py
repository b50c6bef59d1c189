"""The declarations of the report's claims (pure data, standard library only).

A claim names one row of one result table and what the report says about it; the
studies declare theirs (`judgeaudit.study_a.claims`, `judgeaudit.study_b.claims`) and
`judgeaudit.report.claims` evaluates them. Kept apart from `judgeaudit.registry` so a
change to the report's claims reruns the report only, not every metric job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

RANKS = ("", "min", "max", "absmax")  # "" = the selector must match exactly one row
AMONG = ("all", "audited", "control", "listener")


@dataclass(frozen=True)
class Claim:
    """One statement about one row of one table.

    id: "<finding>.<part>", e.g. "rq1.drop".
    table: the table stem it reads (results/tables/<table>.tsv).
    select: column -> value or tuple of allowed values; every row must match all.
    prefer: column -> values in order of preference; the first value the table has
      for that column is selected (the emotion task where the run has it, else the
      next named).
    among: the judges it ranges over: "all", "audited" (not a control of known
      behaviour), "control", "listener" (the audio-grounded control).
    bind: column -> id of an earlier claim whose chosen row gives that column's value.
    rank: "" (exactly one row may match), "min" / "max" / "absmax" of `by` (the row
      chosen when several match; ties go to the first row of the table).
    by: the column ranked.
    null: the value the chosen row's 95% interval is read against ("above" /
      "below" / "includes"); None = no verdict.
    says: what the claim asserts, in words (the report's claim list).
    """

    id: str
    table: str
    select: Mapping[str, Any] = field(default_factory=dict)
    prefer: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    among: str = "all"
    bind: Mapping[str, str] = field(default_factory=dict)
    rank: str = ""
    by: str = "estimate"
    null: float | None = None
    says: str = ""

    def __post_init__(self) -> None:
        if self.rank not in RANKS:
            raise ValueError(f"claim {self.id}: rank {self.rank!r} is not one of {RANKS}")
        if self.among not in AMONG:
            raise ValueError(f"claim {self.id}: among {self.among!r} is not one of {AMONG}")


@dataclass(frozen=True)
class Comparison:
    """Which of two claims' rows is larger with both 95% intervals: "a" when a's lower
    bound is above b's upper bound, "b" the other way round, else "overlap"."""

    id: str
    a: str
    b: str
    says: str = ""


@dataclass(frozen=True)
class Count:
    """How many of the rows a selector matches also match `of` ("k of m"): e.g. the
    planted rates inside their printed interval among those counted. A selector that
    matches no row is an error, never "0 of 0".

    of: column -> value(s) a counted row has.
    below: column -> bound: a counted row's value is below it (a missing value is not).
    straddles: a column whose value a counted row's 95% interval [ci_low, ci_high]
      holds strictly inside (the interval reaches past it on both sides).
    table "*": every table of the run that has the columns `select`, `of` and `below`
      name, one tally per table (tables where no row is counted are left out).
    """

    id: str
    table: str
    select: Mapping[str, Any] = field(default_factory=dict)
    of: Mapping[str, Any] = field(default_factory=dict)
    below: Mapping[str, float] = field(default_factory=dict)
    straddles: str = ""
    says: str = ""


@dataclass(frozen=True)
class Total:
    """The sum of `columns` over every row of every table of the run that has any of
    them (a count summed over table cells, so a response in two tables counts twice)."""

    id: str
    columns: tuple[str, ...]
    says: str = ""


__all__ = ["AMONG", "RANKS", "Claim", "Comparison", "Count", "Total"]
