"""The dataclasses of an outputs registry (one registry per study:
`judgeaudit.study_a.outputs`, `judgeaudit.study_b.outputs`; both joined, with the
tables of no study, in `judgeaudit.outputs`).

A registry declares every metric, table and figure once: what it estimates, the
function that computes it, its interval method (a key of
`judgeaudit.stats.methods`), its cell keys and sampling unit, its section, caption,
figures and the pivot the paper prints it in. Workflow targets, the rules' input
lists, the metric scripts, the report's sections and captions and the cell-trace
recomputation are derived from it.

Every entry is built by keyword only (`kw_only` dataclasses): a field is named where
it is given, so no one counts commas to tell a caption from an estimand.

Functions are the real callables, imported by the registry module that declares
them, so every edge from an entry to its code is an import (seen by
`judgeaudit.codedeps`, which reruns a rule whose registry's functions changed, and by
any reader of the imports); `dotted(fn)` names one in text (`module:qualname`).

Imports only the standard library and the method registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from judgeaudit.stats.methods import describe

Fn = Callable[..., Any]  # a registry function: imported, never named by a string


def dotted(fn: Callable[..., Any] | None) -> str:
    """The `module:qualname` of a registry function, as traces and logs print it
    ("" for none)."""
    return f"{fn.__module__}:{fn.__qualname__}" if fn is not None else ""


@dataclass(frozen=True, kw_only=True)
class Section:
    """A report section: id, heading, one-line description (what it shows)."""

    id: str
    heading: str
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class Pivot:
    """How the paper prints a table: one row per `rows` key combination, one column
    per `columns` key combination (in `column_order` when given), each cell the
    `value` column (`est [lo, hi]` of estimate / ci_low / ci_high when value is
    "estimate") of the long TSV rows that pass `where` (column -> allowed values).
    `control_column` marks the rows to set apart (e.g. `role` == control, or the
    judge's provider being a control). `labels`: column value -> the header printed
    for it; `title`: the panel's heading (a table's `extra_pivots`; its main pivot is
    headed by its estimand)."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    value: str = "estimate"
    where: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    column_order: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    title: str = ""
    clip_low: float | None = None  # printed as max(clip_low, x), marked (Paper A's RF~)


@dataclass(frozen=True, kw_only=True)
class Figure:
    """A figure (stem under figures/, PNG + PDF): caption says what is plotted."""

    name: str
    caption: str
    function: Fn | None = None  # the function drawing it (None: its rule's script's own)
    inputs: Mapping[str, str] = field(default_factory=dict)  # role -> metrics file
    method: str = ""  # interval method of its error bars (a method key), "" if none
    sampling_unit: str = ""
    # no one method, but the error bars are the intervals of its table's rows (the
    # report names the methods those rows print); False with no method: no interval
    intervals_from_table: bool = False
    # what one plotted element is (the report gives the n behind each)
    element: str = "plotted estimate"


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One estimand: the rows of a metrics file that estimate it.

    name: the metric's name (Study A: the `metric` column value; Study B: the
      metric rule's `metric` param, one output file).
    estimand: what it estimates, in words.
    function: the function computing it (from trials/scored rows).
    method: its interval method key (stats.methods); extra_methods: cross-checks or
      tests printed beside it (e.g. the BCa bootstrap in boot_low/boot_high).
    cell_keys: the columns that identify one cell (one estimate).
    sampling_unit: what the interval clusters on; cluster_column: the column holding it.
    output: the metrics file holding its rows; rule: the rule writing it.
    reads_beyond_cell: the trials its estimate reads beyond its own cell's, in words
      ("" = none); the cell trace recomputes such a metric's rows apart from the
      other metrics of the cell (e.g. rf_adj reads the judge's audio-only answers).
    """

    name: str
    study: str
    estimand: str
    function: Fn
    method: str
    cell_keys: tuple[str, ...]
    sampling_unit: str
    cluster_column: str
    output: str
    rule: str
    extra_methods: tuple[str, ...] = ()
    reads_beyond_cell: str = ""

    def __post_init__(self) -> None:
        for key in (self.method, *self.extra_methods):
            describe(key)  # an unknown method key is an error at import time


@dataclass(frozen=True, kw_only=True)
class Table:
    """One table (stem under results/tables/, TSV + MD + TeX).

    label: what the report calls it ("Table II" where the paper numbers it so);
    paper_table: the paper's own name for it as the report prints it ("Table II", "end-to-end
      accuracy table"; None: no counterpart in the paper).
    caption: what is in it (the method sentence is added from the method registry).
    figures: figure stems shown under it. pivot: the paper layout (None: the long
    table is the layout). estimand: what its numbers estimate. function: the
    function computing its numbers; render: the function writing the table files
    (both None for a table of no study: its rule's script calls its own).
    method: interval method key; sampling_unit / cluster_column as for Metric.
    inputs: role -> metrics file the render rule reads; metrics: the Metric names
    its rows come from. recomputed: False (with `why_not`) when the cell trace
    cannot recompute its rows from trials and responses. aliases: table column ->
    the metrics column it renames (Table IV's `format` is the metrics' `condition`).
    fixed: metrics column -> the value every row of the table has though the table
    has no such column (the planted table is seed-pooled: seed = "all").
    enabled_by: dotted config path of a boolean that must be true for the table to be
    a target of `rule all` ("" = always; the rule builds it on demand either way),
    e.g. "study_b.writer_ablation.enabled".
    extra_pivots: further panels the report prints under the paper layout.
    codes: key column -> the function giving a value's code as the metrics write it
      (a TSV reader turns the (P, O, J) state "011" into 11; the trace matches rows on
      the code).
    file_caption: the caption the table's own files (MD, TeX) are written with, a
      `str.format` template whose fields the render function fills from the data (e.g.
      {method}: the method sentence of the rows' interval methods; "" = none);
      file_notes: name -> further sentence templates the render function adds when
      the data call for them (e.g. the planted table's "twins"). The render
      function holds no caption wording; `caption` is what the report prints.
    columns: metric -> the header of its column in the table's own files, in column
      order (Study A's follow-rate tables: one column per metric; a metric added here,
      and to `metrics`, gets its column).
    protocol: the audit protocol (judgeaudit.audit.battery PROTOCOLS) whose question
      the table answers ("" = none); code that speaks of a protocol's table (the
      papers' published numbers, the claims, the judge card) finds it by this (e.g.
      `judgeaudit.study_a.outputs.PROTOCOL_TABLES`), never by its name.
    """

    name: str
    study: str
    section: str
    label: str
    caption: str
    estimand: str
    function: Fn | None = None
    render: Fn | None = None
    method: str
    sampling_unit: str
    cluster_column: str
    inputs: Mapping[str, str]
    metrics: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    paper_table: str | None = None
    pivot: Pivot | None = None
    extra_methods: tuple[str, ...] = ()
    recomputed: bool = True
    why_not: str = ""
    aliases: Mapping[str, str] = field(default_factory=dict)
    fixed: Mapping[str, str] = field(default_factory=dict)
    enabled_by: str = ""
    extra_pivots: tuple[Pivot, ...] = ()
    codes: Mapping[str, Fn] = field(default_factory=dict)
    file_caption: str = ""
    file_notes: Mapping[str, str] = field(default_factory=dict)
    columns: Mapping[str, str] = field(default_factory=dict)
    protocol: str = ""

    def __post_init__(self) -> None:
        for key in (self.method, *self.extra_methods):
            if key:  # "" = a table of no estimates
                describe(key)

    def enabled(self, config: Mapping[str, Any]) -> bool:
        """Whether the config makes this table a default target (`enabled_by`)."""
        value: Any = config
        for part in self.enabled_by.split(".") if self.enabled_by else ():
            value = value[part]
        return bool(value)

    def method_text(self) -> str:
        """The method registry's description of this table's interval method ("" for a
        table of no estimates)."""
        return describe(self.method).description if self.method else ""


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """How the cell trace recomputes the rows a metrics rule wrote, with the rule's
    own functions (provenance only finds the files; it never computes).

    rule: the metrics rule (found in a table's provenance chain).
    compute: f(inputs, params) -> {output name: DataFrame}, the very function the
      rule's script calls.
    select: f(inputs, row) -> (inputs restricted to the trials behind `row`, the trial
      ids of the cell, a note), the cell selection (None = the rows are not
      recomputed from trials by the trace).
    load: the function turning the raw records into compute's inputs;
      source says which raw records the trace hands it:
        "trials_responses": load(trials, responses, params) with the trial and
          response rows of the rule's inputs (Study A: `join_inputs`);
        "scored_shards": the study_b_score shards of the row's judge and task are
          re-scored (`rescore(trials, responses, judge, shard)`) and load(scored,
          item_files) builds the inputs (Study B).
    outputs: output name -> metrics file (to pick the frame a table's row came from);
      a `{judge}` in a path stands for the judge.
    required: row columns a table must have for its rows to be recomputed.
    not_recomputed: column -> why the recipe does not recompute it (e.g. Holm's
      p_holm needs the whole family of judges).
    family: row columns naming a multiplicity family the compute must see whole
      (Study B's gap tables adjust p per judge over every task: ("judge",)); the trace
      then loads the records of every task of the row's family, not only the row's
      task, and `select` hands compute the family while naming the row's trials.
    rows_not_recomputed: column -> {value: why} for whole rows it does not recompute.
    compute_output: f(inputs, params, name) -> {name: DataFrame}, compute's output
      `name` alone, the same frame compute gives (a trace recomputes only the output its
      table's rows come from); None: the trace runs compute whole.
    """

    rule: str
    compute: Fn
    select: Fn | None
    load: Fn
    outputs: Mapping[str, str]
    source: str = "trials_responses"
    required: tuple[str, ...] = ("judge", "task")
    not_recomputed: Mapping[str, str] = field(default_factory=dict)
    rescore: Fn | None = None  # "scored_shards": the re-scoring function
    family: tuple[str, ...] = ()
    # column -> {value: why}: rows with that value are not recomputed from one judge's
    # trials (e.g. a panel-level test written beside the per-judge contrasts)
    rows_not_recomputed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # the rule's inputs beyond its code: role -> which files under that role (a name
    # the workflow's planner resolves, e.g. Study B's "scored": "protocol" = the scored
    # shards of the audio and text protocols); params: the config-derived params the
    # rule passes beyond its metric, seed and bootstrap size. Study B's metric rules
    # are emitted from these (rules/study_b.smk, one loop over the recipes).
    rule_inputs: Mapping[str, str] = field(default_factory=dict)
    rule_params: tuple[str, ...] = ()
    # "trials_responses" only: the function reading the corpus manifests among the
    # rule's inputs (data/<corpus>/manifest.tsv paths -> {corpus: frame}, Study A:
    # `stats.corpus.read_manifests`, each clip's sentence), which load then also takes
    # as `manifests` (None: load takes trials, responses and params only)
    manifests: Fn | None = None
    compute_output: Fn | None = None

    def row_not_recomputed(self, row: Mapping[str, Any]) -> str:
        """Why this row is not recomputed ("" when it is)."""
        for col, whys in self.rows_not_recomputed.items():
            why = whys.get(str(row.get(col)))
            if why:
                return why
        return ""

    def output_for(self, path: str) -> str | None:
        """The output name of a metrics file this rule wrote (None: not one of them)."""
        for name, pattern in self.outputs.items():
            pre, _, post = pattern.partition("{judge}")
            if path == pattern or ("{judge}" in pattern and path.startswith(pre)
                                   and path.endswith(post)):
                return name
        return None


@dataclass(frozen=True, kw_only=True)
class Registry:
    """One study's outputs: sections, metrics, tables, figures, recipes."""

    study: str
    sections: tuple[Section, ...]
    metrics: tuple[Metric, ...]
    tables: tuple[Table, ...]
    figures: tuple[Figure, ...]
    recipes: tuple[Recipe, ...] = ()

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"{self.study}: no table {name!r} in the registry; tables are "
                       f"{[t.name for t in self.tables]}")

    def figure(self, name: str) -> Figure:
        for f in self.figures:
            if f.name == name:
                return f
        raise KeyError(f"{self.study}: no figure {name!r} in the registry; figures are "
                       f"{[f.name for f in self.figures]}")

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"{self.study}: no metric {name!r} in the registry; metrics are "
                       f"{[m.name for m in self.metrics]}")

    def recipe(self, rule: str) -> Recipe:
        for r in self.recipes:
            if r.rule == rule:
                return r
        raise KeyError(f"{self.study}: no recipe for rule {rule!r}")

    @property
    def table_names(self) -> list[str]:
        return [t.name for t in self.tables]

    @property
    def figure_names(self) -> list[str]:
        return [f.name for f in self.figures]


__all__ = ["Figure", "Metric", "Pivot", "Recipe", "Registry", "Section", "Table", "dotted"]
