"""benchmarks/run_profile.py on a made-up finished run (a Snakemake log in its 9.x
layout and benchmark files): jobs, summed CPU, critical path, packing, top jobs."""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rp():
    spec = importlib.util.spec_from_file_location("run_profile",
                                                  REPO / "benchmarks" / "run_profile.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["run_profile"] = mod
    spec.loader.exec_module(mod)
    return mod


LOG = """Assuming unrestricted shared filesystem usage.

SNAKEMAKE
=========
  Date: 2026-12-01 12:00:00
  Snakemake version: 9.27.1

Building DAG of jobs...
Provided cores: 2
Select jobs to execute...
Execute 2 jobs...
[Tue Dec  1 12:00:00 2026]
localrule make_a:
    input: src/x.py
    output: data/a/manifest.tsv, data/a/clips
    log: logs/a.log
    jobid: 1
    benchmark: logs/benchmarks/make_a.tsv
    reason: Missing output files: data/a/manifest.tsv
    resources: tmpdir=/tmp
Shell command: None
[Tue Dec  1 12:00:00 2026]
localrule side:
    input: src/x.py
    output: results/side.tsv
    jobid: 2
    benchmark: logs/benchmarks/side/side.tsv
    resources: tmpdir=/tmp
Shell command: None
[Tue Dec  1 12:00:30 2026]
Finished jobid: 2 (Rule: side)
1 of 4 steps (25%) done
[Tue Dec  1 12:01:40 2026]
Finished jobid: 1 (Rule: make_a)
2 of 4 steps (50%) done
[Tue Dec  1 12:01:40 2026]
localrule use_a:
    input: data/a/clips/c1.wav, results/side.tsv
    output: results/use.tsv
    jobid: 3
    benchmark: logs/benchmarks/use_a/x=1.tsv
    wildcards: x=1
    resources: tmpdir=/tmp
Shell command: None
[Tue Dec  1 12:02:00 2026]
Finished jobid: 3 (Rule: use_a)
3 of 4 steps (75%) done
[Tue Dec  1 12:02:00 2026]
localrule all:
    input: results/use.tsv
    jobid: 0
    resources: tmpdir=/tmp
[Tue Dec  1 12:02:00 2026]
Finished jobid: 0 (Rule: all)
4 of 4 steps (100%) done
"""
HEAD = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    (run / ".snakemake" / "log").mkdir(parents=True)
    (run / ".snakemake" / "log" / "2026-12-01T120000.000000.snakemake.log").write_text(LOG)
    for rel, s, cpu in (("make_a.tsv", 100, 90.0), ("side/side.tsv", 30, 20.0),
                        ("use_a/x=1.tsv", 20, 10.0)):
        p = run / "logs" / "benchmarks" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(HEAD + f"{s}\t0:00:{s}\t1\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    return run


def test_profile_of_a_finished_run(rp, tmp_path):
    prof = rp.profile(_run(tmp_path), with_overhead=False)
    assert prof["jobs"] == 4 and prof["cores"] == 2
    assert prof["wall_s"] == 120.0
    assert prof["cpu_s"] == pytest.approx(120.0)
    # make_a (100 s) -> use_a (20 s) through a file inside make_a's directory output;
    # side (30 s) is off the path
    assert prof["critical_s"] == pytest.approx(120.0)
    assert [c[0] for c in prof["critical_chain"]] == ["make_a", "use_a[x=1]", "all"]
    assert prof["packing"] == pytest.approx(120.0 / (120.0 * 2))
    assert prof["top"][0][:2] == ("make_a", 90.0)
    assert prof["rules"]["use_a"]["jobs"] == 1


def test_side_by_side_prints_a_ratio(rp, tmp_path, capsys):
    run = _run(tmp_path)
    a = rp.profile(run, with_overhead=False)
    b = dict(a, dir=str(tmp_path / "after"), wall_s=60.0, packing=1.0)
    rp.print_side_by_side([a, b])
    out = capsys.readouterr().out
    wall = next(line for line in out.splitlines() if line.startswith("wall_s"))
    assert wall.split()[1:] == ["120.0", "60.0", "0.50"]
    assert "critical path" in out and "top ten jobs by CPU" in out


def test_the_machine_calibration_is_printed_beside_every_measurement(rp, tmp_path, capsys,
                                                                     monkeypatch):
    run = _run(tmp_path)
    monkeypatch.setattr(rp, "_NOW", [0.79])  # this machine, measured now
    a = rp.profile(run, with_overhead=False)
    assert a["calib_s"] == 0.79 and a["calib_now"]
    assert a["cpu_calib"] == pytest.approx(120.0 / 0.79)
    # a recorded run carries the calibration measured at its start
    b = dict(a, dir=str(tmp_path / "after"), calib_s=1.58, calib_now=False, cpu_s=60.0,
             cpu_calib=60.0 / 1.58)
    rp.print_side_by_side([a, b])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("calib_s"))
    assert row.split()[1:] == ["0.79", "1.58", "2.00"]
    heads = [line for line in out.splitlines() if line.startswith(("==", "["))]
    assert len(heads) == 8 and all("calibration" in h for h in heads)
    assert "0.79 s CPU per 10 M pure-Python additions (measured now; x0.50" in out
    assert "1.58 s CPU per 10 M pure-Python additions (at the run's start; x1.00" in out
    assert 0 < rp.calibrate(n=100_000, tries=1) < 5


def test_time_log_and_planned_jobs(rp, tmp_path):
    t = tmp_path / "time.log"
    t.write_text("\tUser time (seconds): 100.5\n\tSystem time (seconds): 9.5\n"
                 "\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n")
    got = rp.parse_time_log(t)
    assert got["tree_cpu_s"] == pytest.approx(110.0)
    assert got["elapsed_s"] == pytest.approx(3723.0)
    total, by_rule = rp.planned("Job stats:\njob      count\n-----  ------\nfoo  3\n"
                                "all  1\ntotal  4\n")
    assert total == 4 and by_rule == {"foo": 3, "all": 1}


def test_edit_overlay_nests_one_value(rp, tmp_path):
    import yaml

    path = rp.edit_overlay(tmp_path, "study_b.rendering.k_candidates=4")
    assert yaml.safe_load(path.read_text()) == {"study_b": {"rendering": {"k_candidates": 4}}}
    with pytest.raises(SystemExit):
        rp.edit_overlay(tmp_path, "no_value")


TOY = """configfile: "config.yaml"


rule all:
    input:
        "results/b.txt",


rule a:
    output:
        "results/a.txt",
    params:
        v=config["x"]["v"],
    log:
        "logs/a.log",
    benchmark:
        "logs/benchmarks/a/a.tsv"
    shell:
        "echo {params.v} > {output}"


rule b:
    input:
        "results/a.txt",
    output:
        "results/b.txt",
    log:
        "logs/b.log",
    benchmark:
        "logs/benchmarks/b/b.tsv"
    shell:
        "cat {input} > {output}"
"""


def test_run_states_on_a_real_snakemake_workflow(rp, tmp_path):
    """cold, noop and edit on a two-rule workflow run by the real Snakemake: the
    cold run's jobs, a no-op that plans nothing, an edit that re-runs only the rule
    whose param changed and its dependant."""
    import shutil
    import subprocess

    run = tmp_path / "toy"
    run.mkdir()
    (run / "Snakefile").write_text(TOY)
    (run / "config.yaml").write_text("cache_dir: cache\nx:\n  v: 1\n")
    (run / "results").mkdir()
    (run / "results" / "README.md").write_text("kept: tracked\n")
    (run / ".venv").symlink_to(Path(sys.executable).parent.parent)
    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q"], cwd=run, check=True)
    subprocess.run(["git", "add", "Snakefile", "config.yaml", "results/README.md"], cwd=run,
                   check=True)
    cold = rp.run_state(run, "cold", 1, None)
    assert (run / "results" / "b.txt").read_text() == "1\n"
    prof = rp.profile(run, with_overhead=False)
    assert prof["jobs"] == 3 and prof["state"] == "cold" and cold["wall_s"] > 0
    assert [c[0] for c in prof["critical_chain"]] == ["a", "b", "all"]
    # Snakemake's own CPU is part of the tree's, so the jobs' packing is below the tree's
    assert 0 < cold["smk_cpu_s"] <= cold["tree_cpu_s"]
    assert 0 <= prof["packing_jobs"] < prof["packing"]
    assert prof["packing"] == pytest.approx(cold["tree_cpu_s"] / (cold["wall_s"] * 1))
    noop = rp.run_state(run, "noop", 1, None)
    assert noop["jobs_planned"] == 0 and len(noop["dry_runs"]) == 3
    edit = rp.run_state(run, "edit", 1, "x.v=2")
    assert edit["planned_by_rule"] == {"a": 1, "b": 1, "all": 1}
    assert (run / "results" / "b.txt").read_text() == "2\n"
    # the edit ran last; --state picks the cold run it recorded, not the newest log
    picked = rp.profile(run, with_overhead=False, state="cold")
    assert picked["log"] == cold["log"] != edit["log"] and picked["jobs"] == 3
    assert rp.profile(run, with_overhead=False)["log"] == edit["log"]
    rp.run_state(run, "cold", 1, None)  # cold removes what the run made, keeps tracked files
    assert (run / "results" / "README.md").exists()
