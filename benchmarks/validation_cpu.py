"""CPU of the `validation_scenario` jobs: two source trees side by side, outputs compared.

    python benchmarks/validation_cpu.py --before /tmp/old/src [--after src]
        [--scenario NAME ...] [--n-seeds N] [--reference results/validation/default]

For every scenario of the default config, and for each of the two trees in turn
(before, then after, so both meet the same machine load), one fresh interpreter runs
what `scripts/validation_scenario.py` runs (the replicates, the population truth, the
two output files) with `PYTHONPATH` set to that tree; its CPU (user + system, from
`os.wait4`) is the job's cost without Snakemake's start-up. Prints per scenario the CPU
of each, the ratio after / before, and whether the two trees' `.reps.tsv` and
`.truth.json` are byte-identical (and identical to `--reference`'s, e.g. a finished
run's `results/validation/default`, when given). Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# the body of scripts/validation_scenario.py without the Snakemake object
CHILD = """
import json, sys
from judgeaudit.io import write_json_atomic, write_tsv_atomic
from judgeaudit.validation import simulate, study
cfg = json.loads(sys.argv[1])
out = sys.argv[2]
sc = simulate.scenario(cfg["scenario"], cfg["overrides"])
reps = study.run_scenario(sc, cfg["n_seeds"], cfg["n_boot"], cfg["seed"])
truth = simulate.population_truth(sc, cfg["truth_clusters"], cfg["seed"])
write_tsv_atomic(f"{out}/{sc.name}.reps.tsv", reps)
write_json_atomic(f"{out}/{sc.name}.truth.json", {"scenario": sc.to_dict(), "truth": truth,
                  "estimators": study.est.ESTIMATOR_SOURCE[sc.kind]})
"""


def params(n_seeds: int | None) -> dict[str, str]:
    """scenario -> the rule's `settings` param (JSON), from the default config."""
    from judgeaudit.config import load_config
    from judgeaudit.workflow import Plan

    plan = Plan(load_config(REPO / "config.yaml"), REPO)
    out = {}
    for name in sorted(plan.config["validation"]["scenarios"]):
        cfg = json.loads(plan.validation_params("default", name))
        if n_seeds is not None:
            cfg["n_seeds"] = n_seeds
        out[name] = json.dumps(cfg)
    return out


def run(src: Path, settings: str, out: Path) -> float:
    """CPU seconds (user + system) of one child interpreter running CHILD."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, settings, str(out)], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{src}: child failed ({proc.returncode}) on {settings}")
    return usage.ru_utime + usage.ru_stime


def same(a: Path, b: Path, name: str) -> bool:
    return all(filecmp.cmp(a / f"{name}{ext}", b / f"{name}{ext}", shallow=False)
               for ext in (".reps.tsv", ".truth.json"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="src/ of the old tree")
    ap.add_argument("--after", type=Path, default=REPO / "src", help="src/ of the new tree")
    ap.add_argument("--scenario", action="append", help="only these (repeatable)")
    ap.add_argument("--n-seeds", type=int, help="replicates (default: the config's)")
    ap.add_argument("--reference", type=Path, help="a finished run's results/validation/default")
    args = ap.parse_args()
    settings = params(args.n_seeds)
    names = args.scenario or list(settings)
    ok = True
    total = {"before": 0.0, "after": 0.0}
    print(f"{'scenario':22s} {'before_s':>9s} {'after_s':>8s} {'ratio':>6s}  identical")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            cpu = {}
            for side, src in (("before", args.before), ("after", args.after)):
                cpu[side] = run(src.resolve(), settings[name], Path(tmp) / side)
                total[side] += cpu[side]
            ident = same(Path(tmp) / "before", Path(tmp) / "after", name)
            note = "before=after" if ident else "DIFFERENT before/after"
            if args.reference is not None:
                ref = same(Path(tmp) / "after", args.reference, name)
                note += ", =reference" if ref else ", DIFFERENT from reference"
                ident = ident and ref
            ok = ok and ident
            print(f"{name:22s} {cpu['before']:9.2f} {cpu['after']:8.2f} "
                  f"{cpu['after'] / cpu['before']:6.2f}  {note}", flush=True)
    print(f"{'total':22s} {total['before']:9.2f} {total['after']:8.2f} "
          f"{total['after'] / total['before']:6.2f}  "
          f"{'all identical' if ok else 'SOME DIFFER'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
