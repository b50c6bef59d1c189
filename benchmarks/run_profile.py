"""Profile of one default run (issue 25): where the wall time of the study goes.

Runs the default study in a workflow directory (a clone of the repo with its `.venv`)
from one state, or analyses a run directory that already finished, and prints, one
column per directory (before/after side by side, with their ratio):

  wall_s        wall time of the run (measured around Snakemake; for an analysed
                run, first to last timestamp of its Snakemake log)
  jobs          jobs Snakemake executed (its log's "Finished jobid" lines)
  cpu_s         summed `cpu_time` of the jobs' benchmark files (logs/benchmarks/<rule>/
                <wildcards>.tsv). Snakemake samples each job's process tree (every 1 s
                for the first 30 s, then every 30 s), so short-lived children and a
                job's last seconds are missed: a lower bound
  tree_cpu_s    user+sys CPU of the whole waited-for process tree (Snakemake itself,
                its jobs and their children): RUSAGE_CHILDREN of this script in run
                mode, `/usr/bin/time -v` output (--time-log) for an analysed run
  critical_s    the longest chain of dependent jobs through the DAG, weighted by each
                job's measured duration (its log's start and "Finished" lines; edges:
                a job's input is another job's output): no number of cores runs the
                study faster than this
  smk_cpu_s     user+sys CPU of the Snakemake process itself (DAG, scheduling,
                checksums, metadata; sampled from /proc/<pid>/stat in run mode)
  packing       tree_cpu_s / (wall_s x cores): how full the cores were kept (1 = always
                busy), by the kernel's count of every process of the run; cpu_s when no
                tree CPU was measured
  packing_jobs  (tree_cpu_s - smk_cpu_s) / (wall_s x cores): the same without
                Snakemake's own CPU (the jobs' work, their start-up and children)
  packing_bench cpu_s / (wall_s x cores): from the benchmark files (a lower bound)
  load          1-min load average of the machine at the start (and mean during the
                run): other work inflates wall_s but not cpu_s
  calib_s       the machine calibration: CPU seconds of a fixed reference workload
                (a pure-Python loop of 10 M additions at module level, best of three;
                issue 36's slow
                2-core machine: 1.58 s) measured at the start of a `run` (recorded) or
                when analysing a run that recorded none (marked "now"); printed beside
                every measurement, so times scale to another machine
  cpu_calib     cpu_s / calib_s, critical_calib critical_s / calib_s: the run's
                work in units of the reference workload (comparable across machines)
then per rule: jobs, summed CPU, the measured fixed overhead of one job (interpreter
start, Snakemake's script preamble, the script's module-level imports; `python -X
importtime`, its heaviest import named) times the job count, and the rest (work);
the critical path's jobs; and the ten jobs with the most CPU.

`analyse DIR --state S` profiles the run a `run --state S` recorded in
DIR/logs/profile/S.json (its Snakemake log), not DIR's newest run; a job re-run since
has its newer benchmark file.

States (mode `run`; DIR is a clone with `.venv`; it is modified):
  cold   results, figures, generated data, logs, cache and .snakemake removed
  warm   as cold, but the judge cache (cache/) kept
  noop   on a finished run: `snakemake -n` (timed three times, median) and a real
         no-op `snakemake`; both must plan 0 jobs
  edit   one config value changed (--edit key.path=VALUE, YAML value; written to
         logs/profile/edit_config.yaml and passed as --configfile): the dry run's job
         count per rule, then the real run; the run is left at the edited config

Usage (exact):
  python benchmarks/run_profile.py analyse DIR [DIR2] [--cores N]
      [--time-log FILE [FILE2]] [--load-log FILE] [--no-overhead] [--state S]
  python benchmarks/run_profile.py run DIR --state {cold,warm,noop,edit}
      [--edit KEY=VALUE] [--cores N] [--compare DIR2] [--no-overhead]

`analyse` reads only: it never runs Snakemake in DIR (the overhead column runs
`python -c <imports>` with DIR's .venv and src/). --time-log is the log holding
`/usr/bin/time -v` output of the run (one per DIR); --load-log a file of lines
"<epoch> <load1> <load5> <load15>" sampled during the run(s). A `run` writes its
measurements to DIR/logs/profile/<state>.json, which a later `analyse` prints too.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

STATES = ("cold", "warm", "noop", "edit")
DEFAULT_EDIT = "validation.coverage_band=[0.92, 0.97]"
# Snakemake's script preamble (snakemake/script/__init__.py PythonScript): every
# `script:` job unpickles its Snakemake object and imports these.
PREAMBLE = "import pickle; import snakemake.iocontainers; import snakemake.logging"

_STAMP = re.compile(r"^\[(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?rule (\S+):$")
_FIELD = re.compile(r"^\s+(input|output|jobid|benchmark|wildcards|log): (.*)$")
_FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\S+)\)")
_CORES = re.compile(r"^Provided cores: (\d+)")
CALIB_N = 10_000_000
#: issue 36's slow 2-core machine (the README's times scale by calib_s / this)
CALIB_REFERENCE_S = 1.58


def calibrate(n: int = CALIB_N, tries: int = 3) -> float:
    """CPU seconds of the reference workload: `s = 0; for i in range(n): s += i` at
    module level (global names, as `python -c` runs it), the least of `tries` (CPU
    time, so other work on the machine inflates it little)."""
    code = compile(f"s = 0\nfor i in range({int(n)}):\n    s += i\n", "<calibration>", "exec")
    best = float("inf")
    for _ in range(tries):
        t0 = time.process_time()
        exec(code, {})  # noqa: S102 - a fixed loop, the reference workload
        best = min(best, time.process_time() - t0)
    return best


_NOW: list[float] = []


def calibration_now() -> float:
    """This machine's calibration, measured once per process."""
    if not _NOW:
        _NOW.append(calibrate())
    return _NOW[0]


@dataclass
class Job:
    jobid: int
    rule: str
    start: float
    end: float | None = None
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    benchmark: str | None = None
    wildcards: str = ""
    cpu: float = 0.0
    bench_s: float | None = None

    @property
    def duration(self) -> float:
        return 0.0 if self.end is None else max(0.0, self.end - self.start)

    @property
    def label(self) -> str:
        return f"{self.rule}[{self.wildcards}]" if self.wildcards else self.rule


def _epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y").timestamp()


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(", ") if v.strip()]


# ------------------------------------------------------------------ reading a run
def snakemake_logs(run: Path) -> list[Path]:
    return sorted((run / ".snakemake" / "log").glob("*.snakemake.log"))


def parse_log(path: Path) -> tuple[dict[int, Job], int | None, float | None, float | None]:
    """Jobs of one Snakemake log (start, end, inputs, outputs, benchmark), the cores
    it was given and its first and last timestamps."""
    jobs: dict[int, Job] = {}
    cores = None
    first = last = None
    stamp = None
    current: Job | None = None
    for line in path.read_text(errors="replace").splitlines():
        if m := _STAMP.match(line):
            stamp = _epoch(m.group(1))
            first = stamp if first is None else first
            last = stamp
            current = None
            continue
        if m := _CORES.match(line):
            cores = int(m.group(1))
        elif (m := _RULE.match(line)) and stamp is not None:
            current = Job(jobid=-1, rule=m.group(1), start=stamp)
        elif current is not None and (m := _FIELD.match(line)):
            key, value = m.groups()
            if key == "jobid":
                current.jobid = int(value)
                jobs[current.jobid] = current
            elif key == "input":
                current.inputs = _split(value)
            elif key == "output":
                current.outputs = _split(value)
            elif key == "benchmark":
                current.benchmark = value.strip()
            elif key == "wildcards":
                current.wildcards = value.strip()
        elif (m := _FINISHED.match(line)) and stamp is not None:
            job = jobs.get(int(m.group(1)))
            if job is not None:
                job.end = stamp
    if line_m := re.search(r"Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", path.read_text()[:2000]):
        first = datetime.strptime(line_m.group(1), "%Y-%m-%d %H:%M:%S").timestamp()
    return jobs, cores, first, last


def run_log(run: Path) -> Path | None:
    """The newest Snakemake log of DIR that finished at least one job."""
    for path in reversed(snakemake_logs(run)):
        if "Finished jobid" in path.read_text(errors="replace"):
            return path
    return None


def read_benchmark(path: Path) -> tuple[float, float] | None:
    """(s, cpu_time) of a benchmark file's last row; None when absent or NA."""
    try:
        with path.open() as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
    except OSError:
        return None
    if not rows:
        return None
    try:
        return float(rows[-1]["s"]), float(rows[-1]["cpu_time"])
    except (KeyError, ValueError):
        return None


def critical_path(jobs: dict[int, Job]) -> tuple[float, list[Job]]:
    """Longest duration-weighted chain of the DAG the log's inputs/outputs define."""
    producer: dict[str, int] = {}
    for job in jobs.values():
        for out in job.outputs:
            producer[out.rstrip("/")] = job.jobid
    dirs = sorted(producer, key=len, reverse=True)

    def deps(job: Job) -> set[int]:
        found = set()
        for path in job.inputs:
            p = path.rstrip("/")
            if p in producer:
                found.add(producer[p])
                continue
            for d in dirs:  # a file inside a directory() output
                if p.startswith(d + "/"):
                    found.add(producer[d])
                    break
        found.discard(job.jobid)
        return found

    parents = {j.jobid: deps(j) for j in jobs.values()}
    # jobid -> ((length s, jobs on the chain), the parent the chain comes through);
    # ties (1-s log resolution) go to the longer chain of jobs
    memo: dict[int, tuple[tuple[float, int], int | None]] = {}

    def longest(jid: int) -> tuple[float, int]:
        if jid in memo:
            return memo[jid][0]
        best, via = (0.0, 0), None
        for p in sorted(parents[jid]):
            if p in jobs and (v := longest(p)) > best:
                best, via = v, p
        memo[jid] = ((best[0] + jobs[jid].duration, best[1] + 1), via)
        return memo[jid][0]

    sys.setrecursionlimit(max(10000, 4 * len(jobs)))
    if not jobs:
        return 0.0, []
    end = max(sorted(jobs), key=longest)
    chain = []
    cur: int | None = end
    while cur is not None:
        chain.append(jobs[cur])
        cur = memo[cur][1]
    return memo[end][0][0], chain[::-1]


def parse_time_log(path: Path) -> dict:
    """`/usr/bin/time -v` figures (the last block of the file)."""
    text = path.read_text(errors="replace")
    out = {}
    for key, pat in {
        "user": r"User time \(seconds\): ([\d.]+)",
        "sys": r"System time \(seconds\): ([\d.]+)",
        "max_rss_kb": r"Maximum resident set size \(kbytes\): (\d+)",
        "elapsed": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)",
    }.items():
        found = re.findall(pat, text)
        if found:
            out[key] = found[-1]
    if "user" in out and "sys" in out:
        out["tree_cpu_s"] = float(out["user"]) + float(out["sys"])
    if "elapsed" in out:
        secs = 0.0
        for part in out["elapsed"].split(":"):
            secs = secs * 60 + float(part)
        out["elapsed_s"] = secs
    return out


def load_samples(path: Path, start: float, end: float) -> list[float]:
    vals = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            try:
                t, l1 = float(parts[0]), float(parts[1])
            except ValueError:
                continue
            if start <= t <= end:
                vals.append(l1)
    return vals


# ------------------------------------------------------------------ fixed overhead
def rule_scripts(run: Path) -> dict[str, str]:
    """rule name -> scripts/<file> it runs: from Snakemake's metadata records
    (.snakemake/metadata: each output's rule and `code`, the script: path), else
    from the rule files (named rules only; rules named in a loop need metadata)."""
    mapping: dict[str, str] = {}
    meta = run / ".snakemake" / "metadata"
    for rec in sorted(meta.iterdir()) if meta.is_dir() else []:
        try:
            data = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        rule, code = data.get("rule"), data.get("code") or ""
        if rule and rule not in mapping and (m := re.search(r"scripts/([\w.]+\.py)", code)):
            mapping[rule] = m.group(1)
    for smk in [run / "Snakefile", *sorted((run / "rules").glob("*.smk"))]:
        rule = None
        for line in smk.read_text().splitlines():
            if m := re.match(r"^\s*(?:rule|checkpoint) ?(\w*):", line):
                rule = m.group(1) or None  # `rule:` + `name:` in a loop: unknown here
            elif rule and (m := re.search(r'"\.\./scripts/([\w.]+\.py)"', line)):
                mapping.setdefault(rule, m.group(1))
    return mapping


def script_imports(path: Path) -> str:
    """The module-level import statements of a script, as one line of Python."""
    tree = ast.parse(path.read_text())
    stmts = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
             and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    return "; ".join(stmts) or "pass"


def timed_python(run: Path, code: str, importtime: bool = False) -> tuple[float, float, str]:
    """(wall, cpu) of `python -c code` with DIR's interpreter and src/, and its stderr."""
    python = run / ".venv" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(run / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([str(python), *(["-X", "importtime"] if importtime else []), "-c", code],
                          cwd=run, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        raise RuntimeError(f"python -c {code!r} failed in {run}: {proc.stderr[-400:]}")
    return wall, cpu, proc.stderr


def heaviest_imports(stderr: str, n: int = 2) -> list[tuple[str, float]]:
    """Top-level packages with the largest cumulative `-X importtime` (seconds)."""
    tops = []
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", line)
        if m and len(m.group(2)) <= 1:  # depth 0 (one space after the bar)
            tops.append((m.group(3), int(m.group(1)) / 1e6))
    return sorted(tops, key=lambda x: -x[1])[:n]


def overheads(run: Path, rules: set[str]) -> dict[str, dict]:
    """Per rule: CPU seconds of one job's start-up (interpreter + preamble + the
    script's module-level imports), the best of two tries, and its heaviest imports."""
    scripts = rule_scripts(run)
    out: dict[str, dict] = {}
    cache: dict[str, dict] = {}
    for rule in sorted(rules):
        script = scripts.get(rule)
        if script is None or not (run / "scripts" / script).exists():
            continue
        if script not in cache:
            code = PREAMBLE + "; " + script_imports(run / "scripts" / script)
            tries = [timed_python(run, code, importtime=True) for _ in range(2)]
            wall, cpu, err = min(tries, key=lambda t: t[1])
            cache[script] = {"script": script, "wall": wall, "cpu": cpu,
                             "heaviest": heaviest_imports(err)}
        out[rule] = cache[script]
    return out


# ------------------------------------------------------------------ one run's profile
def profile(run: Path, cores: int | None = None, time_log: Path | None = None,
            load_log: Path | None = None, with_overhead: bool = True,
            state: str | None = None) -> dict:
    run = run.resolve()
    log = run_log(run)
    if state is not None:
        rec_path = run / "logs" / "profile" / f"{state}.json"
        if not rec_path.is_file():
            raise SystemExit(f"{rec_path}: no `run --state {state}` recorded in {run}")
        log = Path(json.loads(rec_path.read_text())["log"])
    prof: dict = {"dir": str(run), "log": str(log) if log else None}
    jobs: dict[int, Job] = {}
    first = last = None
    if log is not None:
        jobs, log_cores, first, last = parse_log(log)
        cores = cores or log_cores
    for job in jobs.values():
        if job.benchmark:
            got = read_benchmark(run / job.benchmark)
            if got:
                job.bench_s, job.cpu = got
    prof["cores"] = cores or os.cpu_count()
    prof["jobs"] = sum(1 for j in jobs.values() if j.end is not None)
    prof["wall_s"] = (last - first) if (first is not None and last is not None) else None
    prof["cpu_s"] = sum(j.cpu for j in jobs.values())
    prof["critical_s"], chain = critical_path(jobs)
    prof["critical_chain"] = [(j.label, j.duration, j.cpu) for j in chain]
    recorded = {}
    for rec in sorted((run / "logs" / "profile").glob("*.json")):
        data = json.loads(rec.read_text())
        if data.get("log") == prof["log"] or (data.get("state") in ("noop",)):
            recorded[data["state"]] = data
    prof["recorded"] = recorded
    run_rec = next((r for r in recorded.values() if r.get("log") == prof["log"]), None)
    if run_rec:
        prof["wall_s"] = run_rec["wall_s"]
        prof["tree_cpu_s"] = run_rec["tree_cpu_s"]
        prof["smk_cpu_s"] = run_rec.get("smk_cpu_s")
        prof["load_start"] = run_rec["load_start"]
        prof["load_mean"] = run_rec.get("load_mean")
        prof["state"] = run_rec["state"]
        prof["calib_s"] = run_rec.get("calib_s")
    if prof.get("calib_s") is None:
        prof["calib_s"], prof["calib_now"] = calibration_now(), True
    for key in ("cpu_s", "critical_s"):
        prof[key.replace("_s", "_calib")] = (prof[key] / prof["calib_s"]
                                              if prof.get(key) and prof["calib_s"] else None)
    if time_log is not None:
        t = parse_time_log(time_log)
        prof["tree_cpu_s"] = t.get("tree_cpu_s")
        if t.get("elapsed_s"):
            prof["wall_s"] = t["elapsed_s"]
    if load_log is not None and first is not None:
        vals = load_samples(load_log, first - 30, last)
        if vals:
            prof["load_start"], prof["load_mean"] = vals[0], statistics.fmean(vals)
    wall = prof["wall_s"]
    span = wall * prof["cores"] if wall else None
    tree, own = prof.get("tree_cpu_s"), prof.get("smk_cpu_s")
    prof["packing_bench"] = prof["cpu_s"] / span if span else None
    prof["packing"] = (tree if tree else prof["cpu_s"]) / span if span else None
    prof["packing_jobs"] = (tree - own) / span if span and tree and own is not None else None
    by_rule: dict[str, dict] = {}
    for job in jobs.values():
        if job.end is None:
            continue
        r = by_rule.setdefault(job.rule, {"jobs": 0, "cpu": 0.0, "dur": 0.0})
        r["jobs"] += 1
        r["cpu"] += job.cpu
        r["dur"] += job.duration
    if with_overhead and by_rule:
        for rule, oh in overheads(run, set(by_rule)).items():
            by_rule[rule]["oh1"] = oh["cpu"]
            by_rule[rule]["heaviest"] = oh["heaviest"]
    prof["rules"] = by_rule
    prof["top"] = [(j.label, j.cpu, j.duration)
                   for j in sorted(jobs.values(), key=lambda j: -j.cpu)[:10]]
    return prof


# ------------------------------------------------------------------ printing
def _fmt(v, digits=1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _calib_text(p: dict) -> str:
    c = p.get("calib_s")
    if c is None:
        return "calibration -"
    when = "measured now" if p.get("calib_now") else "at the run's start"
    return (f"calibration {c:.2f} s CPU per {CALIB_N // 1_000_000} M pure-Python additions "
            f"({when}; x{c / CALIB_REFERENCE_S:.2f} of the {CALIB_REFERENCE_S} s machine)")


def print_side_by_side(profs: list[dict], out=None) -> None:
    out = out or sys.stdout
    names = [Path(p["dir"]).name or p["dir"] for p in profs]
    w = max(14, *(len(n) + 2 for n in names))
    head = f"{'':14s}" + "".join(f"{n:>{w}s}" for n in names)
    if len(profs) == 2:
        head += f"{'ratio':>10s}"
    print(head, file=out)
    rows = [("state", 0), ("wall_s", 1), ("jobs", 0), ("cpu_s", 1), ("tree_cpu_s", 1),
            ("smk_cpu_s", 1), ("critical_s", 1), ("packing", 2), ("packing_jobs", 2),
            ("packing_bench", 2), ("cores", 0), ("load_start", 2), ("load_mean", 2),
            ("calib_s", 2), ("cpu_calib", 0), ("critical_calib", 0)]
    for key, d in rows:
        vals = [p.get(key) for p in profs]
        line = f"{key:14s}" + "".join(f"{_fmt(v, d):>{w}s}" for v in vals)
        if len(profs) == 2 and all(isinstance(v, int | float) and v for v in vals):
            line += f"{vals[1] / vals[0]:>10.2f}"
        print(line, file=out)
    for p, name in zip(profs, names, strict=True):
        print(f"[{name}] {_calib_text(p)}", file=out)
    for p, name in zip(profs, names, strict=True):
        for state, rec in sorted(p.get("recorded", {}).items()):
            if state == "noop":
                print(f"[{name}] noop: dry run {rec['dry_s']:.2f} s (CPU {rec['dry_cpu_s']:.2f} s, "
                      f"runs {rec['dry_runs']}), real no-op {rec['wall_s']:.2f} s, "
                      f"jobs planned {rec['jobs_planned']}, load {rec['load_start']:.2f}, "
                      f"calibration {_fmt(rec.get('calib_s'), 2)} s",
                      file=out)
            if state == "edit":
                print(f"[{name}] edit {rec['edit']}: {rec['jobs_planned']} jobs planned "
                      f"({', '.join(f'{k} {v}' for k, v in sorted(rec['planned_by_rule'].items()))})",
                      file=out)
    for p, name in zip(profs, names, strict=True):
        print(f"\n== {name}: per rule (CPU s; overhead = one job's start-up CPU x jobs; "
              f"{_calib_text(p)}) ==", file=out)
        print(f"{'rule':34s}{'jobs':>5s}{'cpu':>9s}{'job_s':>9s}{'start1':>8s}"
              f"{'overhead':>10s}{'work':>9s}  heaviest imports", file=out)
        for rule, r in sorted(p["rules"].items(), key=lambda x: -x[1]["cpu"]):
            oh1 = r.get("oh1")
            oh = oh1 * r["jobs"] if oh1 is not None else None
            work = (r["cpu"] - oh) if oh is not None else None
            heavy = ", ".join(f"{m} {s:.2f}s" for m, s in r.get("heaviest", []))
            print(f"{rule:34s}{r['jobs']:5d}{r['cpu']:9.1f}{r['dur']:9.1f}{_fmt(oh1, 2):>8s}"
                  f"{_fmt(oh):>10s}{_fmt(work):>9s}  {heavy}", file=out)
        tot_oh = sum(r.get("oh1", 0) * r["jobs"] for r in p["rules"].values())
        print(f"{'total':34s}{sum(r['jobs'] for r in p['rules'].values()):5d}"
              f"{p['cpu_s']:9.1f}{'':17s}{tot_oh:10.1f}{p['cpu_s'] - tot_oh:9.1f}", file=out)
        print(f"\n== {name}: critical path ({p['critical_s']:.0f} s; job wall s, CPU s; "
              f"{_calib_text(p)}) ==", file=out)
        for label, dur, cpu in p["critical_chain"]:
            print(f"  {dur:8.1f} {cpu:8.1f}  {label}", file=out)
        print(f"\n== {name}: top ten jobs by CPU (CPU s, job wall s; {_calib_text(p)}) ==",
              file=out)
        for label, cpu, dur in p["top"]:
            print(f"  {cpu:8.1f} {dur:8.1f}  {label}", file=out)


# ------------------------------------------------------------------ running a state
def _snakemake(run: Path) -> str:
    return str(run / ".venv" / "bin" / "snakemake")


def _env(run: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(run / "src")}


class LoadSampler(threading.Thread):
    def __init__(self, every: float = 5.0):
        super().__init__(daemon=True)
        self.every, self.samples, self._stop = every, [], threading.Event()

    def run(self):
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(self.every)

    def stop(self) -> float | None:
        self._stop.set()
        return statistics.fmean(self.samples) if self.samples else None


def _self_cpu(pid: int) -> float | None:
    """utime + stime (s) of one live process, its children not counted (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(cmd: list[str], run: Path, log_to: Path | None = None,
          own: dict | None = None) -> tuple[float, float, str]:
    """(wall, tree CPU, stdout+stderr) of one command (its waited-for process tree);
    `own["smk_cpu_s"]`: the command's own CPU, children excluded (its last sample, every
    0.2 s, before it exits)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as sink:
        proc = subprocess.Popen(cmd, cwd=run, env=_env(run), stdout=sink,
                                stderr=subprocess.STDOUT, text=True)
        samples: list[float] = []
        done = threading.Event()

        def sample() -> None:  # beside the wait, so the wall time is not rounded up
            while not done.is_set():
                if (v := _self_cpu(proc.pid)) is not None:
                    samples.append(v)
                done.wait(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        proc.wait()
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        last = samples[-1] if samples else None
        sink.seek(0)
        text = sink.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if own is not None:
        own["smk_cpu_s"] = last
    if log_to is not None:
        log_to.parent.mkdir(parents=True, exist_ok=True)
        log_to.write_text(text)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}) in {run}:\n"
                         f"{text[-3000:]}")
    return wall, cpu, text


def planned(text: str) -> tuple[int, dict[str, int]]:
    """Job count and per-rule counts of a dry run's "Job stats" table."""
    by_rule = {}
    total = 0
    in_stats = False
    for line in text.splitlines():
        if line.startswith("Job stats:"):
            in_stats, by_rule = True, {}
            continue
        if in_stats:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                if parts[0] == "total":
                    total, in_stats = int(parts[1]), False
                else:
                    by_rule[parts[0]] = int(parts[1])
    return total, by_rule


def clean(run: Path, keep_cache: bool) -> None:
    """Remove what a run makes (untracked files under data/, results/, figures/;
    logs/ but logs/profile; .snakemake/; cache/ unless keep_cache)."""
    tracked = set(subprocess.run(["git", "ls-files"], cwd=run, capture_output=True,
                                 text=True, check=True).stdout.split())
    for top in ("data", "results", "figures"):
        for child in (run / top).glob("*") if (run / top).exists() else []:
            rel = str(child.relative_to(run))
            if rel in tracked:
                continue
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for child in (run / "logs").glob("*") if (run / "logs").exists() else []:
        if child.name != "profile":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.rmtree(run / ".snakemake", ignore_errors=True)
    if not keep_cache:
        cache = yaml.safe_load((run / "config.yaml").read_text()).get("cache_dir", "cache")
        shutil.rmtree(run / cache, ignore_errors=True)


def edit_overlay(run: Path, edit: str) -> Path:
    key, _, value = edit.partition("=")
    if not key or not _:
        raise SystemExit(f"--edit wants KEY.PATH=VALUE, got {edit!r}")
    node: dict = {}
    overlay = node
    parts = key.split(".")
    for part in parts[:-1]:
        node[part] = {}
        node = node[part]
    node[parts[-1]] = yaml.safe_load(value)
    path = run / "logs" / "profile" / "edit_config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(overlay, sort_keys=True))
    return path


def run_state(run: Path, state: str, cores: int, edit: str | None) -> dict:
    run = run.resolve()
    smk = [_snakemake(run), "--cores", str(cores)]
    out_dir = run / "logs" / "profile"
    rec: dict = {"state": state, "cores": cores, "load_start": os.getloadavg()[0],
                 "calib_s": calibrate(), "started": time.time()}
    sampler = LoadSampler()
    sampler.start()
    if state in ("cold", "warm"):
        clean(run, keep_cache=(state == "warm"))
        wall, cpu, _ = timed(smk, run, out_dir / f"{state}.out", own=rec)
        rec.update(wall_s=wall, tree_cpu_s=cpu)
    elif state == "noop":
        dry = [timed([*smk, "-n"], run) for _ in range(3)]
        rec["dry_runs"] = [round(d[0], 2) for d in dry]
        rec["dry_s"] = statistics.median(d[0] for d in dry)
        rec["dry_cpu_s"] = statistics.median(d[1] for d in dry)
        rec["jobs_planned"], rec["planned_by_rule"] = planned(dry[0][2])
        if "Nothing to be done" in dry[0][2]:
            rec["jobs_planned"] = 0
        wall, cpu, text = timed(smk, run, out_dir / "noop.out")
        rec.update(wall_s=wall, tree_cpu_s=cpu)
    elif state == "edit":
        edit = edit or DEFAULT_EDIT
        overlay = edit_overlay(run, edit)
        rec["edit"] = edit
        cmd = [*smk, "--configfile", "config.yaml", str(overlay.relative_to(run))]
        _, _, text = timed([*cmd, "-n"], run)
        rec["jobs_planned"], rec["planned_by_rule"] = planned(text)
        wall, cpu, _ = timed(cmd, run, out_dir / "edit.out", own=rec)
        rec.update(wall_s=wall, tree_cpu_s=cpu)
    else:
        raise SystemExit(f"unknown state {state!r}; one of {', '.join(STATES)}")
    rec["load_mean"] = sampler.stop()
    rec["calib_end_s"] = calibrate()
    log = run_log(run) if state != "noop" else None
    rec["log"] = str(log) if log else None
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{state}.json").write_text(json.dumps(rec, indent=1, sort_keys=True))
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python benchmarks/run_profile.py",
        description=__doc__.split("\n\n")[0],
        epilog=("usage (exact):\n"
                "  python benchmarks/run_profile.py analyse DIR [DIR2] [--cores N] "
                "[--time-log FILE [FILE2]] [--load-log FILE] [--no-overhead] [--state S]\n"
                "  python benchmarks/run_profile.py run DIR --state {cold,warm,noop,edit} "
                "[--edit KEY=VALUE] [--cores N] [--compare DIR2] [--no-overhead]"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    an = sub.add_parser("analyse", help="profile finished run directories (reads only)")
    an.add_argument("dirs", nargs="+", metavar="DIR", help="one or two run directories")
    an.add_argument("--cores", type=int, default=None)
    an.add_argument("--time-log", nargs="+", type=Path, default=None,
                    help="file(s) holding `/usr/bin/time -v` output, one per DIR")
    an.add_argument("--load-log", type=Path, default=None,
                    help='file of "<epoch> <load1> ..." lines sampled during the run(s)')
    an.add_argument("--no-overhead", action="store_true",
                    help="skip measuring each script's start-up")
    an.add_argument("--state", choices=STATES, default=None,
                    help="profile the run `run --state STATE` recorded (default: the newest)")
    rn = sub.add_parser("run", help="run the default study from a state, then profile it")
    rn.add_argument("dir", metavar="DIR", help="a clone of the repo with its .venv")
    rn.add_argument("--state", choices=STATES, required=True)
    rn.add_argument("--edit", default=None, help=f"KEY.PATH=VALUE (default {DEFAULT_EDIT})")
    rn.add_argument("--cores", type=int, default=os.cpu_count())
    rn.add_argument("--compare", default=None, metavar="DIR2",
                    help="print this finished run's profile beside (before) the new one")
    rn.add_argument("--no-overhead", action="store_true")
    args = ap.parse_args(argv)
    if args.mode == "analyse":
        if len(args.dirs) > 2:
            ap.error("analyse takes one or two directories")
        tlogs = args.time_log or []
        if tlogs and len(tlogs) != len(args.dirs):
            ap.error("--time-log takes one file per DIR")
        profs = [profile(Path(d), args.cores, tlogs[i] if tlogs else None, args.load_log,
                         not args.no_overhead, args.state) for i, d in enumerate(args.dirs)]
    else:
        rec = run_state(Path(args.dir), args.state, args.cores, args.edit)
        print(json.dumps({k: v for k, v in rec.items() if k != "planned_by_rule"}),
              file=sys.stderr)
        profs = [profile(Path(args.dir), args.cores, None, None, not args.no_overhead)]
        if args.compare:
            # the before run's own run of the same state, where it recorded one
            recorded = (Path(args.compare) / "logs" / "profile" / f"{args.state}.json").is_file()
            profs.insert(0, profile(Path(args.compare), args.cores, None, None,
                                    not args.no_overhead, args.state if recorded else None))
    print_side_by_side(profs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
