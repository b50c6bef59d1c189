"""Scale benchmark: the embedded study (configs/scale.yaml, the papers' size with
embedded judges, offline) run from scratch at fractions of its size.

For each fraction f (ascending) the trial set and the corpora it is drawn from are
scaled by f (emotion subset and voices, language clips, pairs per criterion, Study B
items and dialogues; floors keep every split and class populated, so the smallest
fractions are a little larger than f) and the workflow runs in a fresh directory.
Printed per size:
  jobs       job count of the plan (`snakemake -n`, "total")
  dag_s      wall time of that dry run (parse + DAG build + plan); dag_cpu its CPU time
  trials     trial rows planned (lines of results/trials/**/*.jsonl)
  calls      judge calls answered (lines of results/responses/**/*.jsonl)
  wall_s     wall time of the run
  cpu_s      CPU time (user+sys) of the run's whole process tree (RUSAGE_CHILDREN of a
             wrapper that waits for Snakemake, which waits for its jobs): unlike wall
             time it does not grow when other work shares the machine
  judge_s    summed job time of the judge jobs (logs/benchmarks/judge_shards_*/**/*.tsv)
  peak_MiB   peak resident memory of any one process of the run (ru_maxrss of the
             waited-for children: Snakemake or its largest job)
  load       mean 1-min load average sampled every 5 s during the run
then, from the completed sizes only (at least two), the growth exponents b of
wall_s, cpu_s and judge_s ~ calls^b (least squares on log-log), and for sizes not
run (budget cut) or cut by the time budget, projections of wall_s and cpu_s fitted
on the completed sizes against f: a power law (x ~ f^b) and an affine law
(x = fixed + per_f * f). Fixed costs (plan, specialists, report) make b < 1 at small
f, where the affine law is the more faithful; wall time also grows with the load of
other work on the machine (the load column), CPU time does not.
Nothing is assumed: with fewer than two completed sizes no exponent or projection
is printed. A size is not started when its estimate (the projection, or with one
size done, linear in f from it) exceeds the budget left; the cut is printed.

    nice -n 10 python benchmarks/scale.py [--fractions 0.125 0.25 0.5 1]
        [--budget-min 60] [--cores 2] [--keep /tmp/scale] [--plan-only]
    python benchmarks/scale.py --summarize /tmp/scale [/tmp/scale2]   # reprint kept runs
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SMK = str(Path(sys.executable).parent / "snakemake")
# Run one command and print, for its whole waited-for process tree, the peak RSS
# (KiB) of its largest member and the CPU seconds (user+sys). SIGTERM (the budget
# cut, sent to the process group) is caught, not ignored (an ignored signal would be
# inherited by Snakemake), so the wrapper waits for Snakemake to stop its jobs and
# still reports what they used.
RUSAGE = ("import resource, signal, subprocess, sys\n"
          "signal.signal(signal.SIGTERM, lambda *a: None)\n"
          "rc = subprocess.run(sys.argv[1:]).returncode\n"
          "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
          "print('PEAK_KIB', u.ru_maxrss, 'CPU_S', u.ru_utime + u.ru_stime,"
          " file=sys.stderr)\n"
          "sys.exit(rc)\n")


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


class LoadSampler:
    """Mean 1-min load average over a run, sampled every `every` seconds."""

    def __init__(self, every: float = 5.0):
        self.samples: list[float] = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(every,), daemon=True)
        self._thread.start()

    def _loop(self, every: float) -> None:
        while not self._stop.wait(every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self.samples) / len(self.samples)


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
    """Plan fraction f (jobs, DAG build time); run it when timeout_s > 0."""
    work = root / f"f{f:g}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cfg = scaled(base, f)
    (work / "scale.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    t0, c0 = time.perf_counter(), _children_cpu()
    dry = subprocess.run(_smk(work, "-n", "--cores", str(cores)), capture_output=True,
                         text=True, env=env, timeout=1800)
    dag_s, dag_cpu = time.perf_counter() - t0, _children_cpu() - c0
    if dry.returncode != 0:
        raise SystemExit(f"dry run at f={f:g} failed:\n{dry.stdout[-2000:]}{dry.stderr[-2000:]}")
    jobs = int(re.search(r"^total\s+(\d+)$", dry.stdout + dry.stderr, re.M).group(1))
    row = {"fraction": f, "jobs": jobs, "dag_s": dag_s, "dag_cpu_s": dag_cpu,
           "status": "skipped"}
    if timeout_s <= 0:
        return row
    load = LoadSampler()
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
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # Snakemake did not stop: never hang
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        row["status"] = f"cut at {timeout_s:.0f} s"
    row["wall_s"] = time.perf_counter() - t0
    row["load"] = load.stop()
    usage = re.search(r"PEAK_KIB (\d+) CPU_S ([0-9.]+)", err or "")
    row["peak_mib"] = int(usage.group(1)) / 1024 if usage else math.nan
    row["cpu_s"] = float(usage.group(2)) if usage else math.nan
    row["trials"] = _lines(work, "results/trials/**/*.jsonl")
    row["calls"] = _lines(work, "results/responses/**/*.jsonl")
    row["judge_s"] = _judge_seconds(work)
    if row["status"].startswith("failed"):
        print((out or "")[-2000:], (err or "")[-3000:], file=sys.stderr)
    (work / "snakemake.log").write_text((out or "") + (err or ""))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.125, 0.25, 0.5, 1.0])
    ap.add_argument("--budget-min", type=float, default=60.0,
                    help="total wall-time budget; a size whose estimate exceeds what is "
                         "left is planned (jobs, DAG time) but not run")
    ap.add_argument("--plan-only", action="store_true",
                    help="only the plans (jobs, DAG build time) of every size; run nothing")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="work root to keep (else a temp dir)")
    ap.add_argument("--summarize", type=Path, nargs="+", default=None, metavar="ROOT",
                    help="reprint the table and fits of kept runs (ROOT/summary.json; "
                         "several roots: their sizes merged, each row as measured)")
    args = ap.parse_args()
    if args.summarize:
        rows = sorted((r for root in args.summarize
                       for r in json.loads((root / "summary.json").read_text())),
                      key=lambda r: r["fraction"])
        print("\n".join([*map(fmt, rows), *summary(rows)]))
        return

    base = yaml.safe_load((REPO / "configs" / "scale.yaml").read_text())
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    root = args.keep or Path(tempfile.mkdtemp(prefix="judgeaudit-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget_min * 60
    load = os.getloadavg()
    print(f"# benchmarks/scale.py  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  "
          f"cores={args.cores}  nproc={os.cpu_count()}  nice={os.nice(0)}  "
          f"budget={args.budget_min:g} min  "
          f"load(1/5/15 min)={load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}  root={root}",
          flush=True)
    rows: list[dict] = []
    for f in sorted(args.fractions):
        left = 0.0 if args.plan_only else deadline - time.monotonic()
        cut = None
        est = estimate([r for r in rows if r["status"] == "ok"], f)
        if not args.plan_only and est is not None and est[0] > left:
            cut = (f"budget cut: not run, estimated {est[0]:.0f} s ({est[1]}) > "
                   f"{max(left, 0):.0f} s of the {args.budget_min:g} min budget left")
            left = 0.0
        row = run_fraction(f, base, root, args.cores, max(0.0, left), env)
        if cut:
            row["status"] = cut
        elif row["status"] == "skipped" and not args.plan_only:
            row["status"] = "budget cut: not run, no budget left"
        rows.append(row)
        print(fmt(row), flush=True)
        (root / "summary.json").write_text(json.dumps(rows, indent=1))  # after every size
    for line in summary(rows):
        print(line)


def fit(pts: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares line y = a + b x through the points: (a, b), or None."""
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if not sxx:
        return None
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    return my - b * mx, b


def exponent(done: list[dict], x: str, y: str) -> float | None:
    """b of y ~ x^b (log-log least squares) over the completed sizes."""
    ab = fit([(math.log(r[x]), math.log(r[y])) for r in done
              if r[x] > 0 and r[y] > 0 and not math.isnan(r[y])])
    return None if ab is None else ab[1]


def project(done: list[dict], f: float, y: str = "wall_s") -> tuple[float, float] | None:
    """(power-law, affine) projections of y at fraction f, both fitted against f on
    the completed sizes; None with fewer than two."""
    ok = [r for r in done if r[y] > 0 and not math.isnan(r[y])]
    power = fit([(math.log(r["fraction"]), math.log(r[y])) for r in ok])
    affine = fit([(r["fraction"], r[y]) for r in ok])
    if power is None or affine is None:
        return None
    return math.exp(power[0]) * f ** power[1], affine[0] + affine[1] * f


def estimate(done: list[dict], f: float) -> tuple[float, str] | None:
    """Wall time expected at f, only to decide whether to start it: the larger
    projection with two completed sizes, linear in f from the one with one."""
    p = project(done, f)
    if p is not None:
        return max(p), "the larger projection from the completed sizes"
    if done:
        r = done[-1]
        return r["wall_s"] * f / r["fraction"], f"linear in f from f={r['fraction']:g}"
    return None


def summary(rows: list[dict]) -> list[str]:
    done = [r for r in rows if r["status"] == "ok"]
    lines = []
    for y in ("wall_s", "cpu_s", "judge_s"):
        b = exponent(done, "calls", y)
        lines.append(f"growth exponent b ({y} ~ calls^b, {len(done)} completed sizes): "
                     + ("n/a (needs two completed sizes)" if b is None else f"{b:.2f}"))
    c = exponent(done, "fraction", "calls")
    lines.append("calls ~ f^c over the completed sizes: c = "
                 + ("n/a" if c is None else f"{c:.2f}"))
    for r in rows:
        if r["status"] == "ok":
            continue
        parts = []
        for y in ("wall_s", "cpu_s"):
            p = project(done, r["fraction"], y)
            parts.append(f"{y} n/a (needs two completed sizes)" if p is None else
                         f"{y} {p[0]:.0f} s power law / {p[1]:.0f} s affine "
                         f"({p[0] / 60:.1f} / {p[1] / 60:.1f} min)")
        lines.append(f"f={r['fraction']:g}: {r['status']}; projected " + ", ".join(parts))
    return lines


def fmt(r: dict) -> str:
    head = (f"f={r['fraction']:<8g} jobs={r['jobs']:<4d} dag_s={r['dag_s']:<5.1f} "
            f"dag_cpu={r['dag_cpu_s']:<5.1f}")
    if "wall_s" not in r:
        return f"{head} ({'--plan-only' if r['status'] == 'skipped' else r['status']})"
    return (f"{head} trials={r['trials']:<6d} calls={r['calls']:<7d} "
            f"wall_s={r['wall_s']:<7.1f} cpu_s={r['cpu_s']:<7.1f} judge_s={r['judge_s']:<7.1f} "
            f"peak_MiB={r['peak_mib']:<5.0f} load={r['load']:<4.1f} {r['status']}")


if __name__ == "__main__":
    main()
