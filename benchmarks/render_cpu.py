"""CPU of the `study_b_render` jobs: two source trees side by side, outputs compared.

    python benchmarks/render_cpu.py --before /tmp/old/src [--after src] [--run DIR]
        [--task NAME ...] [--repeats N] [--reference] [--keep DIR]

For every Study B task of the config (`--run`'s config.yaml, default this repository's),
and for each of the two trees in turn (before, then after, so both meet the same
machine load; with `--repeats` the pairs alternate their order), one fresh interpreter
runs what `scripts/study_b_render.py` runs (the applicability check, `render_task`, the
two tables) on `--run`'s `results/conditions/B/<task>/items.jsonl` and its Study B
specialist, with `PYTHONPATH` set to that tree and the output paths the rule's
(relative to the child's working directory, as `renderings.tsv` records them). Its CPU
(user + system, from `os.wait4`; the espeak-ng fork server is the child's own child,
waited for at its exit, so it is counted) is the job's cost without Snakemake's
start-up. Prints per task the CPU of each (the median over the repeats), the ratio
after / before, and whether every file the job wrote (`renderings.tsv`,
`candidates.tsv`, each `audio/*.wav`) is byte-identical between the two trees (and to
`--run`'s own outputs with `--reference`). Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# the body of scripts/study_b_render.py without the Snakemake object
CHILD = """
import json, sys
from pathlib import Path
from judgeaudit.io import write_tsv_atomic
from judgeaudit.specialists.base import read_meta
from judgeaudit.specialists.corpus import check_applicable
from judgeaudit.study_b.build import render_task
task, cfg, sr, seed, items, specialist = sys.argv[1:7]
check_applicable(read_meta(specialist), "synth_study_b_renderings", f"study B {task}")
out = Path("results/conditions/B") / task
(out / "audio").mkdir(parents=True, exist_ok=True)
rows, cands = render_task(items, json.loads(cfg), int(sr), int(seed), specialist,
                          str(out / "audio"))
write_tsv_atomic(out / "renderings.tsv", rows)
write_tsv_atomic(out / "candidates.tsv", cands)
"""


def settings(run: Path) -> tuple[dict[str, list[str]], str]:
    """(task -> the child's argv after the code, the specialist path) from `run`'s
    config, as the rule's params and inputs give them."""
    from judgeaudit.config import load_config
    from judgeaudit.workflow import Plan

    plan = Plan(load_config(run / "config.yaml"), run)
    sr = str(int(plan.config["datasets"]["sample_rate"]))
    seed = str(int(plan.config["seed"]))
    spec = run / plan.study_b_specialist()
    out = {}
    for task in plan.study_b_tasks():
        items = run / "results/conditions/B" / task / "items.jsonl"
        out[task] = [task, plan.study_b_task_param(task), sr, seed, str(items), str(spec)]
    return out, str(spec)


def run_child(src: Path, argv: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of one child interpreter running CHILD in `cwd`."""
    cwd.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, *argv], env=env, cwd=cwd,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{src}: child failed ({proc.returncode}) on task {argv[0]}")
    return usage.ru_utime + usage.ru_stime


def outputs(root: Path, task: str) -> dict[str, Path]:
    """relative name -> path of every file the render job of `task` wrote under `root`
    (Snakemake's own `.snakemake_timestamp` and provenance records aside)."""
    base = root / "results/conditions/B" / task
    files = [base / "renderings.tsv", base / "candidates.tsv",
             *sorted((base / "audio").glob("*.wav"))]
    return {p.relative_to(base).as_posix(): p for p in files if p.exists()}


def same(a: Path, b: Path, task: str) -> tuple[bool, int]:
    """(whether the two roots hold the same files with the same bytes, file count)."""
    fa, fb = outputs(a, task), outputs(b, task)
    if set(fa) != set(fb) or "renderings.tsv" not in fa:
        return False, len(fa)
    return all(filecmp.cmp(fa[k], fb[k], shallow=False) for k in fa), len(fa)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="src/ of the old tree")
    ap.add_argument("--after", type=Path, default=REPO / "src", help="src/ of the new tree")
    ap.add_argument("--run", type=Path, default=REPO,
                    help="a finished run's directory (config.yaml, the tasks' items.jsonl "
                         "and the Study B specialist); default this repository")
    ap.add_argument("--task", action="append", help="only these (repeatable)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="pairs per task (order alternating); the median CPU is printed")
    ap.add_argument("--reference", action="store_true",
                    help="also compare with --run's own results/conditions/B/<task> outputs")
    ap.add_argument("--keep", type=Path, help="write the outputs here instead of a temp dir")
    args = ap.parse_args()
    run = args.run.resolve()
    argvs, _ = settings(run)
    tasks = args.task or list(argvs)
    ok = True
    total = {"before": 0.0, "after": 0.0}
    print(f"{'task':14s} {'before_s':>9s} {'after_s':>8s} {'ratio':>6s} {'files':>6s}  identical")
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep.resolve() if args.keep else Path(tmp)
        for task in tasks:
            cpu: dict[str, list[float]] = {"before": [], "after": []}
            sides = [("before", args.before), ("after", args.after)]
            for rep in range(args.repeats):
                for side, src in (sides if rep % 2 == 0 else sides[::-1]):
                    cpu[side].append(run_child(src.resolve(), argvs[task],
                                               base / side / str(rep)))
            ident, n = True, 0
            for rep in range(args.repeats):
                got, n = same(base / "before" / str(rep), base / "after" / str(rep), task)
                ident = ident and got
            note = "before=after" if ident else "DIFFERENT before/after"
            if args.reference:
                ref, _ = same(base / "after" / "0", run, task)
                note += ", =reference" if ref else ", DIFFERENT from reference"
                ident = ident and ref
            ok = ok and ident
            med = {side: statistics.median(v) for side, v in cpu.items()}
            for side in total:
                total[side] += med[side]
            spread = "" if args.repeats == 1 else "  (" + "; ".join(
                f"{side} " + " ".join(f"{v:.2f}" for v in cpu[side]) for side in cpu) + ")"
            print(f"{task:14s} {med['before']:9.2f} {med['after']:8.2f} "
                  f"{med['after'] / med['before']:6.2f} {n:6d}  {note}{spread}", flush=True)
    print(f"{'total':14s} {total['before']:9.2f} {total['after']:8.2f} "
          f"{total['after'] / total['before']:6.2f} {'':6s}  "
          f"{'all identical' if ok else 'SOME DIFFER'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
