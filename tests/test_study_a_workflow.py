"""Study A end to end on a tiny config: `snakemake` builds every Study A table and
figure; then changing one simulated judge's planted propensity makes a dry run
schedule only that judge's shards and what depends on them."""

import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from ratecells import check_rate_cells

TINY = {
    "datasets": {
        "synth_emotion": {"n_voices": 4, "n_sentences": 1, "n_repetitions": 1,
                          "subset_per_class": 1, "test_fraction": 0.5},
        "synth_language": {"n_voices": 2, "clips_per_voice": 2, "test_fraction": 0.5},
        "synth_speaker": {"n_voices": 6, "n_utterances": 2, "n_trials_per_split": 4},
        "synth_naturalness": {"n_voices": 2, "n_sentences": 1, "test_fraction": 0.5},
    },
    "specialists": {"emotion": {"feature_set": "eGeMAPSv02"}},
    "judges": {"active": ["label-reader", "first-slot", "sim-follower", "sim-locker"],
               "progress": False},
    "study_a": {"seeds": [1, 2], "reference_seeds": [1], "conflict_seeds": [1],
                "language": {"per_class": 1}, "pairwise": {"n_pairs": 2},
                "bootstrap": {"n_boot": 20}},
    "study_b": {"enabled": False},
}
TARGETS = ["study_a_tables", "study_a_figures"]


def _run(exe, repo, work, *extra, check=True):
    cmd = [exe, *TARGETS, "-s", str(repo / "Snakefile"), "--directory", str(work),
           "--cores", "2", *extra, "--configfile", str(work / "tiny.yaml")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1500)
    if check and res.returncode != 0:
        raise AssertionError(res.stdout[-3000:] + res.stderr[-5000:])
    return res


def _jobs(text):
    """(rule, wildcards dict) of every job in a dry-run listing."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \S+:)", text):
        m = re.match(r"(?:local)?rule (\S+):", block)
        if not m:
            continue
        wc = re.search(r"wildcards: (.*)", block)
        wild = dict(kv.split("=", 1) for kv in wc.group(1).split(", ")) if wc else {}
        jobs.append((m.group(1), wild))
    return jobs


@pytest.mark.slow
def test_tiny_study_a_run_and_targeted_rerun(tmp_path, repo_root, snakemake_exe):
    work = tmp_path / "w"
    work.mkdir()
    shutil.copy(repo_root / "config.yaml", work / "config.yaml")
    (work / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    _run(snakemake_exe, repo_root, work)
    for name in ("study_a_table2_blueprint", "study_a_follow_blueprint",
                 "study_a_table3_reference", "study_a_table4_conflict",
                 "study_a_table5_pairwise", "study_a_contrasts", "study_a_planted"):
        for ext in ("tsv", "md", "tex"):
            assert (work / "results" / "tables" / f"{name}.{ext}").stat().st_size > 0
        check_rate_cells(work / "results" / "tables" / f"{name}.md")
    for name in ("study_a_follow_by_placement", "study_a_lock_vs_g",
                 "study_a_accuracy_by_blueprint"):
        for ext in ("png", "pdf"):
            assert (work / "figures" / f"{name}.{ext}").stat().st_size > 1000
    planted = pd.read_csv(work / "results" / "tables" / "study_a_planted.tsv", sep="\t")
    assert set(planted["judge"]) == {"sim-follower", "sim-locker"}
    # nothing left to do
    again = _run(snakemake_exe, repo_root, work, "-n")
    assert not [j for j in _jobs(again.stdout) if j[0] != "all"], again.stdout[-2000:]

    # change one planted propensity of one judge
    base = yaml.safe_load((repo_root / "config.yaml").read_text())
    sim = base["judges"]["panel"]["sim-follower"]["simulated"]
    sim["follow_reference"]["system"] = round(sim["follow_reference"]["system"] + 0.05, 3)
    TINY2 = {**TINY, "judges": {**TINY["judges"],
                                "panel": {"sim-follower": base["judges"]["panel"]["sim-follower"]}}}
    (work / "tiny.yaml").write_text(yaml.safe_dump(TINY2))
    dry = _run(snakemake_exe, repo_root, work, "-n")
    jobs = _jobs(dry.stdout)
    # one grouped judge job per Study A task (judge_group_rules), all of sim-follower
    groups = [w for r, w in jobs if r.startswith("judge_shards")]
    assert groups and {w["judge"] for w in groups} == {"sim-follower"}
    assert len(groups) == len({tuple(sorted(w.items())) for w in groups})
    per_judge = [w["judge"] for r, w in jobs if r == "study_a_metrics_judge"]
    assert per_judge == ["sim-follower"]
    allowed = {"judge_shards_a_cls", "judge_shards_a_pair", "study_a_metrics_judge", "study_a_metrics", "study_a_tables",
               "study_a_figures", "all"}
    assert {r for r, _ in jobs} <= allowed, sorted({r for r, _ in jobs})
