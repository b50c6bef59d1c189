"""CPU of the `report_trace` jobs: two source trees side by side, outputs compared.

    python benchmarks/trace_cpu.py --root RUN [--before /tmp/old/src | --before-rev main]
        [--after src] [--table study_a_planted ...] [--rounds N] [--profile]

RUN is a finished workflow root (e.g. a copy of a default run: its tables, records,
trials, responses and audio store). For every table (default: every
`results/report_traces/*.pickle` of RUN), and for each of the two trees in turn
(before, then after, so both meet the same machine load), one fresh interpreter runs
what `scripts/report_trace.py` runs (`cellpages.write_traces` of the table, then
`encode_cited_audio`; with RUN's store filled, it encodes nothing) with `PYTHONPATH`
set to that tree, RUN as its working directory and BLAS on one thread (as Snakemake
runs the `threads: 1` rule); its CPU (user + system, from
`os.wait4`) is the job's cost without Snakemake's start-up. Prints per table the CPU
of each (the best of `--rounds`), the ratio after / before, and whether the two trees'
trace files are byte-identical (and identical to RUN's own). Exits 1 on any
difference. `--profile` runs the after tree once per table under cProfile instead and
prints the top functions by cumulative time.

Measured (issue 36, branch htrace against main, on a copy of a default run of b71d18a,
a shared 2-core machine; CPU s of the job's work, no Snakemake start-up, no encoding):
all 20 tables 266.8 -> 143.7 (0.54x); study_a_contrasts 36.0 -> 16.7, study_a_planted
19.4 -> 12.9, study_b_protocol_gap 6.7 -> 2.9, study_b_state_distribution 40.6 -> 6.8;
every trace file byte-identical to main's and to the run's own.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# the body of scripts/report_trace.py without the Snakemake object
CHILD = """
import sys
from judgeaudit.report.cellpages import encode_cited_audio, write_traces
table, out = sys.argv[1], sys.argv[2]
traces = write_traces(table, out)
encode_cited_audio(traces, order=table)
"""

PROFILE = """
import cProfile, pstats, sys
from judgeaudit.report.cellpages import encode_cited_audio, write_traces
table, out = sys.argv[1], sys.argv[2]
prof = cProfile.Profile()
prof.enable()
traces = write_traces(table, out)
encode_cited_audio(traces, order=table)
prof.disable()
st = pstats.Stats(prof)
st.sort_stats("cumulative").print_stats(45)
st.sort_stats("tottime").print_stats(25)
"""


# what Snakemake sets for a `threads: 1` job such as report_trace: BLAS on one thread
# (OpenBLAS' results differ in the last bits with its thread count, judgeaudit.blas)
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                               "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                               "NUMEXPR_NUM_THREADS")}


def run(src: Path, root: Path, table: str, out: Path, code: str = CHILD) -> float:
    """CPU seconds (user + system) of one child interpreter running `code` in `root`."""
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(src)}
    proc = subprocess.Popen([sys.executable, "-c", code, table, str(out)], env=env, cwd=root)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{src}: child failed on {table}")
    return usage.ru_utime + usage.ru_stime


def checkout(rev: str, into: Path) -> Path:
    """src/ of git revision `rev` unpacked under `into`."""
    tar = into / "src.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(tar), rev, "src"], check=True)
    with tarfile.open(tar) as fh:
        fh.extractall(into, filter="data")
    return into / "src"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True, help="a finished workflow root")
    ap.add_argument("--before", type=Path, help="src/ of the old tree")
    ap.add_argument("--before-rev", default="main", help="git revision of the old tree "
                    "(when --before is not given)")
    ap.add_argument("--after", type=Path, default=REPO / "src", help="src/ of the new tree")
    ap.add_argument("--table", action="append", help="table stem (repeatable)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    root = args.root.resolve()
    stems = args.table or sorted(p.name.removesuffix(".pickle") for p in
                                 (root / "results/report_traces").glob("*.pickle"))
    tables = {s: f"results/tables/{s}" + ("" if s.endswith(".tsv") else ".tsv")
              for s in stems}
    with tempfile.TemporaryDirectory(prefix="trace_cpu_") as tmp:
        tmp = Path(tmp)
        if args.profile:
            for stem, tsv in tables.items():
                print(f"=== {stem}", flush=True)
                run(args.after.resolve(), root, tsv, tmp / "p.pickle", PROFILE)
            return
        before = args.before.resolve() if args.before else checkout(args.before_rev, tmp)
        trees = {"before": before, "after": args.after.resolve()}
        bad = 0
        print(f"{'table':34} {'before s':>9} {'after s':>9} {'ratio':>6}  identical")
        tot = {"before": 0.0, "after": 0.0}
        for stem, tsv in tables.items():
            cpu: dict[str, float] = {}
            outs = {}
            for _ in range(args.rounds):
                for name, src in trees.items():
                    outs[name] = tmp / f"{name}.{Path(tsv).stem}.pickle"
                    s = run(src, root, tsv, outs[name])
                    cpu[name] = min(cpu.get(name, s), s)
            same = filecmp.cmp(outs["before"], outs["after"], shallow=False)
            own = root / "results/report_traces" / f"{Path(tsv).stem}.pickle"
            if own.is_file():
                same = same and filecmp.cmp(own, outs["after"], shallow=False)
            bad += not same
            tot = {k: tot[k] + cpu[k] for k in tot}
            print(f"{stem:34} {cpu['before']:9.2f} {cpu['after']:9.2f} "
                  f"{cpu['after'] / cpu['before']:6.3f}  {'yes' if same else 'NO'}", flush=True)
        print(f"{'total':34} {tot['before']:9.2f} {tot['after']:9.2f} "
              f"{tot['after'] / tot['before']:6.3f}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
