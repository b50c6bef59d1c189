"""Every output of the project in one place, for its consumers (the report, the cell
trace, the tests): the two studies' registries (`judgeaudit.study_a.outputs`,
`judgeaudit.study_b.outputs`) joined with the tables that belong to no study
(corpora, specialists, estimator validation, power).

`SECTIONS` (report order), `TABLES` / `FIGURES` (name -> entry), `table(name)`,
`figure(name)`, `section_of(name)`, `caption_of(name)`, `recipe_for_rule(rule)`,
`method_text(key)`.
"""

from __future__ import annotations

from dataclasses import replace

from judgeaudit.registry import Figure, Recipe, Section, Table
from judgeaudit.stats.methods import describe
from judgeaudit.study_a.outputs import REGISTRY as STUDY_A
from judgeaudit.study_b.outputs import REGISTRY as STUDY_B

REGISTRIES = (STUDY_A, STUDY_B)
OTHER_SECTION = "other"

_OTHER_SECTIONS = (
    Section(
        id="specialists",
        heading="Specialists",
        description="Offline specialists on held-out speakers.",
    ),
    Section(
        id="validation",
        heading="Estimator validation and power",
        description=(
            "Do the estimators recover known (planted) behaviour, and can the design "
            "detect it?"
        ),
    ),
    Section(id=OTHER_SECTION, heading="Other tables", description=""),
)
SECTIONS: tuple[Section, ...] = (
    _OTHER_SECTIONS[0],
    *STUDY_A.sections,
    *STUDY_B.sections,
    *_OTHER_SECTIONS[1:],
)

_NONE = "none (each row a summary, not an estimate over units)"
# the estimator validation's table (validation.n_seeds replicates, in `rule all`); the
# full run (validation.full_n_seeds, target validation_full) is the same entry renamed
_VALIDATION = Table(
    name="estimator_validation",
    study="",
    section="validation",
    label="Estimator validation",
    caption=(
        "Simulated truth vs estimates: coverage and bias of every printed interval over"
        " seeded replicates of planted scenarios."
    ),
    estimand="coverage of the 95% intervals and bias of each estimator",
    method="wilson_cr2_bm",
    sampling_unit="the simulated scenario's clusters",
    cluster_column="",
    inputs={},
    figures=("estimator_validation",),
    extra_methods=(
        "paired_t_cr2_bm",
        "cluster_bootstrap_bca",
        "chance_normalised",
        "wilson",
    ),
    recomputed=False,
    why_not="computed from simulated replicates, not from judge trials",
)
# The tables and figures of no study name no function: their rules' scripts call their
# own (scripts/corpus_sources.py, specialists_accuracy.py, validation_table.py,
# power_table.py), and the report and every trace job import this module, which would
# otherwise import (and, for judgeaudit.codedeps, depend on) the specialists', the
# validation's and the power code.
OTHER_TABLES = (
    Table(
        name="corpus_sources",
        study="",
        section=OTHER_SECTION,
        label="Corpus sources",
        caption=(
            "Which corpus each study attribute uses (real or synthetic) and where it comes "
            "from."
        ),
        estimand="",
        method="",
        sampling_unit=_NONE,
        cluster_column="",
        inputs={},
        recomputed=False,
        why_not="a listing of the configured corpora, no estimate",
    ),
    Table(
        name="specialist_accuracy",
        study="",
        section="specialists",
        label="Specialist accuracy",
        caption=(
            "Each offline specialist on the test split of the corpus it was fitted on: "
            "accuracy, EER or Spearman rho with its target."
        ),
        estimand="accuracy / EER / Spearman rho of each specialist on held-out speakers",
        method="wilson_deff",
        sampling_unit="the test speaker (source clip for naturalness)",
        cluster_column="speaker",
        inputs={},
        figures=("specialist_confusion",),
        extra_methods=("wilson", "cluster_bootstrap_stat", "fisher_z"),
        recomputed=False,
        why_not="computed from the specialists' predictions, not from judge trials",
    ),
    _VALIDATION,
    replace(
        _VALIDATION,
        name="estimator_validation_full",
        label="Estimator validation (full)",
        caption="The estimator validation with validation.full_n_seeds replicates.",
        figures=("estimator_validation_full",),
    ),
    Table(
        name="power",
        study="",
        section="validation",
        label="Power",
        caption=(
            "Power (after Holm over each test's family) and minimum detectable effect of"
            " every pre-specified headline test, simulated at the cell's own clusters and"
            " run through the estimator the tables print."
        ),
        estimand="power and MDE per tested cell",
        method="power_sim_proportion",
        sampling_unit="the cell's printed cluster unit (speaker, source, item)",
        cluster_column="",
        inputs={},
        extra_methods=("power_sim_difference", "holm"),
        recomputed=False,
        why_not="a design calculation from trial counts, not an estimate from responses",
    ),
)
_VALIDATION_FIGURE = Figure(
    name="estimator_validation",
    caption=(
        "Coverage of each interval method per scenario and "
        "estimand over the replicates, with the nominal 95% and its Monte Carlo band."
    ),
    intervals_from_table=True,
)
OTHER_FIGURES = (
    Figure(
        name="specialist_confusion",
        caption=(
            "Confusion matrices of the classification specialists "
            "on their test splits (rows gold, columns predicted)."
        ),
        element="matrix (one specialist's test split)",
    ),
    _VALIDATION_FIGURE,
    replace(
        _VALIDATION_FIGURE,
        name="estimator_validation_full",
        caption=(
            "As the estimator validation figure, with validation.full_n_seeds replicates."
        ),
    ),
)

TABLES: dict[str, Table] = {t.name: t for r in REGISTRIES for t in r.tables}
TABLES.update({t.name: t for t in OTHER_TABLES})
FIGURES: dict[str, Figure] = {f.name: f for r in REGISTRIES for f in r.figures}
FIGURES.update({f.name: f for f in OTHER_FIGURES})
RECIPES: dict[str, Recipe] = {r.rule: r for reg in REGISTRIES for r in reg.recipes}
# the row columns a recipe's cell selection reads: the cell keys of every recomputed
# metric but `metric` (rows agreeing on them share one recomputation, e.g. the six pair
# metrics of one judge x task x format)
CELL_FIELDS: tuple[str, ...] = tuple(dict.fromkeys(
    k for reg in REGISTRIES for m in reg.metrics if m.rule in RECIPES
    for k in m.cell_keys if k != "metric"))
_BEYOND_CELL = {(m.rule, m.name): m.reads_beyond_cell for reg in REGISTRIES
                for m in reg.metrics if m.reads_beyond_cell}


def table(name: str) -> Table:
    try:
        return TABLES[name]
    except KeyError:
        raise KeyError(
            f"no table {name!r} in the outputs registry (judgeaudit.outputs); "
            f"tables are {sorted(TABLES)}"
        ) from None


def figure(name: str) -> Figure:
    try:
        return FIGURES[name]
    except KeyError:
        raise KeyError(
            f"no figure {name!r} in the outputs registry (judgeaudit.outputs); "
            f"figures are {sorted(FIGURES)}"
        ) from None


def section_of(name: str) -> str:
    """The section id of a table stem (`other` for a table the registry does not know)."""
    return TABLES[name].section if name in TABLES else OTHER_SECTION


def caption_of(name: str) -> str:
    """The registry caption of a table stem (its name in words when unknown)."""
    return TABLES[name].caption if name in TABLES else name.replace("_", " ")


def recipe_for_rule(rule: str) -> Recipe | None:
    return RECIPES.get(rule)


def reads_beyond_cell(rule: str, metric: object) -> str:
    """What the rows of `metric` (written by `rule`) read beyond their cell's trials, in
    words ("" for none: the registry's `Metric.reads_beyond_cell`)."""
    return _BEYOND_CELL.get((rule, str(metric)), "")


def method_text(key: str) -> str:
    """The method registry's description of a method key (raises on an unknown key)."""
    return describe(key).description


__all__ = [
    "CELL_FIELDS",
    "FIGURES",
    "OTHER_FIGURES",
    "OTHER_SECTION",
    "OTHER_TABLES",
    "RECIPES",
    "REGISTRIES",
    "SECTIONS",
    "STUDY_A",
    "STUDY_B",
    "TABLES",
    "caption_of",
    "figure",
    "method_text",
    "reads_beyond_cell",
    "recipe_for_rule",
    "section_of",
    "table",
]
