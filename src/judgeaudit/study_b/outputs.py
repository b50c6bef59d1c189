"""Study B's outputs registry: every metric file, table and figure of Paper B's
audit, declared once (see `judgeaudit.registry` for the fields).

Paper B does not number its tables the way Paper A does; the run's tables are
labelled B.1-B.7, and `paper_table` names the paper's counterpart in words where
one exists (the end-to-end accuracy table; the state-distribution and heatmap
figures).
"""

from __future__ import annotations

from judgeaudit.registry import Figure, Metric, Pivot, Registry, Section, Table
from judgeaudit.study_b import chance, writers
from judgeaudit.study_b import metrics as SB
from judgeaudit.study_b import render as RB
from judgeaudit.study_b.recipes import FILES, RECIPES, metric_recipe
from judgeaudit.vocab import study_b as vocab_b

STUDY = "B"
ITEM = "the item (its two renderings and its two orders are one cluster)"
CELL = ("judge", "task", "protocol", "cue")
HOLM = SB.HOLM_KEY  # the gap tables' p_holm (holm_method column)
GATE = chance.GATE_KEY  # the Potemkin rows' chance gate (gate_method column)

SECTIONS = (
    Section(
        id="b_accuracy",
        heading="Study B: end-to-end accuracy",
        description=(
            "Pointwise (deployment) vs Pairwise (diagnostic) vs Text (no audio) by cue."
        ),
    ),
    Section(
        id="b_gap",
        heading="Study B: protocol gap, text gap and cue dependence",
        description=(
            "Pairwise - Pointwise, Pointwise - Text (what listening adds) and acc(cue) - "
            "acc(no cue), paired over items, Holm per judge."
        ),
    ),
    Section(
        id="b_states",
        heading="Study B: perception, oracle and judgment probes",
        description="(P, O, J) states per rendering and the conditional Potemkin rate.",
    ),
    Section(
        id="b_balance",
        heading="Study B: reply balance and writer swap",
        description=(
            "R0 and R1 differ in fitness only; a second writer's replies leave the "
            "judgments unchanged."
        ),
    ),
)

METRICS = (
    Metric(
        name="accuracy",
        study=STUDY,
        estimand=(
            "P(pred = the reply right for the rendering) among valid "
            "answers per judge x task x protocol x cue, and the P / O probe accuracies"
        ),
        function=SB.accuracy,
        method="wilson_cr2_bm",
        cell_keys=CELL,
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["accuracy"],
        rule="study_b_accuracy",
        extra_methods=("wilson",),
    ),
    Metric(
        name="protocol_gap",
        study=STUDY,
        estimand=(
            "mean over items of per-item accuracy Pairwise - Pointwise "
            "per judge x task x cue (items valid under both protocols)"
        ),
        function=SB.protocol_gap,
        method="paired_t_cr2_bm",
        cell_keys=("judge", "task", "cue"),
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["protocol_gap"],
        rule="study_b_protocol_gap",
        extra_methods=("cluster_bootstrap_bca", "sign_test_exact", HOLM),
    ),
    Metric(
        name="text_gap",
        study=STUDY,
        estimand=(
            "mean over items of per-item accuracy Pointwise - Text (J - T: "
            "the same request with and without its audio) per judge x task x cue (items "
            "valid under both)"
        ),
        function=SB.text_gap,
        method="paired_t_cr2_bm",
        cell_keys=("judge", "task", "cue"),
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["text_gap"],
        rule="study_b_text_gap",
        extra_methods=("cluster_bootstrap_bca", "sign_test_exact", HOLM),
    ),
    Metric(
        name="cue_dependence",
        study=STUDY,
        estimand=(
            "acc(contrasted cue) - acc(no cue) per judge x task x protocol, paired over"
            f" items (contrasted cues: {', '.join(vocab_b.CONTRASTED_CUES)}; no cue:"
            f" {vocab_b.NO_CUE})"
        ),
        function=SB.cue_dependence,
        method="paired_t_cr2_bm",
        cell_keys=CELL,
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["cue_dependence"],
        rule="study_b_cue_dependence",
        extra_methods=("cluster_bootstrap_bca", "sign_test_exact", HOLM),
    ),
    Metric(
        name="state_distribution",
        study=STUDY,
        estimand=(
            "share of renderings in each (P, O, J) state per "
            "judge x task (renderings with an invalid probe counted in n_invalid)"
        ),
        function=SB.state_distribution,
        method="wilson_cr2_bm",
        cell_keys=("judge", "task", "state"),
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["distribution"],
        rule="study_b_states",
        extra_methods=("wilson",),
    ),
    Metric(
        name="potemkin",
        study=STUDY,
        estimand=(
            "conditional Potemkin rate P(J=0 | P=1, O=1) (reported only past the chance"
            " gate), the P, O, staging, J and T bit rates, the staged Potemkin rate P(J=0 |"
            " P=1, staging=1) and P(T=1 | J=1) per judge x task"
        ),
        function=SB.potemkin,
        method="wilson_cr2_bm",
        cell_keys=("judge", "task", "metric"),
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["potemkin"],
        rule="study_b_states",
        extra_methods=(GATE, "wilson"),
    ),
    Metric(
        name="balance",
        study=STUDY,
        estimand=(
            "per task and quality metric (lexical counts, the LLM scorer's 1-5 ratings,"
            " DNSMOS): mean of R0 and R1, the gap R1 - R0 and the mean |R1 - R0| over items"
        ),
        function=SB.balance,
        method="paired_t_cr2_bm",
        cell_keys=("task", "metric"),
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["balance"],
        rule="study_b_balance",
        extra_methods=("t_cr2_bm", "cluster_bootstrap_bca"),
    ),
    Metric(
        name="writer_ablation",
        study=STUDY,
        estimand=(
            "native Pointwise accuracy (cue none) per judge x task "
            "with the run's writer's replies and with a second writer's, and their paired "
            "difference second - run writer over items"
        ),
        function=writers.writer_ablation,
        method="wilson_cr2_bm",
        cell_keys=("judge", "task", "row", "writer"),
        sampling_unit=ITEM,
        cluster_column="item_id",
        output=FILES["writer_ablation"],
        rule="study_b_writer_ablation",
        extra_methods=(
            "wilson",
            "paired_t_cr2_bm",
            "cluster_bootstrap_bca",
            "sign_test_exact",
        ),
    ),
)

TABLES = (
    Table(
        name="study_b_accuracy",
        study=STUDY,
        section="b_accuracy",
        label="Table B.1",
        caption=(
            "End-to-end accuracy per judge: Pointwise and Pairwise under each cue for every"
            " task, with the P and O probe accuracies in the long table."
        ),
        estimand="P(pred correct) per judge x task x protocol x cue",
        function=SB.accuracy,
        render=RB.accuracy_table,
        method="wilson_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"accuracy": FILES["accuracy"]},
        metrics=("accuracy",),
        figures=(),
        paper_table="end-to-end accuracy table",
        pivot=Pivot(
            rows=("judge",),
            columns=("task", "protocol", "cue"),
            where={"protocol": vocab_b.PROTOCOLS},
        ),
        extra_methods=("wilson",),
    ),
    Table(
        name="study_b_protocol_gap",
        study=STUDY,
        section="b_gap",
        label="Table B.2",
        caption=(
            "Protocol gap: per-item Pairwise - Pointwise accuracy averaged over items, per "
            "judge, task and cue, beside both protocols' accuracies, with the p-value "
            "Holm-adjusted over each judge's rows."
        ),
        estimand="Pairwise - Pointwise per judge x task x cue",
        function=SB.protocol_gap,
        render=RB.gap_table,
        method="paired_t_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"gap": FILES["protocol_gap"]},
        metrics=("protocol_gap",),
        figures=("study_b_heatmap",),
        pivot=Pivot(rows=("judge",), columns=("task", "cue")),
        extra_methods=("wilson_cr2_bm", "cluster_bootstrap_bca", "sign_test_exact", HOLM),
    ),
    Table(
        name="study_b_text_gap",
        study=STUDY,
        section="b_gap",
        label="Table B.6",
        caption=(
            "What listening adds: per-item Pointwise (with audio) - Text (the same request"
            " without its audio) accuracy averaged over items, J - T, per judge, task and"
            " cue, beside both accuracies, with the p-value Holm-adjusted over each judge's"
            " rows. A judge answering the text-only request the same way for both"
            " renderings of an item scores Text = 1/2 by construction."
        ),
        estimand="Pointwise - Text per judge x task x cue",
        function=SB.text_gap,
        render=RB.text_gap_table,
        method="paired_t_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"text_gap": FILES["text_gap"]},
        metrics=("text_gap",),
        figures=("study_b_text_gap",),
        pivot=Pivot(rows=("judge",), columns=("task", "cue")),
        extra_methods=("wilson_cr2_bm", "cluster_bootstrap_bca", "sign_test_exact", HOLM),
    ),
    Table(
        name="study_b_balance",
        study=STUDY,
        section="b_balance",
        label="Table B.5",
        caption=(
            "Reply balance: mean of each quality metric for R0 and R1 (lexical counts; the"
            " LLM scorer's helpfulness, relevance, specificity and naturalness ratings when"
            " a scorer is configured, flagged where the mean |gap| is above the paper's;"
            " DNSMOS of the replies spoken in voices drawn per item), the gap R1 - R0 and"
            " the mean |R1 - R0| over items, per task."
        ),
        estimand="R1 - R0 quality gap per task x metric",
        function=SB.balance,
        render=RB.balance_table,
        method="paired_t_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"balance": FILES["balance"]},
        metrics=("balance",),
        figures=(),
        pivot=Pivot(rows=("metric",), columns=("task",), value="gap"),
        extra_methods=("t_cr2_bm", "cluster_bootstrap_bca"),
        recomputed=False,
        why_not=(
            "computed from the reply-quality rows of the conditions stage "
            "(results/conditions/B/<task>/reply_quality.tsv), not from judge trials; "
            "traced to its rule chain and config"
        ),
    ),
    Table(
        name="study_b_writer_ablation",
        study=STUDY,
        section="b_balance",
        label="Table B.7",
        caption=(
            "Writer swap: native Pointwise accuracy (cue none) per judge and task with the "
            "replies of the run's writer and re-written by a second writer (same items, "
            "audio, reply order and question), and the paired difference second - run "
            "writer over items."
        ),
        estimand=(
            "Pointwise accuracy under each writer and their difference per judge x task"
        ),
        function=writers.writer_ablation,
        render=RB.writer_ablation_table,
        method="wilson_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"ablation": FILES["writer_ablation"]},
        metrics=("writer_ablation",),
        figures=(),
        pivot=Pivot(rows=("task", "judge"), columns=("row", "writer")),
        extra_methods=(
            "wilson",
            "paired_t_cr2_bm",
            "cluster_bootstrap_bca",
            "sign_test_exact",
        ),
        recomputed=False,
        why_not=(
            "the second writer's trials are built and judged inside the rule "
            "(study_b.writers.writer_ablation; the answers live in the "
            "judge cache, no trial or response files are written); traced to its rule "
            "chain and config"
        ),
        enabled_by="study_b.writer_ablation.enabled",
    ),
    Table(
        name="study_b_potemkin",
        study=STUDY,
        section="b_states",
        label="Table B.3",
        caption=(
            "Probes per rendering: P, O, staging, J and T (text-only) bit rates, the "
            "conditional Potemkin rate P(J=0 | P=1, O=1) (reported only when P is above "
            "chance and n(P=1, O=1) is large enough), the staged Potemkin rate "
            "P(J=0 | P=1, staging=1) and the J successes the transcript alone also gets "
            "P(T=1 | J=1), per judge and task."
        ),
        estimand="conditional Potemkin rate and probe rates per judge x task",
        function=SB.potemkin,
        render=RB.potemkin_table,
        method="wilson_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"potemkin": FILES["potemkin"]},
        metrics=("potemkin",),
        figures=("study_b_states", "study_b_probes"),
        pivot=Pivot(rows=("judge",), columns=("task", "metric")),
        extra_methods=(GATE, "wilson"),
    ),
    Table(
        name="study_b_state_distribution",
        study=STUDY,
        section="b_states",
        label="Table B.4",
        caption=(
            "(P, O, J) state distribution per judge and task beside the distribution"
            " expected from a judge answering every probe uniformly at random (P among the"
            " K classes per scored turn; O and J between R1 and R2)."
        ),
        estimand="share of renderings in each state per judge x task",
        function=SB.state_distribution,
        render=RB.states_table,
        method="wilson_cr2_bm",
        sampling_unit=ITEM,
        cluster_column="item_id",
        inputs={"distribution": FILES["distribution"], "chance": FILES["chance"]},
        metrics=("state_distribution",),
        figures=(),
        pivot=Pivot(
            rows=("task", "judge"),
            columns=("state",),
            column_order=vocab_b.STATES,
        ),
        extra_methods=("wilson",),
        codes={"state": vocab_b.state_code},
    ),
)

FIGURES = (
    Figure(
        name="study_b_states",
        caption=(
            "Share of renderings in each (P, O, J) state, stacked, one bar per judge and"
            " one for the uniform-chance judge, one panel per task."
        ),
        function=RB.states_figure,
        inputs={"distribution": FILES["distribution"], "chance": FILES["chance"]},
        method="",
        sampling_unit=ITEM,
        element="stacked bar (one judge x task)",
    ),
    Figure(
        name="study_b_heatmap",
        caption=(
            "Per judge (rows) and task: the conditional Potemkin rate, the protocol"
            " collapse (Pairwise - Pointwise, no cue) and the cue dependence (Pointwise,"
            " contrasted cue - no cue); point estimates, colour from -1 to 1."
        ),
        function=RB.heatmap_figure,
        inputs={
            "potemkin": FILES["potemkin"],
            "gap": FILES["protocol_gap"],
            "cue": FILES["cue_dependence"],
        },
        method="",
        sampling_unit=ITEM,
        element="cell",
    ),
    Figure(
        name="study_b_text_gap",
        caption=(
            "J - T (Pointwise - Text accuracy, paired over items) with its 95% interval per"
            " judge (rows), one panel per task, one marker per cue."
        ),
        function=RB.text_gap_figure,
        inputs={"text_gap": FILES["text_gap"]},
        method="paired_t_cr2_bm",
        sampling_unit=ITEM,
        element="marker",
    ),
    Figure(
        name="study_b_probes",
        caption=(
            "P, O, staging, J and T bit rates with their 95% intervals per judge, one panel"
            " per task: O (stated label, text) and staging (the judge's own P label, text)"
            " beside J (audio) show the text/audio modality gap."
        ),
        function=RB.probes_figure,
        inputs={"potemkin": FILES["potemkin"]},
        method="wilson_cr2_bm",
        sampling_unit=ITEM,
    ),
)


REGISTRY = Registry(
    study=STUDY,
    sections=SECTIONS,
    metrics=METRICS,
    tables=TABLES,
    figures=FIGURES,
    recipes=RECIPES,
)
TABLE_NAMES = REGISTRY.table_names
FIGURE_NAMES = REGISTRY.figure_names
PREFIX = "study_b_"


def short(name: str) -> str:
    """`accuracy` of `study_b_accuracy` (the rules' {table} / {figure} wildcard)."""
    return name.removeprefix(PREFIX)


def table_inputs() -> dict[str, dict[str, str]]:
    """{table wildcard: {role: metrics file}} of rule study_b_table."""
    return {short(t.name): dict(t.inputs) for t in TABLES}


def figure_inputs() -> dict[str, dict[str, str]]:
    """{figure wildcard: {role: metrics file}} of rule study_b_figure."""
    return {short(f.name): dict(f.inputs) for f in FIGURES}


def rule_outputs(rule: str) -> dict[str, str]:
    """{role: metrics file} a Study B metric rule writes (its outputs in
    rules/study_b.smk): its recipe's outputs; a rule without a recipe (the writer
    ablation) writes its metrics' files, named by metric."""
    recipe = next((r for r in RECIPES if r.rule == rule), None)
    files = (
        dict(recipe.outputs)
        if recipe
        else {m.name: m.output for m in METRICS if m.rule == rule}
    )
    if not files:
        raise KeyError(
            f"judgeaudit.study_b.outputs: no recipe or metric is written by rule {rule!r}"
        )
    return files


__all__ = [
    "FILES",
    "FIGURES",
    "FIGURE_NAMES",
    "METRICS",
    "RECIPES",
    "REGISTRY",
    "SECTIONS",
    "TABLES",
    "TABLE_NAMES",
    "figure_inputs",
    "metric_recipe",
    "rule_outputs",
    "short",
    "table_inputs",
]
