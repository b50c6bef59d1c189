"""The files the report reads besides the tables (issue 30), on a clone of the tiny
run: `results/verify.json` and `results/tables/human_validation.tsv` are optional
inputs of rule `report`. The finished run has neither and is up to date; once
`judgeaudit verify` writes its result, or a human-validation table appears, the next
plain run rebuilds the report (and only the report), which then states them; a
second `verify` does not count its own earlier result as damage."""

from __future__ import annotations

import json

import pytest

HUMAN = """study\ttask\tshard\tcondition\tcomparison\traters\tn_answers\tn_unanswered\testimate\tci_low\tci_high\tn\tn_clusters\tcluster_unit\tmethod\tone_sided
B\tsingle\tpointwise-none\t\tgold\t2\t10\t0\t0.7\t0.4\t0.9\t10\t10\titem\twilson_cr2_bm\t
"""


def _jobs(out: str) -> set[str]:
    """The rules a dry run would run (its job table)."""
    import re

    table = out.split("Job stats:")[-1].split("\n\n")[0] if "Job stats:" in out else ""
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", table, re.M)} - {"total", "all"}


@pytest.mark.slow
def test_verify_and_human_check_reach_the_report_without_a_forced_rerun(tiny_run, tmp_path):
    run = tiny_run.clone(tmp_path / "w")
    assert _jobs(run.snakemake("-n")) == set()  # the finished run is up to date
    res = run.cli("verify")
    assert res.returncode == 0, res.stdout + res.stderr
    assert _jobs(run.snakemake("-n")) == {"report"}
    run.snakemake()
    index = (run.root / "results" / "report" / "index.html").read_text()
    verified = json.loads((run.root / "results" / "verify.json").read_text())["verified_utc"]
    assert f"Last verified {verified}" in index
    assert run.cli("verify").returncode == 0  # the report's own input is not damage
    assert _jobs(run.snakemake("-n")) == {"report"}  # a newer verify result: rebuilt
    run.snakemake()
    (run.root / "results" / "tables" / "human_validation.tsv").write_text(HUMAN)
    assert _jobs(run.snakemake("-n")) == {"report"}
    run.snakemake()
    index = (run.root / "results" / "report" / "index.html").read_text()
    assert "Human listening check" in index and "accuracy 0.70 [0.40, 0.90]" in index
    assert "No human listening check" not in index
    rec = json.loads((run.root / "results" / "report" / "index.html.prov.json").read_text())
    named = {i["path"] for i in rec["inputs"]}
    assert {"results/verify.json", "results/tables/human_validation.tsv"} <= named
