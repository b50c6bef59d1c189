"""Run-only settings and test support never re-run finished work: after a completed
tiny run, editing judgeaudit/testing/, turning judges.progress on or moving cache_dir
leaves `snakemake -n` with nothing to do, while editing a module a rule's script
imports does re-run that rule (the control that makes the test able to fail)."""

from __future__ import annotations

import re

import pytest
import yaml

NOTHING = "Nothing to be done"


def _jobs(text: str) -> set[str]:
    return set(re.findall(r"(?m)^(?:local)?rule (\w+):", text))


def _append(path, line="# edited by a test\n"):
    path.write_text(path.read_text() + "\n" + line)


@pytest.mark.slow
def test_testing_edits_and_run_only_settings_rerun_nothing(tiny_run, tmp_path):
    run = tiny_run.clone(tmp_path / "run")
    assert NOTHING in run.snakemake("-n")

    # a test fake: outside every script's import closure
    for rel in ("testing/fakeserver.py", "testing/perception.py"):
        _append(run.root / "src" / "judgeaudit" / rel)
    out = run.snakemake("-n")
    assert NOTHING in out, out[-3000:]

    # run-only settings: a progress bar and the cache location are not params
    overlay = tmp_path / "run_only.yaml"
    overlay.write_text(yaml.safe_dump({"judges": {"progress": True},
                                       "cache_dir": str(tmp_path / "elsewhere")}))
    out = run.snakemake("-n", overlays=[overlay])
    assert NOTHING in out, out[-3000:]

    # control: a module judge_shard's script reaches only through the adapter
    # registry's lazy imports re-runs the judge shards (and what follows them)
    _append(run.root / "src" / "judgeaudit" / "judges" / "embedded" / "judges.py")
    out = run.snakemake("-n")
    assert NOTHING not in out
    assert {"judge_shards_a_cls", "judge_shards_a_pair"} <= _jobs(out), out[-3000:]
    assert "synth_emotion" not in _jobs(out)  # nothing upstream of the judges


@pytest.mark.slow
def test_only_paid_judges_take_a_judge_slot(tiny_run, tmp_path):
    """judge_slots is 1 for an API judge's shard, 0 for an embedded CPU judge's."""
    run = tiny_run.clone(tmp_path / "run")
    gpt = {"provider": "openai", "model": "gpt-audio-2025-08-28",
           "base_url": "http://127.0.0.1:9/v1", "price_in_per_mtok": 40.0,
           "price_out_per_mtok": 80.0}
    overlay = tmp_path / "paid.yaml"
    overlay.write_text(yaml.safe_dump({"judges": {"panel": {"gpt": gpt}}}))
    out = run.snakemake("-n", "-f", "results/responses/gpt/A/emotion/blueprint.jsonl",
                        "results/responses/listener/A/emotion/blueprint.jsonl",
                        overlays=[overlay])
    blocks = re.split(r"\n(?=(?:local)?rule \w+:)", out)
    slots = {}
    for b in blocks:
        if b.startswith("rule judge_shards_a_cls:"):
            judge = re.search(r"results/responses/([^/]+)/", b).group(1)
            slots[judge] = re.search(r"judge_slots=(\d+)", b).group(1)
    assert slots == {"gpt": "1", "listener": "0"}, out[-3000:]


def test_scripts_read_run_only_settings_from_config_not_params(repo_root):
    """No rule declares cache_dir or judges.progress as a param."""
    for smk in sorted((repo_root / "rules").glob("*.smk")):
        text = smk.read_text()
        assert not re.search(r"^\s+cache_dir=", text, re.M), smk
        assert not re.search(r"^\s+progress=", text, re.M), smk
    shard = (repo_root / "scripts" / "judge_shard.py").read_text()
    assert 'smk.config["cache_dir"]' in shard and 'jcfg["progress"]' in shard


