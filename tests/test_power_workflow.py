"""The pre-flight power report in a tiny Snakemake run: results/tables/power.{tsv,md,tex}
are built from the trials alone (no judge is queried), a size the corpus cannot fill
is flagged naming the cell (warn) or stops the run (error)."""

import shutil
import subprocess

import pandas as pd
import pytest
import yaml

TINY = {
    "datasets": {
        "synth_emotion": {"n_voices": 4, "n_sentences": 1, "n_repetitions": 1,
                          "subset_per_class": 1, "test_fraction": 0.5},
        "synth_language": {"n_voices": 2, "clips_per_voice": 2, "test_fraction": 0.5},
        "synth_speaker": {"n_voices": 6, "n_utterances": 2, "n_trials_per_split": 4},
        "synth_naturalness": {"n_voices": 2, "n_sentences": 1, "test_fraction": 0.5},
    },
    "specialists": {"emotion": {"feature_set": "eGeMAPSv02"},
                    "language": {"feature_set": "eGeMAPSv02"}},
    "judges": {"active": ["label-reader"], "progress": False},
    # the test split holds 2 clips per language: per_class 3 cannot be filled
    "study_a": {"seeds": [1, 2], "reference_seeds": [1], "conflict_seeds": [1],
                "language": {"per_class": 3}, "pairwise": {"n_pairs": 2}},
    "study_b": {"enabled": False},
    "power": {"shortfall": "warn"},
}
OUT = "results/tables/power.tsv"


def _run(exe, repo, work, *extra):
    cmd = [exe, OUT, "-s", str(repo / "Snakefile"), "--directory", str(work), "--cores", "2",
           *extra, "--configfile", str(work / "tiny.yaml")]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1500)


@pytest.mark.slow
def test_tiny_run_writes_power_table_and_flags_shortfall(tmp_path, repo_root, snakemake_exe):
    work = tmp_path / "w"
    work.mkdir()
    shutil.copy(repo_root / "config.yaml", work / "config.yaml")
    (work / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    res = _run(snakemake_exe, repo_root, work)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    for ext in ("tsv", "md", "tex"):
        assert (work / f"results/tables/power.{ext}").stat().st_size > 0
    assert (work / "results/trials/power.tsv").exists()
    frame = pd.read_csv(work / OUT, sep="\t")
    assert {"lock", "follow", "accuracy"} <= set(frame["metric"])
    lang = frame[(frame["study"] == "A") & (frame["task"] == "language")]
    assert lang["shortfall"].all() and set(lang["delivered_n"]) == {2}
    assert not frame[frame["task"] == "emotion"]["shortfall"].any()
    # tiny cells cannot reach the targets: every cell warns, loudly, in the log
    assert not frame["meets_target"].any()
    log = (work / "logs/power/power_report.log").read_text()
    assert "POWER WARNING: cell A/pair_" in log and "SIZE SHORTFALL: cell A/language" in log
    assert "SHORT 2/3" in (work / "results/tables/power.md").read_text()

    # the default mode refuses the run, naming the cell; the trials already built stay
    (work / "tiny.yaml").write_text(yaml.safe_dump({**TINY, "power": {"shortfall": "error"}}))
    res = _run(snakemake_exe, repo_root, work)
    assert res.returncode != 0
    assert "cell A/language: configured size 3 but the corpus delivered 2" in (
        work / "logs/power/power_report.log").read_text()
    assert (work / "results/trials/A/language/reference.jsonl").exists()
