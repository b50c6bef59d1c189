"""Scale benchmark: the embedded study (configs/scale.yaml, the papers' size with
embedded judges, offline) run from scratch at fractions of its size.

For each fraction f (ascending) the trial set and the corpora it is drawn from are
scaled by f (emotion subset and voices, language clips, pairs per criterion, Study B
items and dialogues) and the workflow runs in a fresh directory. Printed per size:
  jobs       job count of the plan (`snakemake -n`, "total")
  dag_s      wall time of that dry run (parse + DAG build + plan)
  trials     trial rows planned (lines of results/trials/**/*.jsonl)
  calls      judge calls answered (lines of results/responses/**/*.jsonl)
  wall_s     wall time of the run
  judge_s    summed job time of the judge jobs (logs/benchmarks/judge_shards_*/**/*.tsv)
  peak_MiB   peak resident memory of any one process of the run (getrusage of the
             waited-for children: Snakemake or its largest job)
then the growth exponent b of wall_s ~ calls^b (least squares on log-log over the
completed sizes) and, for sizes skipped or cut by the time budget, the projection
wall_s(f) = wall_s(largest done) * (f / f(largest done))^b (calls scale with f).

    python benchmarks/scale.py [--fractions 0.125 0.25 0.5 1] [--budget-min 60]
                               [--cores 2] [--keep /tmp/scale] [--plan-only]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SMK = str(Path(sys.executable).parent / "snakemake")
# run one command, print the peak RSS (KiB) of its process tree's largest member
RUSAGE = ("import resource, subprocess, sys\n"
          "rc = subprocess.run(sys.argv[1:]).returncode\n"
          "print('PEAK_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
          " file=sys.stderr)\n"
          "sys.exit(rc)\n")


def scaled(base: dict, f: float) -> dict:
    """configs/scale.yaml with its sizes multiplied by f (floors keep every split
    and class populated)."""
    cfg = json.loads(json.dumps(base))
    ds = cfg.setdefault("datasets", {})

    def n(full: int, low: int) -> int:
        return max(low, round(full * f))

    ds.setdefault("synth_emotion", {}).update(n_voices=n(16, 4), subset_per_class=n(30, 2))
    ds.setdefault("synth_language", {}).update(n_voices=n(8, 2))
    single = n(base["datasets"]["synth_counterfactual"]["n_sentences"], 2)
    ds["synth_counterfactual"]["n_sentences"] = single
    dialogues = n(base["datasets"]["synth_dialogue"]["n_dialogues"], 2)
    ds["synth_dialogue"]["n_dialogues"] = dialogues
    sa = cfg["study_a"]
    sa["language"]["per_class"] = n(sa["language"]["per_class"], 1)
    sa["pairwise"]["n_pairs"] = n(sa["pairwise"]["n_pairs"], 2)
    tasks = cfg["study_b"]["tasks"]
    tasks["single"]["n_items"] = single
    tasks["positional"]["n_items"] = dialogues
    tasks["conversation"]["n_items"] = dialogues
    return cfg


def _smk(work: Path, *args: str) -> list[str]:
    return [SMK, "-s", str(REPO / "Snakefile"), "--directory", str(work), *args,
            "--configfile", str(REPO / "config.yaml"), str(work / "scale.yaml")]


def _lines(root: Path, pattern: str) -> int:
    return sum(sum(1 for _ in p.open()) for p in root.glob(pattern))


def _judge_seconds(work: Path) -> float:
    total = 0.0
    for p in (work / "logs" / "benchmarks").glob("judge_shards_*/**/*.tsv"):
        rows = p.read_text().splitlines()
        if len(rows) > 1:
            total += float(rows[1].split("\t")[0])
    return total


def run_fraction(f: float, base: dict, root: Path, cores: int, timeout_s: float,
                 env: dict) -> dict:
    work = root / f"f{f:g}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cfg = scaled(base, f)
    (work / "scale.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    t0 = time.perf_counter()
    dry = subprocess.run(_smk(work, "-n", "--cores", str(cores)), capture_output=True,
                         text=True, env=env, timeout=1800)
    dag_s = time.perf_counter() - t0
    if dry.returncode != 0:
        raise SystemExit(f"dry run at f={f:g} failed:\n{dry.stdout[-2000:]}{dry.stderr[-2000:]}")
    jobs = int(re.search(r"^total\s+(\d+)$", dry.stdout + dry.stderr, re.M).group(1))
    row = {"fraction": f, "jobs": jobs, "dag_s": dag_s, "status": "skipped"}
    if timeout_s <= 0:
        return row
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", RUSAGE,
                             *_smk(work, "--cores", str(cores))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        row["status"] = "ok" if proc.returncode == 0 else f"failed rc={proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # this run's own process group only
        out, err = proc.communicate()
        row["status"] = f"cut at {timeout_s:.0f} s"
    row["wall_s"] = time.perf_counter() - t0
    peak = re.search(r"PEAK_KIB (\d+)", err or "")
    row["peak_mib"] = int(peak.group(1)) / 1024 if peak else math.nan
    row["trials"] = _lines(work, "results/trials/**/*.jsonl")
    row["calls"] = _lines(work, "results/responses/**/*.jsonl")
    row["judge_s"] = _judge_seconds(work)
    if row["status"].startswith("failed"):
        print((out or "")[-2000:], (err or "")[-3000:], file=sys.stderr)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.125, 0.25, 0.5, 1.0])
    ap.add_argument("--budget-min", type=float, default=60.0,
                    help="total wall-time budget; a size whose projection exceeds what is "
                         "left is planned (jobs, DAG time) but not run")
    ap.add_argument("--plan-only", action="store_true",
                    help="only the plans (jobs, DAG build time) of every size; run nothing")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="work root to keep (else a temp dir)")
    args = ap.parse_args()

    base = yaml.safe_load((REPO / "configs" / "scale.yaml").read_text())
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    root = args.keep or Path(tempfile.mkdtemp(prefix="judgeaudit-scale-"))
    deadline = time.monotonic() + args.budget_min * 60
    load = os.getloadavg()
    print(f"# benchmarks/scale.py  cores={args.cores}  nproc={os.cpu_count()}  "
          f"load(1/5/15 min)={load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}  root={root}")
    rows: list[dict] = []
    for f in sorted(args.fractions):
        left = 0.0 if args.plan_only else deadline - time.monotonic()
        done = [r for r in rows if r["status"] == "ok"]
        if done and left > 0:
            proj = project(done, f)
            if proj is not None and proj > left:
                left = 0.0  # would not finish: plan only, project below
        row = run_fraction(f, base, root, args.cores, max(0.0, left), env)
        rows.append(row)
        print(fmt(row), flush=True)
    done = [r for r in rows if r["status"] == "ok"]
    b = exponent(done)
    print(f"growth exponent b (wall_s ~ calls^b, {len(done)} completed sizes): "
          + ("n/a" if b is None else f"{b:.2f}"))
    for r in rows:
        if r["status"] != "ok":
            p = project(done, r["fraction"])
            print(f"f={r['fraction']:g}: {r['status']}; projected wall "
                  + ("n/a" if p is None else f"{p:.0f} s ({p / 60:.1f} min)"))


def exponent(done: list[dict]) -> float | None:
    pts = [(math.log(r["calls"]), math.log(r["wall_s"])) for r in done if r["calls"] > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def project(done: list[dict], f: float) -> float | None:
    """wall_s at fraction f from the largest completed size (calls scale with f)."""
    if not done:
        return None
    last = max(done, key=lambda r: r["fraction"])
    b = exponent(done)
    b = 1.0 if b is None else b  # one size done: assume linear
    return last["wall_s"] * (f / last["fraction"]) ** b


def fmt(r: dict) -> str:
    if r["status"] == "skipped":
        return (f"f={r['fraction']:<6g} jobs={r['jobs']:<5d} dag_s={r['dag_s']:<7.1f} "
                "(not run: --plan-only, or the projection exceeds the budget left)")
    return (f"f={r['fraction']:<6g} jobs={r['jobs']:<5d} dag_s={r['dag_s']:<7.1f} "
            f"trials={r['trials']:<7d} calls={r['calls']:<8d} wall_s={r['wall_s']:<8.1f} "
            f"judge_s={r['judge_s']:<8.1f} peak_MiB={r['peak_mib']:<7.0f} {r['status']}")


if __name__ == "__main__":
    main()
