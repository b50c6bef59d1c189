"""The tiny study through `profiles/slurm` on a real single-node Slurm cluster
(tests/slurm_cluster.py: munged + slurmctld + slurmd on localhost), compared byte for
byte with the same files of the local tiny run every workflow test shares (`tiny_run`:
the same source, config and layout, run with `--cores 2`).

A subset of the tiny study's targets, not `rule all`: under Slurm every job is its
own `sbatch` + `python -m snakemake` start-up, and the full tiny run (204 jobs) takes
tens of minutes that way on two cores. The subset covers a dataset generator, trial
building, a specialist model, three judges (one of them perceiving through that
model), the validation simulation, a table and its figure: nine cluster jobs.
"""

import importlib.util
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from slurm_cluster import PACKAGES, SlurmCluster, missing_binaries

pytestmark = pytest.mark.slow

TARGETS = [
    "results/tables/estimator_validation.tsv",
    "results/responses/label-reader/A/pair_speaker/native.jsonl",
    "results/responses/first-slot/A/pair_speaker/native.jsonl",
    "results/responses/sim-mixed/A/pair_speaker/native.jsonl",
]
# Rules of the subset and how many jobs each has (all but none run as Slurm jobs).
# A judge job judges one group (here both pair formats of pair_speaker).
EXPECTED_JOBS = {"synth_speaker": 1, "study_a_trials_pairwise_native": 1,
                 "study_a_trials_pairwise_concat": 1, "specialists_train": 1,
                 "judge_shards_a_pair": 3, "validation_scenario": 2, "validation_table": 1}
# Compared trees: everything the workflow writes except its own logs and caches.
COMPARED = ("data", "results", "figures")
# What differs between two runs of the same job by design, and only that: a judge
# response row's measured call latency (`latency_s`, CONTRACTS section 4), and in a
# provenance record (<output>.prov.json) when it was written, how long generation took
# and, for a response shard, the output's sha256/size (which cover those latencies).
VOLATILE_RESPONSE_FIELDS = ("latency_s",)
VOLATILE_RECORD_FIELDS = ("created_utc",)
VOLATILE_RECORD_EXTRA = ("generation_s",)
VOLATILE_RESPONSE_RECORD_OUTPUT = ("sha256", "bytes")
# How long a problem that keeps Slurm from running the jobs may last before the run is
# stopped and the test fails naming it (instead of waiting out the 1500 s timeout).
STUCK_AFTER_S = 60


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    if missing := missing_binaries():
        pytest.skip(f"Slurm/munge programs not installed ({', '.join(missing)}); "
                    f"`apt-get install {' '.join(PACKAGES)}` (.ci/run does) failed here")
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        msg = "snakemake-executor-plugin-slurm missing: pip install -e '.[cluster]'"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"), cpus=2)
    # SIGTERM (a CI timeout, `kill`) unwinds through the finalizer below like Ctrl-C;
    # the daemons also get SIGTERM from the kernel if this process dies outright.
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        cluster.up(tie_to_parent=True)
        yield cluster
    finally:
        cluster.down()
        signal.signal(signal.SIGTERM, previous)
        leftover = [p for p in cluster._job_pids()]
        assert not leftover, f"processes of the test cluster still alive: {leftover}"


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _snakemake(exe, root: Path, env, cluster, *args, timeout=1500):
    """The subset's targets in `root` (a checkout laid out like the tiny run: source and
    outputs in one folder, config.yaml + tests/tiny_config.yaml), on `cluster`."""
    cmd = [exe, "-s", str(root / "Snakefile"), "--directory", str(root), *args,
           "--configfile", str(root / "config.yaml"), str(root / "tests" / "tiny_config.yaml"),
           "--", *TARGETS]
    code, out = run_watched(cmd, env, cluster, root.parent / "snakemake.out", timeout=timeout)
    assert code == 0, out[-8000:]
    return out


def run_watched(cmd, env, cluster, out_path: Path, timeout: float = 1500,
                stuck_after: float = STUCK_AFTER_S, poll: float = 3.0) -> tuple[int, str]:
    """Run `cmd` (a snakemake submitting to `cluster`) and return (exit code, output),
    failing fast instead of waiting out `timeout` when the cluster cannot run its jobs:
    a problem `cluster.problems()` names (node down or drained, a daemon gone, a job
    pending for a reason that does not resolve by itself) that lasts `stuck_after`
    seconds kills snakemake, cancels the cluster's jobs and fails the test naming the
    problem, with the tails of the daemons' logs and of snakemake's output."""
    seen: dict[str, float] = {}
    t0 = time.monotonic()
    with open(out_path, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            while proc.poll() is None:
                now = time.monotonic()
                if now - t0 > timeout:
                    _stop(proc, cluster)
                    pytest.fail(f"snakemake on Slurm still running after {timeout:.0f} s; "
                                f"cluster now: {cluster.problems() or 'no problem seen'}\n"
                                f"{cluster.logs_tail()}\n--- snakemake\n"
                                f"{_tail(out_path)}", pytrace=False)
                current = cluster.problems()
                seen = {p: seen.get(p, now) for p in current}
                stuck = [p for p, since in seen.items() if now - since >= stuck_after]
                if stuck:
                    _stop(proc, cluster)
                    pytest.fail(f"Slurm cannot run the jobs (for {stuck_after:.0f} s): "
                                f"{'; '.join(stuck)}\n{cluster.logs_tail()}\n--- snakemake\n"
                                f"{_tail(out_path)}", pytrace=False)
                time.sleep(poll)
        finally:
            if proc.poll() is None:  # an interrupt or a failure above
                _stop(proc, cluster)
    return proc.returncode, out_path.read_text(errors="replace")


def _stop(proc: subprocess.Popen, cluster) -> None:
    """Snakemake (its whole process group) TERM then KILL, and every job of the cluster
    cancelled."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    try:
        cluster.run("scancel", "--user", str(os.getuid()), check=False, timeout=15)
    except (subprocess.TimeoutExpired, OSError):
        pass


def _tail(path: Path, n: int = 4000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else ""


def _is_response_shard(rel: str) -> bool:
    return rel.startswith("results/responses/") and rel.endswith(".jsonl")


def _normalised(rel: str, path: Path) -> bytes:
    data = path.read_bytes()
    if _is_response_shard(rel):
        rows = [json.loads(line) for line in data.decode().splitlines()]
        for row in rows:
            for key in VOLATILE_RESPONSE_FIELDS:
                row.pop(key)
        return json.dumps(rows, sort_keys=True).encode()
    if not rel.endswith(".prov.json"):
        return data
    record = json.loads(data)
    for key in VOLATILE_RECORD_FIELDS:
        record.pop(key)
    for key in VOLATILE_RECORD_EXTRA:
        record.get("extra", {}).pop(key, None)
    if _is_response_shard(rel.removesuffix(".prov.json")):
        for key in VOLATILE_RESPONSE_RECORD_OUTPUT:
            record["output"].pop(key)
    return json.dumps(record, sort_keys=True).encode()


def _tree(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for sub in COMPARED if (root / sub).exists()
            for p in sorted((root / sub).rglob("*")) if p.is_file()}


def test_tiny_study_on_slurm_matches_local_run(tiny_run, slurm, tmp_path, snakemake_exe):
    if not tiny_run.is_git:
        pytest.skip("needs git and a git checkout to copy")
    t0 = time.monotonic()
    # a clean clone of the tiny run's committed source (no outputs), run the same way
    work = tmp_path / "slurm"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(tiny_run.root), str(work)],
                   check=True, capture_output=True, text=True)
    env = {k: v for k, v in tiny_run.env.items() if not k.startswith("SLURM_")}
    env["PYTHONPATH"] = str(work / "src")

    # The targets through the profile on the cluster; only the status polling
    # interval (20 s in the profile) and the judge bound are tightened for the test.
    out = _snakemake(snakemake_exe, work, {**env, **slurm.env()}, slurm,
                     "--profile", str(work / "profiles" / "slurm"),
                     "--slurm-init-seconds-before-status-checks", "1",
                     "--latency-wait", "10", "--resources", "judge_slots=1",
                     # embedded judges request no slot by default; here each asks one
                     # so the global bound is observable without a paid provider
                     "--set-resources", "judge_shards_a_pair:judge_slots=1")
    print(f"Slurm run {time.monotonic() - t0:.0f}s")

    # every job went through sbatch and finished COMPLETED in Slurm's own view
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    assert len(submitted) == sum(EXPECTED_JOBS.values()), out[-4000:]
    rows = [line.split("|") for line in slurm.run(
        "squeue", "--states=all", "--noheader", "--format=%i|%T|%k|%S|%e|%C|%m|%l").splitlines()]
    jobs = {r[0]: r for r in rows if r[0] in submitted}
    assert sorted(jobs) == sorted(submitted), rows
    assert {r[1] for r in jobs.values()} == {"COMPLETED"}, rows
    per_rule = {}
    for r in jobs.values():
        rule = re.match(r"rule_(\w+?)(_wildcards_|$)", r[2]).group(1)
        per_rule[rule] = per_rule.get(rule, 0) + 1
    assert per_rule == EXPECTED_JOBS, rows
    # per-rule resources reach Slurm: threads -> CPUs, mem_mb -> --mem, runtime -> -t
    # (specialists_train: 2 threads, 4000 MB, 120 min; the rest the profile's defaults)
    limits = {r[2].split("_wildcards_")[0]: tuple(r[5:8]) for r in jobs.values()}
    assert limits["rule_specialists_train"] == ("2", "4000M", "2:00:00"), limits
    assert limits["rule_synth_speaker"] == ("1", "1000M", "30:00"), limits

    # judge_slots=1 holds across the cluster: no two judge jobs ran at the same time
    spans = sorted((r[3], r[4]) for r in jobs.values() if r[2].startswith("rule_judge_shards"))
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end, spans

    # byte-identical outputs, less the volatile fields named above: every file the
    # cluster wrote is the local tiny run's file of that name (which ran the whole study)
    b = _tree(work)
    a = {rel: tiny_run.root / rel for rel in b}
    missing = sorted(rel for rel, path in a.items() if not path.is_file())
    assert not missing, missing
    differ = [rel for rel in a if _normalised(rel, a[rel]) != _normalised(rel, b[rel])]
    assert not differ, differ
    exact = [rel for rel in a if a[rel].read_bytes() == b[rel].read_bytes()]
    volatile = sorted(set(a) - set(exact))
    assert all(_is_response_shard(rel.removesuffix(".prov.json")) or rel.endswith(".prov.json")
               for rel in volatile), volatile
    print(f"{len(a)} files compared: {len(exact)} byte-identical, {len(volatile)} equal "
          f"once the volatile fields are dropped")
    assert sum(_is_response_shard(rel) for rel in a) == 2 * EXPECTED_JOBS["judge_shards_a_pair"]
    for rel in ("data/synth_speaker/manifest.tsv", "results/trials/A/pair_speaker/native.jsonl",
                "results/specialists/speaker/synth_speaker/model.joblib",
                "results/tables/estimator_validation.tsv", "figures/estimator_validation.png"):
        assert rel in exact, (rel, sorted(exact))
    assert len(exact) > 20, sorted(exact)


def test_a_cluster_that_cannot_run_jobs_fails_fast_naming_why(slurm, tmp_path):
    """The watchdog of the test above: with the node drained, a job stays pending; the
    run is stopped within seconds of `stuck_after`, its job cancelled, and the failure
    names the drained node (not a timeout much later)."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SLURM_")},
           **slurm.env()}
    slurm.run("scontrol", "update", "nodename=localhost", "state=drain", "reason=watchdog-test")
    t0 = time.monotonic()
    try:
        with pytest.raises(pytest.fail.Exception) as failed:
            run_watched(["sbatch", "--wait", "--job-name=stuck", "--wrap", "true"], env, slurm,
                        tmp_path / "out.txt", timeout=120, stuck_after=5, poll=1)
        elapsed = time.monotonic() - t0
    finally:
        slurm.run("scontrol", "update", "nodename=localhost", "state=resume")
    message = str(failed.value)
    assert "Slurm cannot run the jobs" in message and "drain" in message, message[:2000]
    assert "watchdog-test" in message, message[:2000]  # the node's reason, from sinfo
    assert "--- " in message and "slurmctld.log" in message  # the daemons' log tails
    assert elapsed < 60, elapsed
    # the stuck job was cancelled, and the node takes jobs again
    assert slurm.run("squeue", "-h", "--states=PENDING,RUNNING").strip() == ""
    deadline = time.monotonic() + 30
    while slurm.problems() and time.monotonic() < deadline:
        time.sleep(1)
    assert slurm.problems() == []
