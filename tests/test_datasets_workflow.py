"""The real workflow on the shared tiny run: every synthetic manifest was built with
provenance records, `snakemake -n` has nothing to do, and (in a clone) a change to
one dataset's parameter re-runs only that dataset's rule."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from judgeaudit.config import load_config
from judgeaudit.datasets.synth import SYNTH_DATASETS
from judgeaudit.datasets.validate import validate_manifest
from judgeaudit.provenance import record_path

TARGETS = [f"data/{d}/manifest.tsv" for d in SYNTH_DATASETS]
AUX = {"synth_speaker": ["trials.tsv"], "synth_naturalness": ["pairs.tsv"],
       "synth_counterfactual": ["items.tsv"], "synth_dialogue": ["dialogues.tsv"]}


def snakemake(run, *args: str, overlays=()) -> subprocess.CompletedProcess:
    proc = run.run(*TARGETS, *args, overlays=overlays, timeout=600)
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def planned_jobs(output: str) -> dict[str, int]:
    """Rule -> job count from the `Job stats` table of a dry run."""
    jobs: dict[str, int] = {}
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Job stats:":
            for row in lines[i + 3:]:
                m = re.match(r"^(\S+)\s+(\d+)$", row.strip())
                if not m or m.group(1) == "total":
                    break
                jobs[m.group(1)] = int(m.group(2))
            break
    return jobs


@pytest.mark.slow
def test_workflow_builds_manifests_then_reruns_only_changed_dataset(tiny_run, tmp_path):
    root = tiny_run.root
    expected = load_config(root / "config.yaml", root / "tests" / "tiny_config.yaml")["datasets"]

    for d in SYNTH_DATASETS:
        folder = root / "data" / d
        validate_manifest(folder / "manifest.tsv", dataset=d, root=root)
        outputs = [folder / "manifest.tsv", folder / "clips",
                   *(folder / t for t in AUX.get(d, []))]
        for out in outputs:
            rec = json.loads(record_path(out).read_text(encoding="utf-8"))
            assert rec["rule"] == d
            assert rec["output"]["sha256"]
            assert json.loads(rec["params"]["cfg"]) == expected[d]
            assert any(i["role"] == "code" and i["path"].endswith("synth/tts.py")
                       for i in rec["inputs"])
        clips_rec = json.loads(record_path(folder / "clips").read_text(encoding="utf-8"))
        assert clips_rec["output"]["kind"] == "dir"
        assert clips_rec["output"]["n_files"] == len(list((folder / "clips").glob("*.wav")))
        assert (root / "logs" / "datasets" / f"{d}.log").is_file()

    dry = snakemake(tiny_run, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr

    # a change to one dataset's parameter, in a clone of the run
    run = tiny_run.clone(tmp_path / "w")
    work = run.root
    before = {d: (work / "data" / d / "manifest.tsv").stat().st_mtime_ns
              for d in SYNTH_DATASETS}
    n_utt = expected["synth_speaker"]["n_utterances"] + 1
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump({"datasets": {"synth_speaker": {"n_utterances": n_utt}}}),
                       encoding="utf-8")
    dry = snakemake(run, "-n", "--quiet", "rules", overlays=[changed])
    assert planned_jobs(dry.stdout + dry.stderr) == {"synth_speaker": 1}, dry.stdout + dry.stderr

    snakemake(run, overlays=[changed])
    after = {d: (work / "data" / d / "manifest.tsv").stat().st_mtime_ns
             for d in SYNTH_DATASETS}
    assert [d for d in SYNTH_DATASETS if before[d] != after[d]] == ["synth_speaker"]
    rec = json.loads(record_path(work / "data/synth_speaker/manifest.tsv").read_text())
    assert json.loads(rec["params"]["cfg"])["n_utterances"] == n_utt
