"""The outputs registries (judgeaudit.study_a.outputs, judgeaudit.study_b.outputs,
joined in judgeaudit.outputs) and the method registry (judgeaudit.stats.methods):
every workflow target is declared, every declared function exists, every method a
table can print is described, and the derived lists are the registry's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from judgeaudit import outputs as O
from judgeaudit.config import validate_config
from judgeaudit.registry import dotted
from judgeaudit.stats import methods as M
from judgeaudit.study_a import compute as compute_a
from judgeaudit.study_a import outputs as A
from judgeaudit.study_b import outputs as B
from judgeaudit.workflow import (
    STUDY_A_FIGURES,
    STUDY_A_TABLES,
    STUDY_B_FIGURES,
    STUDY_B_TABLES,
    Plan,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return Plan(validate_config({}), REPO)


def _stems(paths, prefix):
    return {Path(p).name.split(".")[0] for p in paths if p.startswith(prefix)}


def test_every_workflow_table_and_figure_is_in_the_registry(plan):
    targets = (plan.study_a_targets() + plan.study_b_targets() + plan.specialists_targets()
               + plan.power_targets() + plan.validation_outputs("default")
               + plan.validation_outputs("full"))
    smk = (REPO / "rules" / "common.smk").read_text()
    # tables rule bodies write (corpus_sources), not those the report reads when a CLI
    # command wrote them (REPORT_OPTIONAL_INPUTS: human_validation from import-human)
    optional = smk[smk.index("REPORT_OPTIONAL_INPUTS = {"):]
    optional = optional[:optional.index("}")]
    targets += [t for t in re.findall(r'"(results/tables/[a-z_]+\.tsv)"', smk)
                if t not in optional]
    tables, figures = _stems(targets, "results/tables/"), _stems(targets, "figures/")
    assert {"study_a_table2_blueprint", "study_b_accuracy", "corpus_sources",
            "specialist_accuracy", "power", "estimator_validation"} <= tables
    assert tables - set(O.TABLES) == set()
    assert figures - set(O.FIGURES) == set()
    # and every figure a table shows is a declared figure
    assert {f for t in O.TABLES.values() for f in t.figures} <= set(O.FIGURES)


def test_workflow_lists_are_the_registries():
    assert STUDY_A_TABLES == [t.name for t in A.TABLES]
    assert STUDY_A_FIGURES == [f.name for f in A.FIGURES]
    assert STUDY_B_TABLES == [t.name for t in B.TABLES]
    assert STUDY_B_FIGURES == [f.name for f in B.FIGURES]
    # the rules' input lists: rules/common.smk takes them from the registries
    smk = (REPO / "rules" / "common.smk").read_text()
    assert "STUDY_B_TABLE_INPUTS = study_b_outputs.table_inputs()" in smk
    assert "STUDY_A_TABLE_INPUTS = study_a_outputs.table_inputs()" in smk
    assert B.table_inputs()["state_distribution"] == {
        "distribution": "results/metrics/B/state_distribution.tsv",
        "chance": "results/metrics/B/state_chance.tsv"}
    assert set(A.table_inputs()) == {"metrics", "contrasts", "planted", "twoway"}


def test_captions_labels_and_sections():
    section_ids = [s.id for s in O.SECTIONS]
    assert len(section_ids) == len(set(section_ids))
    for t in O.TABLES.values():
        assert t.caption.strip() and t.label.strip(), t.name
        assert t.section in section_ids, t.name
        if t.recomputed:
            assert t.estimand.strip() and t.method, t.name
        else:
            assert t.why_not.strip(), t.name
    for f in O.FIGURES.values():
        assert f.caption.strip() and "plot" not in f.caption.lower()[:4], f.name
    # Paper A's numbering: Table IV is the pairwise table, never the cue conflict
    assert A.REGISTRY.table("study_a_table5_pairwise").label == "Table IV"
    assert A.REGISTRY.table("study_a_table5_pairwise").paper_table == "Table IV"
    conflict = A.REGISTRY.table("study_a_table4_conflict")
    assert conflict.paper_table is None and "IV" not in conflict.label
    labels = [t.label for t in O.TABLES.values()]
    assert len(labels) == len(set(labels))


def test_every_declared_function_is_imported():
    """The study registries hold the functions themselves (imported, so every edge is
    an import), never a dotted path; a table of no study names none (its rule's script
    calls its own)."""
    fns = [t.function for r in O.REGISTRIES for t in r.tables]
    fns += [t.render for r in O.REGISTRIES for t in r.tables]
    fns += [m.function for r in O.REGISTRIES for m in r.metrics]
    fns += [f.function for r in O.REGISTRIES for f in r.figures]
    for rec in O.RECIPES.values():
        fns += [rec.compute, rec.load] + [p for p in (rec.select, rec.rescore) if p]
    for fn in fns:
        assert callable(fn) and fn.__module__.startswith("judgeaudit."), fn
    assert A.REGISTRY.recipe("study_a_metrics_judge").compute is compute_a.judge_metrics
    assert dotted(compute_a.judge_metrics) == "judgeaudit.study_a.compute:judge_metrics"
    for t in O.OTHER_TABLES:
        assert t.function is None and t.render is None, t.name


def _study_rules(study: str, stage: str) -> str:
    """One stage's block of a study's rule file (rules/<study>.smk)."""
    smk = (REPO / "rules" / f"{study}.smk").read_text()
    return smk[smk.index(f"# >>> {study} {stage}\n"):smk.index(f"# <<< {study} {stage}\n")]


def test_one_rule_file_per_study(tmp_path):
    """One study is one package plus one rule file: every rule of a study (loaded from
    the real workflow; each runs a script) comes from rules/<study>.smk and every rule there is the study's;
    rule files hold rules only and call the input functions of rules/common.smk, never
    the Plan (`W.`) directly (one input-function layer)."""
    import json
    import os
    import subprocess
    import sys

    from tests.test_codedeps import WORKFLOW_RULES  # every rule that runs a script

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run([sys.executable, "-c", WORKFLOW_RULES, str(REPO)], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("RULES="))
    files = {name: r["snakefile"] for name, r in json.loads(line.removeprefix("RULES=")).items()}
    for study in ("study_a", "study_b"):
        own = {r for r, f in files.items() if f == f"{study}.smk"}
        assert own == {r for r in files if r.startswith(study + "_")}, study
        assert f"{study}_metrics" in own or f"{study}_accuracy" in own, own
    for smk in sorted((REPO / "rules").glob("*.smk")):
        if smk.name != "common.smk":
            text = smk.read_text()
            assert not re.search(r"^def ", text, re.M), smk
            assert not re.search(r"\bW\.", text), smk


def test_study_b_metric_rules_are_emitted_from_the_recipes(plan):
    """rules/study_b.smk emits one Study B metrics rule per recipe (one loop), so rule
    names, `metric` params and the registry cannot disagree: no rule is written out by
    hand but the writer ablation (no recipe), and every recipe's rule inputs and params
    resolve to the files and config values the hand-written rules named."""
    from judgeaudit import workflow

    study_b = _study_rules("study_b", "metrics")
    assert "for _recipe in study_b_outputs.RECIPES:" in study_b
    assert 'metric="' not in study_b
    assert re.findall(r"^rule (\w+):", study_b, re.M) == ["study_b_writer_ablation"]
    for recipe in B.RECIPES:
        metric = B.short(recipe.rule)
        assert B.metric_recipe(metric) is recipe and recipe.compute.__name__ == metric
        inputs = plan.study_b_metric_inputs(recipe.rule_inputs)
        assert set(inputs) == set(recipe.rule_inputs) and all(inputs.values()), metric
        assert set(plan.study_b_metric_params(recipe.rule_params)) == set(recipe.rule_params)
    assert "study_a_metrics_judge" in O.RECIPES
    states = plan.study_b_metric_inputs(B.metric_recipe("states").rule_inputs)
    assert states["scored"] == plan.study_b_scored(workflow.study_b_is_state_input)
    assert states["item_files"] == [f"results/conditions/B/{t}/items.jsonl"
                                    for t in plan.study_b_tasks()]
    assert plan.study_b_metric_inputs({"scored": "protocol"}) == {
        "scored": plan.study_b_scored(workflow.study_b_is_protocol)}
    assert plan.study_b_metric_params(("p_scope",)) == {
        "p_scope": plan.config["study_b"]["tasks"]["positional"]["p_bit"]}
    with pytest.raises(workflow.PlanError, match="nope"):
        plan.study_b_metric_inputs({"scored": "nope"})
    with pytest.raises(workflow.PlanError, match="nope"):
        plan.study_b_metric_params(("nope",))
    with pytest.raises(KeyError, match="no_such"):
        B.metric_recipe("no_such")
    # the metrics script dispatches through the registry, not an if/elif chain
    script = (REPO / "scripts" / "study_b_metrics.py").read_text()
    assert "metric_recipe(metric)" in script and "elif metric" not in script


def test_study_b_metric_rules_write_the_registry_files():
    """rules/study_b.smk takes every Study B metric rule's outputs from the registry
    (rules/common.smk study_b_metric_outputs), none hand-written."""
    study_b = _study_rules("study_b", "metrics")
    assert '"results/metrics/B/' not in study_b.replace("results/metrics/B/scored", "")
    assert "**study_b_metric_outputs(_recipe.rule)" in study_b
    rules = re.findall(r'\*\*study_b_metric_outputs\("(\w+)"\)', study_b)
    assert sorted([*rules, *(r.rule for r in B.RECIPES)]) == sorted(
        {m.rule for m in B.METRICS}), rules
    for m in B.METRICS:
        assert m.output in B.rule_outputs(m.rule).values(), m.name
    assert B.rule_outputs("study_b_states") == {
        "states": B.FILES["states"], "distribution": B.FILES["distribution"],
        "potemkin": B.FILES["potemkin"], "chance": B.FILES["chance"]}
    with pytest.raises(KeyError, match="no_such_rule"):
        B.rule_outputs("no_such_rule")


def test_study_outputs_dispatch_through_the_registry():
    """scripts/study_b_outputs.py and study_a.outputs.render_tables / render_figures
    call the render function each table / figure entry names, with the entry's input
    roles as keyword arguments: every entry's function takes exactly them (and `base`);
    the scripts hold no per-output branch or list."""
    import inspect

    entries = [*((t, t.render) for r in O.REGISTRIES for t in r.tables),
               *((f, f.function) for r in O.REGISTRIES for f in r.figures)]
    assert len({fn for _, fn in entries}) == len(entries)  # one function per output
    for entry, fn in entries:
        # Study A's tables also take their entry (its file caption, notes and columns)
        extra = ({"entry": entry} if getattr(entry, "study", "") == "A"
                 and fn is getattr(entry, "render", None) else {})
        sig = inspect.signature(fn)
        sig.bind(**{role: None for role in entry.inputs}, base="x", **extra)  # raises if not
        required = {n for n, p in sig.parameters.items() if p.default is p.empty}
        assert required <= {*entry.inputs, "base", *extra}, (entry.name, required)
    script = (REPO / "scripts" / "study_b_outputs.py").read_text()
    assert "elif" not in script and "wc.get(\"table\") ==" not in script
    assert "B.REGISTRY.table(" in script and "B.REGISTRY.figure(" in script
    for name in ("study_a_tables.py", "study_a_figures.py"):
        script = (REPO / "scripts" / name).read_text()
        assert "A.render_tables(" in script or "A.render_figures(" in script, name
        assert "study_a_" not in script.split('"""', 2)[-1], name  # no output named


def test_method_registry_describes_every_method_the_code_writes():
    from judgeaudit.stats import clustered, power
    from judgeaudit.study_b import chance

    written = [clustered.METHOD_PROPORTION, clustered.METHOD_MEAN,
               clustered.METHOD_DIFFERENCE, clustered.METHOD_BCA,
               clustered.METHOD_UNCLUSTERED, clustered.METHOD_CLUSTER_PERCENTILE,
               f"{clustered.METHOD_PROPORTION}+chance_normalised", chance.GATE_METHOD,
               *power.METHOD.values(),
               # the specialist and validation tables' sentences
               "speaker-clustered wilson on n_eff = n / DEFF (DEFF 1.31, ANOVA ICC 0.04 "
               "over 12 clusters)",
               "test (FAR+FRR)/2 at the train-split EER threshold; speaker-clustered "
               "cluster_bootstrap_BCa (scipy.stats.bootstrap, 8 clusters, 2000 resamples)",
               "spearman; source_clip-clustered cluster_bootstrap_percentile (BCa undefined) "
               "(scipy.stats.bootstrap, 9 clusters, 2000 resamples)",
               "spearman+fisher_z", "cluster_bootstrap_bca(speaker)",
               "wilson_cr2_bm (+wilson in 21 reps)"]
    for value in written:
        keys = M.method_keys(value)
        assert keys and all(k in M.METHODS for k in keys), value
    assert M.method_keys("wilson_cr2_bm+chance_normalised") == ("wilson_cr2_bm",
                                                                "chance_normalised")
    # the free-text Wilson-at-DEFF sentence is not also read as plain Wilson
    assert M.method_keys("wilson on n_eff = n / DEFF (DEFF 1.0)") == ("wilson_deff",)


def test_method_descriptions_are_true_of_the_code():
    # the names the descriptions give are the calls the code makes
    src = (REPO / "src/judgeaudit/stats/clustered.py").read_text()
    assert "bootstrap(" in src and 'method="BCa"' in src
    assert "BCa" in M.describe("cluster_bootstrap_bca").description
    assert "percentile" not in M.describe("cluster_bootstrap_bca").description
    assert "Bell-McCaffrey" in M.describe("wilson_cr2_bm").description
    assert "t test" in M.describe("paired_t_cr2_bm").description
    assert "McNemar" not in " ".join(m.description for m in M.METHODS.values())
    assert "multipletests(method='holm')" in M.describe("holm").library
    for m in M.METHODS.values():
        assert m.description and m.label and m.function and m.library, m.key
        assert m.kind in ("interval", "test", "correction", "transform", "power"), m.key


def test_describe_rejects_unknown_keys():
    with pytest.raises(M.UnknownMethod, match=r"unknown method key 'mcnemar'.*wilson_cr2_bm"):
        M.describe("mcnemar")
    with pytest.raises(M.UnknownMethod, match="names no key"):
        M.method_keys("percentile bootstrap of something")
    assert M.method_keys("", strict=True) == ()
    for t in O.TABLES.values():
        for key in (t.method, *t.extra_methods):
            if key:
                assert M.describe(key).key == key


def test_provenance_has_no_second_implementation():
    """provenance/cells.py computes nothing itself: no statistics import, no call of a
    study's stats function; the recomputation is the registry's recipe."""
    src = (REPO / "src/judgeaudit/provenance/cells.py").read_text()
    tree = ast.parse(src)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    study_code = ("judgeaudit.stats", "judgeaudit.conditions", "judgeaudit.study_a",
                  "judgeaudit.study_b")
    assert not [m for m in imported if m and ((m.startswith(study_code)
                                               and not m.endswith(".outputs"))
                                              or ".compute" in m)], imported
    for name in ("score_trials", "cue_dependence", "protocol_gap", "gate_potemkin",
                 "add_outcome_counts", "sa.metrics", "SB."):
        assert name not in src, name


def test_cue_contrast_shards_follow_the_vocabulary(monkeypatch):
    from judgeaudit import workflow
    from judgeaudit.vocab import study_b as vocab_b

    assert workflow.study_b_is_cue_contrast("pointwise-hard")
    assert workflow.study_b_is_cue_contrast("pairwise-none")
    assert not workflow.study_b_is_cue_contrast("pointwise-soft")
    assert not workflow.study_b_is_cue_contrast("probe-P")
    monkeypatch.setattr(vocab_b, "CONTRASTED_CUES", (*vocab_b.CONTRASTED_CUES, "soft"))
    assert workflow.study_b_is_cue_contrast("pointwise-soft")


def test_study_b_paper_outputs_are_declared_with_their_methods():
    """The text baseline's J - T table and figure, the probes figure and the writer
    ablation are registry entries; the gap tables' Holm and the Potemkin gate are
    described by the method registry as the code writes them."""
    from judgeaudit.study_b import chance
    from judgeaudit.study_b import metrics as SB

    assert M.method_keys(SB.HOLM_METHOD) == ("holm_per_judge",)
    assert M.method_keys(chance.GATE_METHOD) == ("binomial_gate_clustered",)
    assert "effective sample size" in M.describe("binomial_gate_clustered").description
    for name in ("study_b_protocol_gap", "study_b_text_gap"):
        assert "holm_per_judge" in B.REGISTRY.table(name).extra_methods, name
    assert "binomial_gate_clustered" in B.REGISTRY.table("study_b_potemkin").extra_methods
    assert B.REGISTRY.table("study_b_text_gap").figures == ("study_b_text_gap",)
    assert "study_b_probes" in B.REGISTRY.table("study_b_potemkin").figures
    assert B.table_inputs()["text_gap"] == {"text_gap": "results/metrics/B/text_gap.tsv"}
    assert B.table_inputs()["writer_ablation"] == {
        "ablation": "results/metrics/B/writer_ablation.tsv"}
    assert B.figure_inputs()["probes"] == {"potemkin": "results/metrics/B/potemkin.tsv"}
    # the Holm tables' trace recomputes over the judge's whole family
    for metric in ("protocol_gap", "text_gap", "cue_dependence"):
        assert B.metric_recipe(metric).family == ("judge",), metric
    assert B.metric_recipe("accuracy").family == ()


def test_writer_ablation_is_a_target_only_when_enabled():
    off = Plan(validate_config({}), REPO).study_b_targets()
    on = Plan(validate_config({"study_b": {"writer_ablation": {"enabled": True}}}),
              REPO).study_b_targets()
    table = "results/tables/study_b_writer_ablation.tsv"
    assert table not in off and table in on
    assert set(on) - set(off) == {f"results/tables/study_b_writer_ablation.{e}"
                                  for e in ("tsv", "md", "tex")}
    assert "results/tables/study_b_text_gap.tsv" in off
    assert {"figures/study_b_text_gap.png", "figures/study_b_probes.png"} <= set(off)


def test_study_a_test_methods_are_the_registry_entries():
    """The across-placement Wald test and the capability Kendall test: one entry each,
    the texts the stats module prints are the registry's, and the thresholds the
    descriptions name are the code's."""
    from judgeaudit.stats import wald as W
    from judgeaudit.study_a import metrics as sa

    key = sa.METHOD_PLACEMENT_WALD
    assert key == W.METHOD_CR2_WCR == "ols_within_cr2_wcr"
    wald, tau = M.describe(key), M.describe("kendall_tau_exact_less")
    assert sa.PLACEMENT_WALD_TEXT == wald.description
    assert sa.CAPABILITY_TEST_TEXT == tau.description
    assert f"fewer than {sa.PLACEMENT_MIN_CLUSTERS} clusters" in wald.description
    assert f"{W.N_BOOT:,} seeded draws" in wald.description
    r = W.RADEMACHER_MIN_CLUSTERS
    assert f"weights below {r} clusters" in wald.description
    assert f"Rademacher weights from {r} on" in wald.description
    # "enumerated when there are fewer (at 5 clusters; 12-14 clusters)": the code's cuts
    enum = [g for g in range(sa.PLACEMENT_MIN_CLUSTERS, 40)
            if W.boot_weights(g).size ** g // 2 <= W.N_BOOT]
    assert enum == [5, 12, 13, 14] and enum[0] == sa.PLACEMENT_MIN_CLUSTERS == 5
    assert "(at 5 clusters; 12-14 clusters)" in wald.description
    assert "ols_within_cr2_hotelling_f" not in M.METHODS
    assert f"fewer than {sa.CAPABILITY_MIN_CELLS} cells" in tau.description
    # the method registry (stats.methods) names its functions by dotted path
    assert f"{sa.__name__}.placement_wald" == wald.function
    assert f"{sa.__name__}.capability_test" == tau.function
    for value in (key, f"{key}:too_few_clusters", f"{key}:rank_deficient"):
        assert M.method_keys(value) == (key,)
    for value in ("kendall_tau_exact_less", "kendall_tau_exact_less:too_few_cells",
                  "kendall_tau_b_asymptotic_less"):
        assert M.method_keys(value) == ("kendall_tau_exact_less",)
    contrasts = A.REGISTRY.table("study_a_contrasts")
    assert {key, "kendall_tau_exact_less"} <= set(contrasts.extra_methods)
    for fam in ("fallible_vs_plain_block", "placement_rf_fallible", "capability_dependence"):
        assert fam in contrasts.caption, fam
    assert A.REGISTRY.table("study_a_capability").figures == ("study_a_capability",)
    assert "study_a_capability" in A.FIGURE_NAMES and "study_a_seed_stability" in A.TABLE_NAMES
    assert "condition" in A.REGISTRY.table("study_a_table4_conflict").pivot.rows
    assert A.REGISTRY.table("study_a_table3_reference").pivot.column_order[:2] == (
        "system", "system_fallible")
    assert A.RECIPES[0].row_not_recomputed({"family": "capability_dependence"})
    assert not A.RECIPES[0].row_not_recomputed({"family": "placement_rf"})


def test_registry_entries_are_built_by_keyword():
    """Every entry names its fields: a positional Table / Metric / Figure / Recipe /
    Section / Pivot is a TypeError, so no one counts commas to tell a caption from an
    estimand."""
    from judgeaudit import registry as R

    for cls, args in [(R.Section, ("rq1", "heading")), (R.Pivot, (("judge",), ("task",))),
                      (R.Figure, ("f", "caption", "fn")),
                      (R.Metric, ("m", "A", "estimand", "fn", "wilson", (), "", "", "", "")),
                      (R.Table, ("t", "A", "rq1", "label", "caption", "", "", "", "", "",
                                 "", {}))]:
        with pytest.raises(TypeError):
            cls(*args)


def test_cell_trace_reads_its_study_facts_from_the_registry():
    """The cell trace's memo fields are the recomputed metrics' cell keys, and a metric
    reading trials beyond its cell (rf_adj: the judge's audio-only answers) says so in
    its entry; provenance/cells.py names no metric and lists no cell field itself."""
    assert set(O.CELL_FIELDS) == {"judge", "task", "family", "condition", "seed",
                                  "contrast", "protocol", "cue", "state"}
    assert "audio_only" in O.reads_beyond_cell("study_a_metrics_judge", "rf_adj")
    assert O.reads_beyond_cell("study_a_metrics_judge", "rf") == ""
    assert O.reads_beyond_cell("study_b_accuracy", "rf_adj") == ""
    cells = (REPO / "src" / "judgeaudit" / "provenance" / "cells.py").read_text()
    assert "rf_adj" not in cells and "_CELL_FIELDS" not in cells


def test_paper_a_tables_are_named_only_by_the_registry():
    """Paper A's protocol tables (blueprint, reference, pairwise) are named once, in
    their registry entry: the claims, the papers' published numbers and the judge card
    find them by the entry's `protocol` (study_a.outputs.PROTOCOL_TABLES)."""
    from judgeaudit.audit import card
    from judgeaudit.report.published import PUBLISHED
    from judgeaudit.study_a.claims import CLAIMS

    assert A.PROTOCOL_TABLES == {"blueprint": "study_a_table2_blueprint",
                                 "reference": "study_a_table3_reference",
                                 "pairwise": "study_a_table5_pairwise"}
    for name in A.PROTOCOL_TABLES.values():
        where = [str(p.relative_to(REPO))
                 for d in ("src", "rules", "scripts") for p in sorted((REPO / d).rglob("*"))
                 if p.is_file() and p.suffix in (".py", ".smk") and f'"{name}"' in p.read_text()]
        assert where == ["src/judgeaudit/study_a/outputs.py"], (name, where)
    assert {c.table for c in CLAIMS if hasattr(c, "table")} >= set(A.PROTOCOL_TABLES.values())
    assert {p.stem for p in PUBLISHED} >= set(A.PROTOCOL_TABLES.values())
    assert {p["protocol"] for p in card.PUBLISHED} == {
        "blueprint", "reference", "pairwise", "paralinguistic"}


def test_study_a_file_captions_are_the_registry_entries(tmp_path):
    """Each Study A table's own files (MD, TeX) open with its entry's `file_caption` and
    print its `columns` (render_tables hands the render function its entry; the render
    functions hold no caption wording and no column list): a changed entry changes
    the file."""
    import dataclasses

    import pandas as pd

    from judgeaudit.study_a import render as RA

    for t in A.TABLES:
        assert t.file_caption.strip(), t.name
    entry = A.REGISTRY.table("study_a_table2_blueprint")
    changed = dataclasses.replace(entry, file_caption="A caption held by the registry")
    metrics = pd.DataFrame({c: [] for c in ("judge", "task", "family", "condition", "seed",
                                            "metric", "estimate", "ci_low", "ci_high",
                                            "method", "n", "n_clusters", "cluster_unit")})
    changed.render(metrics=metrics, base=tmp_path / "t", entry=changed)
    assert "A caption held by the registry" in (tmp_path / "t.md").read_text()
    source = (REPO / "src" / "judgeaudit" / "study_a" / "render.py").read_text()
    for t in A.TABLES:  # no caption sentence restated in the render module
        assert t.file_caption.split("{")[0][:40] not in source, t.name
    assert RA.table_blueprint is entry.render
    follow = A.REGISTRY.table("study_a_follow_blueprint")
    assert tuple(follow.columns) == follow.metrics
    fewer = dataclasses.replace(follow, columns={"accuracy": "acc.", "rf": "the RF"})
    row = dict(judge="j", task="emotion", family="blueprint", condition="wrong_block",
               seed="all", estimate=0.5, ci_low=0.2, ci_high=0.8, method="wilson_cr2_bm",
               n=10, n_clusters=5, cluster_unit="speaker")
    metrics = pd.DataFrame([{**row, "metric": m} for m in ("accuracy", "rf", "rf_adj")])
    fewer.render(metrics=metrics, base=tmp_path / "f", entry=fewer)
    header = (tmp_path / "f.md").read_text()
    assert "acc." in header and "the RF" in header and "rf_adj" not in header.split("\n\n")[1]


def test_report_figure_stats_read_declared_attributes():
    """The report's figure sentence takes what one plotted element is and whether the
    error bars are the table rows' intervals from the figure's entry (`element`,
    `intervals_from_table`), never from its caption's words: the full-run validation
    figure (the same entry renamed) names its intervals as the default run's does."""
    import pandas as pd

    from judgeaudit.report import paper

    frame = pd.DataFrame({"method": ["wilson_cr2_bm"], "n": [10], "n_clusters": [5],
                          "cluster_unit": ["speaker"]})
    for name in ("estimator_validation", "estimator_validation_full"):
        assert O.FIGURES[name].intervals_from_table, name
        text = paper._figure_stats(name, frame)
        assert text.startswith("95% interval: "), (name, text)
    assert O.FIGURES["study_b_states"].element.startswith("stacked bar")
    assert "per stacked bar" in paper._figure_stats("study_b_states", frame)
    assert paper.PAPER_TABLE["study_a_table3_reference"] == "Table III (Paper A: Table III)"
    assert paper.PAPER_TABLE["study_b_accuracy"].endswith("(Paper B: end-to-end accuracy table)")


def test_method_registry_names_functions_that_exist():
    """The method registry is pure data (no imports: stats.methods would otherwise sit
    above every study), so its `function` fields name code as text; each dotted name
    there must resolve to a callable of the package, or a rename leaves the report's
    methods section naming a function that is gone."""
    import importlib
    import re

    for m in M.METHODS.values():
        names = re.findall(r"(?:judgeaudit\.|(?<=via )|(?<=\()(?=study_))[\w.]+", m.function)
        names = [n if n.startswith("judgeaudit.") else f"judgeaudit.{n}" for n in names]
        assert names, f"{m.key}: function {m.function!r} names no function"
        for name in names:
            mod, _, attr = name.rpartition(".")
            assert callable(getattr(importlib.import_module(mod), attr, None)), (m.key, name)
