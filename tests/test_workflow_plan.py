"""judgeaudit.workflow.Plan: the workflow's pure input functions, on small configs
(no Snakemake): targets, shards, corpora, judge jobs and params."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from judgeaudit.config import validate_config
from judgeaudit.vocab import alternation
from judgeaudit.vocab import study_a as vocab_a
from judgeaudit.vocab import study_b as vocab_b
from judgeaudit.workflow import (
    JUDGE_COST_FIELDS,
    Plan,
    PlanError,
    as_param,
    study_b_is_cue_contrast,
    study_b_is_protocol,
    study_b_is_state_input,
    study_b_kind,
)

REPO = Path(__file__).resolve().parents[1]


def plan(**overrides) -> Plan:
    return Plan(validate_config(overrides), REPO)


@pytest.fixture(scope="module")
def default_plan() -> Plan:
    return plan()


def test_module_imports_no_snakemake():
    tree = ast.parse((REPO / "src" / "judgeaudit" / "workflow.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.split(".")[0] == "snakemake" for m in mods), mods


def test_as_param_is_canonical():
    assert as_param({"b": 1, "a": [2, 1]}) == as_param({"a": [2, 1], "b": 1}) == '{"a":[2,1],"b":1}'


def test_synthetic_defaults_use_synth_corpora(default_plan):
    p = default_plan
    assert p.dataset_for("emotion") == "synth_emotion"
    assert p.dataset_for("cleanness") == "synth_naturalness"
    assert p.real_targets() == []
    assert p.real_mode_fallbacks() == []
    assert p.manifest_for("speaker") == "data/synth_speaker/manifest.tsv"
    with pytest.raises(PlanError, match="unknown attribute 'pitch'"):
        p.dataset_for("pitch")


def test_real_source_switches_corpus_and_warns_about_fallbacks(tmp_path):
    (tmp_path / "rav").mkdir()
    p = plan(datasets={"ravdess": {"source": "local_dir", "local_dir": str(tmp_path / "rav")}})
    assert p.dataset_for("emotion") == "ravdess"
    assert p.real_targets() == ["data/ravdess/manifest.tsv"]
    assert p.real_ingest_input("ravdess") == {"local_dir": str(tmp_path / "rav")}
    warned = p.real_mode_fallbacks()
    assert any("'language'" in w and "synth_language" in w for w in warned)
    assert not any("'emotion'" in w for w in warned)
    with pytest.raises(PlanError, match="synth_language"):
        p.real_ingest_input("fleurs")


def test_study_a_shards_follow_the_vocabulary_and_criteria_config():
    p = plan(study_a={"pairwise": {"criteria": ["speaker"]}})
    shards = p.study_a_shards()
    cls = [(t, s) for t in vocab_a.CLS_TASKS for s in vocab_a.CLS_SHARDS]
    assert shards == cls + [("pair_speaker", f) for f in vocab_a.PAIR_FORMATS]
    assert p.study_a_trial_files()[-1] == "results/trials/A/pair_speaker/native.jsonl"
    assert p.study_a_pair_specialist("speaker") == "results/specialists/speaker/synth_speaker/model.json"
    assert p.study_a_pair_specialist_name("cleanness") == "naturalness@synth_naturalness"


def test_study_a_cls_params_keep_only_what_the_shard_reads(default_plan):
    ref = json.loads(default_plan.study_a_cls_params("emotion", "reference"))
    assert set(ref) == {"task_cfg", "reference_seeds", "match_placement", "seed",
                        "fallible_variants"}
    blue = json.loads(default_plan.study_a_cls_params("language", "blueprint"))
    assert set(blue) == {"task_cfg", "seeds", "seed", "fallible_variants"}
    inputs = default_plan.study_a_cls_inputs("emotion", "blueprint")
    assert inputs["features"] == "results/features/synth_emotion.tsv"
    assert inputs["templates"] and all(t.endswith(".txt") for t in inputs["templates"])
    assert "features" not in default_plan.study_a_cls_inputs("emotion", "reference")


def test_study_b_shards_and_filters(default_plan):
    p = default_plan
    shards = p.study_b_shards("single")
    assert shards[-2:] == list(vocab_b.PROBE_SHARDS)
    assert "pointwise-none" in shards and "pairwise-hard" in shards
    assert [study_b_kind(s) for s in ("pointwise-soft", "probe-P")] == ["pointwise", "P"]
    assert study_b_is_protocol("pairwise-none") and not study_b_is_protocol("probe-O")
    assert study_b_is_cue_contrast("pointwise-hard") and not study_b_is_cue_contrast("pointwise-soft")
    assert study_b_is_state_input("probe-P") and not study_b_is_state_input("pairwise-none")
    assert p.study_b_cue("pointwise-none") == [] and p.study_b_cue("probe-O") == []
    assert p.study_b_cue("pairwise-soft")[0].endswith("templates/study_b/cues/soft.txt")
    assert p.study_b_template("probe-O").endswith("probe_oracle.txt")
    assert p.study_b_table("single") == "data/synth_counterfactual/items.tsv"
    assert p.study_b_table("positional") == "data/synth_dialogue/manifest.tsv"
    regex = re.compile(f"^(?:{vocab_b.shard_regex()})$")
    assert all(regex.match(s) for t in p.study_b_tasks() for s in p.study_b_shards(t))


def test_disabled_study_b_task_drops_its_shards_and_targets():
    p = plan(study_b={"tasks": {"single": {"enabled": False}, "positional": {"enabled": False},
                                "conversation": {"enabled": False}}})
    assert p.study_b_tasks() == [] and p.study_b_targets() == []
    assert p.study_b_scored() == []


def test_judges_resolve_auto_perception_per_shard():
    p = plan(judges={"active": ["listener", "first-slot"]})
    assert p.judge_names() == ["listener", "first-slot"]
    spec_a = p.judge_spec_for("listener", "A", "pair_speaker")
    models = spec_a["perception"]["models"]
    assert models.get("speaker") == "results/specialists/speaker/synth_speaker/model.json"
    assert all(v is None for k, v in models.items() if k != "speaker")
    assert p.judge_model_inputs("listener", "A", "pair_speaker") == [models["speaker"]]
    assert p.judge_model_inputs("first-slot", "A", "emotion") == []
    assert p.paid_judge("first-slot") is False
    assert not any(f in json.loads(p.judge_param("listener")) for f in JUDGE_COST_FIELDS)
    with pytest.raises(PlanError, match="unknown judges"):
        plan(judges={"active": ["nobody"]}).judge_names()


def test_no_paid_judge_jobs_with_embedded_panel(default_plan):
    assert default_plan.paid_judge_jobs() == []
    assert default_plan.judge_preflight_gate("listener") == []


def test_specialist_uses_cover_every_study_corpus(default_plan):
    uses = set(default_plan.specialist_uses())
    assert ("emotion", "synth_emotion") in uses
    assert ("naturalness", "synth_naturalness") in uses  # cleanness and naturalness pairs
    assert all(k in ("emotion", "language", "speaker", "naturalness") for k, _ in uses)
    acc = default_plan.specialist_accuracy_input()
    assert acc["speaker__synth_speaker__trials"] == "data/synth_speaker/trials.tsv"


def test_power_trial_files_leave_probes_out(default_plan):
    files = default_plan.power_trial_files()
    assert files and not any("/probe-" in f for f in files)
    assert set(default_plan.study_a_trial_files()) <= set(files)


def test_validation_runs(default_plan):
    assert default_plan.validation_outputs("full")[0] == "results/tables/estimator_validation_full.tsv"
    params = json.loads(default_plan.validation_params("default", "pairs_locker"))
    assert params["scenario"] == "pairs_locker" and params["n_seeds"] == default_plan.validation_seeds("default")


def test_alternation_matches_exactly_the_names():
    rx = re.compile(f"^(?:{alternation(vocab_a.PLACEMENTS)})$")
    assert all(rx.match(p) for p in vocab_a.PLACEMENTS)
    assert not rx.match("beforeafter") and not rx.match("")
