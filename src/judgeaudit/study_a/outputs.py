"""Study A's outputs registry: every metric, table and figure of Paper A's audit,
declared once (see `judgeaudit.registry` for the fields).

Paper A numbers its tables II (feature blueprint), III (reference placement) and
IV (pairwise order and format); the cue-conflict table, the follow-rate table of
RQ1, the contrasts and the planted table have no counterpart in the paper and are
labelled A.S1-A.S4. (The pairwise table's file stem is still
`study_a_table5_pairwise`; its label is Table IV, as in the paper.)
"""

from __future__ import annotations

# the recipes' functions are named by dotted path (imported when called): declared
# here so a script using this registry depends on them (judgeaudit.codedeps)
__code_deps__ = ("judgeaudit.study_a.compute",)

from judgeaudit.registry import Figure, Metric, Pivot, Recipe, Registry, Section, Table
from judgeaudit.vocab import study_a as vocab_a

STUDY = "A"
METRICS_FILE = "results/metrics/A/metrics.tsv"
CONTRASTS_FILE = "results/metrics/A/contrasts.tsv"
PLANTED_FILE = "results/metrics/A/planted.tsv"
JUDGE_RULE = "study_a_metrics_judge"
SA = "judgeaudit.stats.study_a"
RA = "judgeaudit.render.study_a"
CLS_UNIT = ("the speaker (classification tasks: one speaker records many clips, each "
            "judged under several derangement seeds)")
PAIR_UNIT = ("the pair's sampling unit (source clip / reference speaker / pair; both "
             "orders of a pair are one cluster)")
CLS_CELL = ("judge", "task", "family", "condition", "seed", "metric")
PAIR_CELL = ("judge", "task", "family", "condition", "metric")
FOLLOW = ("rf", "rf_adj", "rf_norm")
CONFLICT_SHARES = ("follow_block", "follow_reference", "follow_gold", "follow_other")
PAIR_METRICS = ("lock", "g", "consistent_correct", "consistent_wrong", "locked_first",
                "locked_second")

SECTIONS = (
    Section("rq1", "Study A, RQ1: feature-blueprint judging",
            "Accuracy when the audio is replaced or accompanied by an acoustic description "
            "and a (true or wrong) specialist block."),
    Section("rq2", "Study A, RQ2: reference-conditioned judging",
            "Reference-follow rate by the placement of a wrong reference."),
    Section("conflict", "Study A, cue conflict",
            "A wrong block and a wrong reference naming two different labels."),
    Section("rq3", "Study A, RQ3: pairwise order and format",
            "Position lock and gold-aligned rate over both orders, concat vs native."),
    Section("contrasts", "Study A, paired contrasts",
            "Pre-specified paired differences with a cluster-robust (CR2) paired t test, "
            "Holm-corrected within family."),
)


def _m(name: str, estimand: str, function: str, unit: str = CLS_UNIT,
       cell: tuple[str, ...] = CLS_CELL, method: str = "wilson_cr2_bm",
       extra: tuple[str, ...] = ("cluster_bootstrap_bca", "wilson")) -> Metric:
    return Metric(name, STUDY, estimand, function, method, cell, unit, "cluster",
                  METRICS_FILE, JUDGE_RULE, extra)


METRICS = (
    _m("accuracy", "P(answer = gold) among valid answers, per judge x task x condition "
       "(seed-pooled and per seed)", f"{SA}.classification_metrics"),
    _m("rf", "follow rate RF = P(answer = the wrong label shown) on the wrong-label "
       "blueprint conditions and the reference placements (null 0)",
       f"{SA}.classification_metrics"),
    _m("rf_adj", "RF among trials whose wrong label differs from the judge's own "
       "audio-only answer for the clip (the label contradicts what it hears)",
       f"{SA}.classification_metrics"),
    _m("rf_norm", "chance-normalised RF~ = (RF - c)/(1 - c), c = 1/(K-1), unclipped",
       f"{SA}.rf_norm_row",
       extra=("chance_normalised", "cluster_bootstrap_bca", "wilson")),
    _m("follow_true_reference", "P(answer = the true reference label) under the `match` "
       "control", f"{SA}.classification_metrics"),
    *(_m(s, f"share of cue-conflict answers that {s.replace('follow_', 'follow the ')} "
         "(block label, reference label, gold, or none of them)",
         f"{SA}.classification_metrics") for s in CONFLICT_SHARES),
    _m("lock", "position lock: share of pairs (valid in both orders) where the same slot "
       "wins in both orders", f"{SA}.pairwise_metrics", PAIR_UNIT, PAIR_CELL),
    _m("g", "gold-aligned rate g: share of single judgments choosing the better clip",
       f"{SA}.pairwise_metrics", PAIR_UNIT, PAIR_CELL),
    *(_m(mode, f"share of pairs (valid in both orders) in mode {mode}",
         f"{SA}.pairwise_metrics", PAIR_UNIT, PAIR_CELL) for mode in PAIR_METRICS[2:]),
    Metric("contrast", STUDY, "pre-specified paired difference a - b of a 0/1 outcome over "
           "units valid under both conditions (stats.study_a.CONTRASTS)",
           f"{SA}.contrast_rows", "paired_t_cr2_bm",
           ("judge", "task", "family", "contrast"), "speaker / source clip / pair "
           "(cluster_unit column)", "cluster", CONTRASTS_FILE, JUDGE_RULE,
           ("holm", "sign_test_exact")),
    Metric("planted", STUDY, "planted propensity of a simulated judge beside its estimate "
           "(seed-pooled) and whether the printed CI covers it",
           f"{SA}.planted_table", "wilson_cr2_bm", ("judge", "knob", "task", "condition",
                                                   "metric"),
           "as the estimate's metric", "cluster", PLANTED_FILE, "study_a_metrics"),
)

_IN = {"metrics": METRICS_FILE}
_ROWS = ("task", "judge")

TABLES = (
    Table("study_a_table2_blueprint", STUDY, "rq1", "Table II",
          "Accuracy by feature-blueprint condition per judge and task (seed-pooled): audio "
          "only, skeleton, acoustic description, true block, and the four wrong-block "
          "conditions.",
          "P(answer = gold) per judge x task x blueprint condition",
          f"{SA}.classification_metrics", f"{RA}.table_blueprint", "wilson_cr2_bm",
          CLS_UNIT, "cluster", _IN, ("accuracy",), ("study_a_accuracy_by_blueprint",),
          paper_table="II",
          pivot=Pivot(_ROWS, ("condition",), where={"metric": ("accuracy",)},
                      column_order=vocab_a.BLUEPRINT_CONDITIONS),
          extra_methods=("cluster_bootstrap_bca", "wilson")),
    Table("study_a_follow_blueprint", STUDY, "rq1", "Table A.S1",
          "Follow rates on the wrong-label blueprint conditions: accuracy, RF, rf_adj and "
          "RF~ side by side (seed-pooled).",
          "RF, rf_adj and RF~ per judge x task x wrong-label condition",
          f"{SA}.classification_metrics", f"{RA}.table_follow_blueprint", "wilson_cr2_bm",
          CLS_UNIT, "cluster", _IN, ("accuracy", *FOLLOW), (),
          pivot=Pivot(_ROWS, ("condition",), where={"metric": ("rf",)},
                      column_order=vocab_a.WRONG_BLUEPRINT_CONDITIONS),
          extra_methods=("chance_normalised", "cluster_bootstrap_bca", "wilson")),
    Table("study_a_table3_reference", STUDY, "rq2", "Table III",
          "Reference-follow rate RF, rf_adj and chance-normalised RF~ by the placement of "
          "a wrong reference (system, rubric, before, after the audio); `match` is the "
          "true-reference control (accuracy only).",
          "RF~ per judge x task x placement", f"{SA}.classification_metrics",
          f"{RA}.table_reference", "wilson_cr2_bm", CLS_UNIT, "cluster", _IN,
          ("accuracy", *FOLLOW), ("study_a_follow_by_placement",), paper_table="III",
          pivot=Pivot(_ROWS, ("condition",), where={"metric": ("rf_norm",)},
                      column_order=vocab_a.PLACEMENTS),
          extra_methods=("chance_normalised", "cluster_bootstrap_bca", "wilson")),
    Table("study_a_table4_conflict", STUDY, "conflict", "Table A.S2",
          "Cue conflict: a wrong specialist block and a wrong reference naming two "
          "different labels; share of answers following the block, the reference, the "
          "gold label, or none of them.",
          "share of answers following each cue per judge x task",
          f"{SA}.classification_metrics", f"{RA}.table_conflict", "wilson_cr2_bm",
          CLS_UNIT, "cluster", _IN, CONFLICT_SHARES, (),
          pivot=Pivot(_ROWS, ("metric",), where={"metric": CONFLICT_SHARES},
                      column_order=CONFLICT_SHARES),
          extra_methods=("cluster_bootstrap_bca", "wilson")),
    Table("study_a_table5_pairwise", STUDY, "rq3", "Table IV",
          "Pairwise A/B judging in both orders: position lock and the four pair modes "
          "(over pairs judged validly in both orders) and the gold-aligned rate g (over "
          "single judgments), by format (concat vs native).",
          "lock and g per judge x pair task x format", f"{SA}.pairwise_metrics",
          f"{RA}.table_pairwise", "wilson_cr2_bm", PAIR_UNIT, "cluster", _IN,
          PAIR_METRICS, ("study_a_lock_vs_g",), paper_table="IV",
          pivot=Pivot(_ROWS, ("format", "metric"), where={"metric": ("lock", "g")},
                      column_order=vocab_a.PAIR_FORMATS),
          extra_methods=("cluster_bootstrap_bca", "wilson"), aliases={"format": "condition"}),
    Table("study_a_contrasts", STUDY, "contrasts", "Table A.S3",
          "Pre-specified paired contrasts (difference a - b over units valid under both "
          "conditions) per judge and task, Holm-adjusted within each family over the "
          "audited judges; control judges shown apart.",
          "paired differences of accuracy / lock between two conditions",
          f"{SA}.contrast_rows", f"{RA}.table_contrasts", "paired_t_cr2_bm",
          "speaker / source clip / pair (cluster_unit column)", "cluster",
          {"contrasts": CONTRASTS_FILE}, ("contrast",), (),
          pivot=Pivot(("family", "task", "contrast"), ("judge",)),
          extra_methods=("holm", "sign_test_exact")),
    Table("study_a_planted", STUDY, "validation", "Table A.S4",
          "Simulated judges: each planted propensity beside its estimate and whether the "
          "printed 95% CI covers it (planted-0 rows reported apart, not counted).",
          "planted rate vs its estimate per simulated judge x knob x task",
          f"{SA}.planted_table", f"{RA}.table_planted", "wilson_cr2_bm",
          "as the estimate's metric", "cluster", {"planted": PLANTED_FILE}, ("planted",),
          extra_methods=("chance_normalised", "wilson"), fixed={"seed": "all"}),
)

FIGURES = (
    Figure("study_a_follow_by_placement",
           "Reference-follow rate RF (seed-pooled) by the placement of a wrong reference, one "
           "bar per judge, one panel per task; error bars are the 95% CI.",
           f"{RA}.all_figures", _IN, "wilson_cr2_bm", CLS_UNIT),
    Figure("study_a_lock_vs_g",
           "Position-lock rate (x) against the gold-aligned rate g (y) per judge, pair task "
           "and format, with 95% CI bars on both axes; the line g = 0.5 is chance.",
           f"{RA}.all_figures", _IN, "wilson_cr2_bm", PAIR_UNIT),
    Figure("study_a_accuracy_by_blueprint",
           "Accuracy (seed-pooled) under each feature-blueprint condition, one bar per judge, "
           "one panel per task; error bars are the 95% CI.",
           f"{RA}.all_figures", _IN, "wilson_cr2_bm", CLS_UNIT),
)

RECIPES = (
    Recipe(JUDGE_RULE, "judgeaudit.study_a.compute:judge_metrics",
           "judgeaudit.study_a.compute:select_cell", "judgeaudit.study_a.compute:join_inputs",
           {"metrics": "results/metrics/A/judges/{judge}.tsv",
            "contrasts": "results/metrics/A/judges/{judge}.contrasts.tsv"},
           required=("judge", "task"),
           not_recomputed={
               "p_holm": "Holm's adjustment runs over every audited judge of the family "
                         "(rule study_a_metrics), not over one judge's trials",
               "reject_holm": "as p_holm",
               "planted": "the planted rate is the simulated judge's config, not an "
                          "estimate"}),
)

REGISTRY = Registry(STUDY, SECTIONS, METRICS, TABLES, FIGURES, RECIPES)
TABLE_NAMES = REGISTRY.table_names
FIGURE_NAMES = REGISTRY.figure_names


def table_inputs() -> dict[str, str]:
    """{role: metrics file} of rule study_a_tables (one rule renders every table)."""
    return {role: path for t in TABLES for role, path in sorted(t.inputs.items())}


def figure_inputs() -> dict[str, str]:
    """{role: metrics file} of rule study_a_figures."""
    return {role: path for f in FIGURES for role, path in sorted(f.inputs.items())}

__all__ = ["FIGURES", "FIGURE_NAMES", "METRICS", "RECIPES", "REGISTRY", "SECTIONS", "TABLES",
           "TABLE_NAMES", "figure_inputs", "table_inputs"]
