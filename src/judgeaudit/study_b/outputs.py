"""Study B's outputs registry: every metric file, table and figure of Paper B's
audit, declared once (see `judgeaudit.registry` for the fields).

Paper B does not number its tables the way Paper A does; the run's tables are
labelled B.1-B.7, and `paper_table` names the paper's counterpart in words where
one exists (the end-to-end accuracy table; the state-distribution and heatmap
figures).
"""

from __future__ import annotations

# the recipes' functions are named by dotted path (imported when called): declared
# here so a script using this registry depends on them (judgeaudit.codedeps)
__code_deps__ = ("judgeaudit.study_b.compute",)

from judgeaudit.registry import Figure, Metric, Pivot, Recipe, Registry, Section, Table
from judgeaudit.vocab import study_b as vocab_b

STUDY = "B"
M = "results/metrics/B"
SB = "judgeaudit.study_b.metrics"
RB = "judgeaudit.study_b.render"
C = "judgeaudit.study_b.compute"
ITEM = "the item (its two renderings and its two orders are one cluster)"
CELL = ("judge", "task", "protocol", "cue")
FILES = {"accuracy": f"{M}/accuracy.tsv", "protocol_gap": f"{M}/protocol_gap.tsv",
         "cue_dependence": f"{M}/cue_dependence.tsv", "states": f"{M}/states.tsv",
         "distribution": f"{M}/state_distribution.tsv", "potemkin": f"{M}/potemkin.tsv",
         "chance": f"{M}/state_chance.tsv", "balance": f"{M}/balance.tsv",
         "text_gap": f"{M}/text_gap.tsv", "writer_ablation": f"{M}/writer_ablation.tsv"}
HOLM = "holm_per_judge"  # the gap tables' p_holm (holm_method column)
GATE = "binomial_gate_clustered"  # the Potemkin rows' chance gate (gate_method column)

SECTIONS = (
    Section("b_accuracy", "Study B: end-to-end accuracy",
            "Pointwise (deployment) vs Pairwise (diagnostic) vs Text (no audio) by cue."),
    Section("b_gap", "Study B: protocol gap, text gap and cue dependence",
            "Pairwise - Pointwise, Pointwise - Text (what listening adds) and acc(cue) - "
            "acc(no cue), paired over items, Holm per judge."),
    Section("b_states", "Study B: perception, oracle and judgment probes",
            "(P, O, J) states per rendering and the conditional Potemkin rate."),
    Section("b_balance", "Study B: reply balance and writer swap",
            "R0 and R1 differ in fitness only; a second writer's replies leave the "
            "judgments unchanged."),
)

METRICS = (
    Metric("accuracy", STUDY, "P(pred = the reply right for the rendering) among valid "
           "answers per judge x task x protocol x cue, and the P / O probe accuracies",
           f"{SB}.accuracy", "wilson_cr2_bm", CELL, ITEM, "item_id", FILES["accuracy"],
           "study_b_accuracy", ("wilson",)),
    Metric("protocol_gap", STUDY, "mean over items of per-item accuracy Pairwise - Pointwise "
           "per judge x task x cue (items valid under both protocols)",
           f"{SB}.protocol_gap", "paired_t_cr2_bm", ("judge", "task", "cue"), ITEM,
           "item_id", FILES["protocol_gap"], "study_b_protocol_gap",
           ("cluster_bootstrap_bca", "sign_test_exact", HOLM)),
    Metric("text_gap", STUDY, "mean over items of per-item accuracy Pointwise - Text (J - T: "
           "the same request with and without its audio) per judge x task x cue (items "
           "valid under both)", f"{SB}.text_gap", "paired_t_cr2_bm", ("judge", "task", "cue"),
           ITEM, "item_id", FILES["text_gap"], "study_b_text_gap",
           ("cluster_bootstrap_bca", "sign_test_exact", HOLM)),
    Metric("cue_dependence", STUDY, "acc(contrasted cue) - acc(no cue) per judge x task x "
           f"protocol, paired over items (contrasted cues: {', '.join(vocab_b.CONTRASTED_CUES)}"
           f"; no cue: {vocab_b.NO_CUE})",
           f"{SB}.cue_dependence", "paired_t_cr2_bm", CELL, ITEM, "item_id",
           FILES["cue_dependence"], "study_b_cue_dependence",
           ("cluster_bootstrap_bca", "sign_test_exact", HOLM)),
    Metric("state_distribution", STUDY, "share of renderings in each (P, O, J) state per "
           "judge x task (renderings with an invalid probe counted in n_invalid)",
           f"{SB}.state_distribution", "wilson_cr2_bm", ("judge", "task", "state"), ITEM,
           "item_id", FILES["distribution"], "study_b_states", ("wilson",)),
    Metric("potemkin", STUDY, "conditional Potemkin rate P(J=0 | P=1, O=1) (reported only "
           "past the chance gate), the P, O, staging, J and T bit rates, the staged Potemkin "
           "rate P(J=0 | P=1, staging=1) and P(T=1 | J=1) per judge x task",
           f"{SB}.potemkin", "wilson_cr2_bm", ("judge", "task", "metric"),
           ITEM, "item_id", FILES["potemkin"], "study_b_states", (GATE, "wilson")),
    Metric("balance", STUDY, "per task and quality metric (lexical counts, the LLM "
           "scorer's 1-5 ratings, DNSMOS): mean of R0 and R1, the gap R1 - R0 and the mean "
           "|R1 - R0| over items", f"{SB}.balance", "paired_t_cr2_bm",
           ("task", "metric"), ITEM, "item_id", FILES["balance"], "study_b_balance",
           ("t_cr2_bm", "cluster_bootstrap_bca")),
    Metric("writer_ablation", STUDY, "native Pointwise accuracy (cue none) per judge x task "
           "with the run's writer's replies and with a second writer's, and their paired "
           "difference second - run writer over items",
           "judgeaudit.study_b.writers.writer_ablation", "wilson_cr2_bm",
           ("judge", "task", "row", "writer"), ITEM, "item_id", FILES["writer_ablation"],
           "study_b_writer_ablation",
           ("wilson", "paired_t_cr2_bm", "cluster_bootstrap_bca", "sign_test_exact")),
)

TABLES = (
    Table("study_b_accuracy", STUDY, "b_accuracy", "Table B.1",
          "End-to-end accuracy per judge: Pointwise and Pairwise under each cue for every "
          "task, with the P and O probe accuracies in the long table.",
          "P(pred correct) per judge x task x protocol x cue", f"{SB}.accuracy",
          f"{RB}.accuracy_table", "wilson_cr2_bm", ITEM, "item_id",
          {"accuracy": FILES["accuracy"]}, ("accuracy",), (),
          paper_table="end-to-end accuracy table",
          pivot=Pivot(("judge",), ("task", "protocol", "cue"),
                      where={"protocol": vocab_b.PROTOCOLS}), extra_methods=("wilson",)),
    Table("study_b_protocol_gap", STUDY, "b_gap", "Table B.2",
          "Protocol gap: per-item Pairwise - Pointwise accuracy averaged over items, per "
          "judge, task and cue, beside both protocols' accuracies, with the p-value "
          "Holm-adjusted over each judge's rows.",
          "Pairwise - Pointwise per judge x task x cue", f"{SB}.protocol_gap",
          f"{RB}.gap_table", "paired_t_cr2_bm", ITEM, "item_id",
          {"gap": FILES["protocol_gap"]}, ("protocol_gap",), ("study_b_heatmap",),
          pivot=Pivot(("judge",), ("task", "cue")),
          extra_methods=("wilson_cr2_bm", "cluster_bootstrap_bca",
                         "sign_test_exact", HOLM)),
    Table("study_b_text_gap", STUDY, "b_gap", "Table B.6",
          "What listening adds: per-item Pointwise (with audio) - Text (the same request "
          "without its audio) accuracy averaged over items, J - T, per judge, task and cue, "
          "beside both accuracies, with the p-value Holm-adjusted over each judge's rows. "
          "A judge answering the text-only request the same way for both renderings of an "
          "item scores Text = 1/2 by construction.",
          "Pointwise - Text per judge x task x cue", f"{SB}.text_gap",
          f"{RB}.text_gap_table", "paired_t_cr2_bm", ITEM, "item_id",
          {"text_gap": FILES["text_gap"]}, ("text_gap",), ("study_b_text_gap",),
          pivot=Pivot(("judge",), ("task", "cue")),
          extra_methods=("wilson_cr2_bm", "cluster_bootstrap_bca",
                         "sign_test_exact", HOLM)),
    Table("study_b_balance", STUDY, "b_balance", "Table B.5",
          "Reply balance: mean of each quality metric for R0 and R1 (lexical counts; the "
          "LLM scorer's helpfulness, relevance, specificity and naturalness ratings when "
          "a scorer is configured, flagged where the mean |gap| is above the paper's; "
          "DNSMOS of the replies spoken in voices drawn per item), the gap R1 - R0 and the "
          "mean |R1 - R0| over items, per task.",
          "R1 - R0 quality gap per task x metric", f"{SB}.balance", f"{RB}.balance_table",
          "paired_t_cr2_bm", ITEM, "item_id", {"balance": FILES["balance"]}, ("balance",),
          (), pivot=Pivot(("metric",), ("task",), value="gap"),
          extra_methods=("t_cr2_bm", "cluster_bootstrap_bca"), recomputed=False,
          why_not="computed from the reply-quality rows of the conditions stage "
                  "(results/conditions/B/<task>/reply_quality.tsv), not from judge trials; "
                  "traced to its rule chain and config"),
    Table("study_b_writer_ablation", STUDY, "b_balance", "Table B.7",
          "Writer swap: native Pointwise accuracy (cue none) per judge and task with the "
          "replies of the run's writer and re-written by a second writer (same items, "
          "audio, reply order and question), and the paired difference second - run "
          "writer over items.",
          "Pointwise accuracy under each writer and their difference per judge x task",
          "judgeaudit.study_b.writers.writer_ablation",
          f"{RB}.writer_ablation_table", "wilson_cr2_bm", ITEM, "item_id",
          {"ablation": FILES["writer_ablation"]}, ("writer_ablation",), (),
          pivot=Pivot(("task", "judge"), ("row", "writer")),
          extra_methods=("wilson", "paired_t_cr2_bm", "cluster_bootstrap_bca",
                         "sign_test_exact"), recomputed=False,
          why_not="the second writer's trials are built and judged inside the rule "
                  "(study_b.writers.writer_ablation; the answers live in the "
                  "judge cache, no trial or response files are written); traced to its rule "
                  "chain and config",
          enabled_by="study_b.writer_ablation.enabled"),
    Table("study_b_potemkin", STUDY, "b_states", "Table B.3",
          "Probes per rendering: P, O, staging, J and T (text-only) bit rates, the "
          "conditional Potemkin rate P(J=0 | P=1, O=1) (reported only when P is above "
          "chance and n(P=1, O=1) is large enough), the staged Potemkin rate "
          "P(J=0 | P=1, staging=1) and the J successes the transcript alone also gets "
          "P(T=1 | J=1), per judge and task.",
          "conditional Potemkin rate and probe rates per judge x task", f"{SB}.potemkin",
          f"{RB}.potemkin_table", "wilson_cr2_bm", ITEM, "item_id",
          {"potemkin": FILES["potemkin"]}, ("potemkin",), ("study_b_states", "study_b_probes"),
          pivot=Pivot(("judge",), ("task", "metric")),
          extra_methods=(GATE, "wilson")),
    Table("study_b_state_distribution", STUDY, "b_states", "Table B.4",
          "(P, O, J) state distribution per judge and task beside the distribution expected "
          "from a judge answering every probe uniformly at random (P among the K classes per "
          "scored turn; O and J between R1 and R2).",
          "share of renderings in each state per judge x task",
          f"{SB}.state_distribution", f"{RB}.states_table", "wilson_cr2_bm", ITEM,
          "item_id", {"distribution": FILES["distribution"], "chance": FILES["chance"]},
          ("state_distribution",), (),
          pivot=Pivot(("task", "judge"), ("state",), column_order=(
              "111", "110", "101", "100", "011", "010", "001", "000")),
          extra_methods=("wilson",), recomputed=False,
          why_not="the table interleaves each judge's states with chance-baseline rows "
                  "(study_b.chance.chance_distribution); the judge rows are "
                  "results/metrics/B/state_distribution.tsv, traceable and recomputed there"),
)

FIGURES = (
    Figure("study_b_states",
           "Share of renderings in each (P, O, J) state, stacked, one bar per judge and one "
           "for the uniform-chance judge, one panel per task.",
           f"{RB}.states_figure", {"distribution": FILES["distribution"],
                                   "chance": FILES["chance"]}, "", ITEM),
    Figure("study_b_heatmap",
           "Per judge (rows) and task: the conditional Potemkin rate, the protocol collapse "
           "(Pairwise - Pointwise, no cue) and the cue dependence (Pointwise, contrasted cue "
           "- no cue); point estimates, colour from -1 to 1.",
           f"{RB}.heatmap_figure", {"potemkin": FILES["potemkin"],
                                    "gap": FILES["protocol_gap"],
                                    "cue": FILES["cue_dependence"]}, "", ITEM),
    Figure("study_b_text_gap",
           "J - T (Pointwise - Text accuracy, paired over items) with its 95% interval per "
           "judge (rows), one panel per task, one marker per cue.",
           f"{RB}.text_gap_figure", {"text_gap": FILES["text_gap"]}, "paired_t_cr2_bm",
           ITEM),
    Figure("study_b_probes",
           "P, O, staging, J and T bit rates with their 95% intervals per judge, one panel "
           "per task: O (stated label, text) and staging (the judge's own P label, text) "
           "beside J (audio) show the text/audio modality gap.",
           f"{RB}.probes_figure", {"potemkin": FILES["potemkin"]}, "wilson_cr2_bm", ITEM),
)


def _recipe(metric: str, outputs: tuple[str, ...], select: str = "",
            family: tuple[str, ...] = ()) -> Recipe:
    return Recipe(f"study_b_{metric}", f"{C}:{metric}", select and f"{C}:{select}",
                  f"{C}:load", {o: FILES[o] for o in outputs}, source="scored_shards",
                  rescore=f"{C}:rescore", family=family)


RECIPES = (
    _recipe("accuracy", ("accuracy",), "select_accuracy"),
    # Holm per judge: the trace recomputes over every task of the row's judge
    _recipe("protocol_gap", ("protocol_gap",), "select_protocol_gap", ("judge",)),
    _recipe("text_gap", ("text_gap",), "select_text_gap", ("judge",)),
    _recipe("cue_dependence", ("cue_dependence",), "select_cue_dependence", ("judge",)),
    _recipe("states", ("states", "distribution", "potemkin", "chance"), "select_states"),
    _recipe("balance", ("balance",)),
)

REGISTRY = Registry(STUDY, SECTIONS, METRICS, TABLES, FIGURES, RECIPES)
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


def metric_recipe(metric: str) -> Recipe:
    """The recipe of a metric rule's `metric` param (scripts/study_b_metrics.py)."""
    return REGISTRY.recipe(f"study_b_{metric}")


__all__ = ["FIGURES", "FIGURE_NAMES", "METRICS", "RECIPES", "REGISTRY", "SECTIONS", "TABLES",
           "TABLE_NAMES", "figure_inputs", "metric_recipe", "short", "table_inputs"]
