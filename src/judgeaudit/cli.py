"""`judgeaudit` command line: audit one judge (`audit`), config checks, provenance
tracing, the API-judge cost estimate, the spend ledger, run verification, stale-lock
recovery and the human listening test."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from judgeaudit.config import ConfigError, load_config
from judgeaudit.provenance import (
    CONFIG_STORE,
    RECORD_SUFFIX,
    find_resolved_config,
    record_path,
)
from judgeaudit.provenance.trace import trace


def _cmd_check_config(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config, *args.overlay)
        from judgeaudit.judges.budget import missing_keys

        names = cfg["judges"]["active"] or sorted(cfg["judges"]["panel"])
        for miss in missing_keys(cfg["judges"]["panel"], names):
            print(f"warning: API key variable unset for judge {miss}; the run would stop "
                  "before any job", file=sys.stderr)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(json.dumps(cfg, indent=2, sort_keys=True) if args.show else "config OK")
    return 0


def _cmd_trace(args: argparse.Namespace) -> int:
    target = args.output.removesuffix(RECORD_SUFFIX)
    if args.row is not None or args.column is not None:
        from judgeaudit.provenance.cells import CellError, format_text, trace_cell

        if args.row is None or args.column is None:
            print("trace: give both --row and --column to trace one cell", file=sys.stderr)
            return 2
        try:
            cell = trace_cell(target, args.row, args.column)
        except (CellError, FileNotFoundError, ValueError) as exc:
            print(exc, file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(cell.to_json(), indent=1, sort_keys=True, default=str))
        else:
            print(format_text(cell, max_trials=args.max_trials))
        return 0 if cell.match is not False else 3
    if not record_path(target).exists():
        print(f"{target}: no provenance record at {record_path(target)}", file=sys.stderr)
        return 1
    print("\n".join(trace(target, max_depth=args.depth)))
    return 0


def _cmd_estimate_cost(args: argparse.Namespace) -> int:
    """Build only what the cost pre-flight needs (trial shards: local, free) and print
    the estimate; no judge is called. Extra arguments go to snakemake."""
    import shutil
    import subprocess

    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    cmd = [exe, "results/judges/preflight.json", "--forcerun", "judge_preflight",
           "--cores", str(args.cores), *args.snakemake_args]
    print("running: " + " ".join(cmd), file=sys.stderr)
    rc = subprocess.run(cmd).returncode
    report = Path("logs/judges/cost_estimate.json")
    if report.exists():
        data = json.loads(report.read_text())
        from judgeaudit.judges.budget import describe

        print(describe(data, data.get("budget_usd")))
        for problem in data.get("problems") or []:
            print("OVER BUDGET: " + problem)
    elif rc == 0:
        print("no API judge in this configuration: nothing would be paid")
    return rc


def _cmd_unlock_stale(args: argparse.Namespace) -> int:
    from judgeaudit.locks import clear_stale_locks

    removed, why = clear_stale_locks(args.directory)
    print(why)
    return 0


def _cmd_config(args: argparse.Namespace) -> int:
    try:
        path, cfg = find_resolved_config(args.hash, args.store)
    except (FileNotFoundError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(cfg, indent=2, sort_keys=True))
    else:
        print(path.read_text(encoding="utf-8"), end="")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from judgeaudit.provenance.bundle import BundleError, export_responses

    try:
        m = export_responses(args.out, cache_dir=args.cache_dir)
    except BundleError as exc:
        print(exc, file=sys.stderr)
        return 1
    size = sum(f["bytes"] for f in m["files"].values())
    print(f"bundle {args.out}: {m['responses']} responses "
          f"({', '.join(f'{j} {n}' for j, n in m['responses_per_judge'].items())}), "
          f"config {m['config_sha256'][:12]}, {size} bytes; "
          f"{len(m['not_bundled'])} request(s) not in the cache (not bundled)")
    return 0


def _cmd_spend(args: argparse.Namespace) -> int:
    """The spend ledger of the judge cache: per scope, run and judge, USD reserved
    (in flight or never settled) and billed (settled from the provider's usage)."""
    from judgeaudit.judges.cache import ResponseCache, cache_path

    if not cache_path(args.cache_dir).exists():
        print(f"no judge cache at {cache_path(args.cache_dir)}", file=sys.stderr)
        return 1
    with ResponseCache(args.cache_dir) as cache:
        rows = cache.ledger()
    if args.json:
        print(json.dumps(rows, indent=1, sort_keys=True))
        return 0
    if not rows:
        print("the spend ledger is empty (no paid call recorded)")
        return 0
    print(f"{'scope':<24} {'run':<18} {'judge':<16} {'calls':>6} {'reserved $':>11} "
          f"{'billed $':>10}")
    by_scope: dict[str, float] = {}
    for r in rows:
        print(f"{r['scope'] or '(before scopes)':<24} {r['run']:<18} {r['judge']:<16} "
              f"{r['calls']:>6} {r['reserved_usd']:>11.4f} {r['billed_usd']:>10.4f}")
        by_scope[r["scope"]] = by_scope.get(r["scope"], 0.0) + r["reserved_usd"] + r["billed_usd"]
    for scope, usd in by_scope.items():
        print(f"scope {scope or '(before scopes)'}: ${usd:.4f} spent or reserved in all")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    """Re-hash clips, provenance-recorded outputs and inputs, and the judge cache."""
    from judgeaudit.provenance.verify import VERIFY_FILE, describe, verify

    result = verify(args.root, args.cache_dir)
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True))
    else:
        print("\n".join(describe(result)))
        print(f"(written to {Path(args.root) / VERIFY_FILE})")
    return 0 if result["ok"] else 1


def _cmd_import(args: argparse.Namespace) -> int:
    from judgeaudit.provenance.bundle import BundleError, import_responses

    try:
        s = import_responses(args.bundle, args.cache_dir)
    except BundleError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"imported {s['imported']} responses into {args.cache_dir}; replay with an overlay "
          f"replay.yaml holding `judges: {{replay: true}}`:\n"
          f"  snakemake --cores all --configfile {s['config']} replay.yaml")
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    """A thin front for the workflow target results/audit/<judge>/card.json (so the
    cache, provenance, replay, budgets and cluster profiles apply); extra arguments
    go to snakemake (e.g. --profile profiles/slurm)."""
    from judgeaudit.audit.cli import run_audit

    return run_audit(args)


def _cmd_listening_test(args: argparse.Namespace) -> int:
    from judgeaudit.human.listening import ListeningTestError, write_listening_test

    try:
        s = write_listening_test(args.root, args.study, args.task, args.n, out=args.out,
                                 shard=args.shard, condition=args.condition, seed=args.seed)
    except ListeningTestError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"wrote {s['path']}: {s['n']} trials of {s['n_items']} items (shard {s['shard']}"
          f"{', condition ' + s['condition'] if s['condition'] else ''}); open it in a browser, "
          f"answer, download the TSV, then: judgeaudit import-human <file.tsv>")
    return 0


def _cmd_import_human(args: argparse.Namespace) -> int:
    from judgeaudit.human.validation import ImportHumanError, import_human

    try:
        s = import_human(args.root, args.answers, out_base=args.out)
    except ImportHumanError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"imported {s['answers']} answers: " + ", ".join(s["paths"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="judgeaudit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("audit", help="audit one judge: a matched shortcut probe battery per "
                       "protocol, sized by a power calculation and stopped by a group-"
                       "sequential rule; writes card.json / card.html (other arguments go "
                       "to snakemake)")
    p.add_argument("--judge", required=True,
                   help="a judges.panel name, or a YAML file holding one judge {name: {provider: ...}}")
    p.add_argument("--configfile", nargs="+", type=Path, default=None,
                   help="config files (default: config.yaml); later files win")
    p.add_argument("--protocols", default=None,
                   help="comma-separated subset of blueprint,reference,pairwise,paralinguistic "
                        "(its card: results/audit/<judge>/protocols/<set>/, apart from other sets)")
    p.add_argument("--budget-usd", type=float, default=None,
                   help="most USD the audit may spend on new calls (API judges)")
    p.add_argument("--out", type=Path, default=None,
                   help="folder to copy the card into (default: results/audit/<judge>)")
    p.add_argument("--cores", default="all")
    p.add_argument("--no-early-stop", action="store_true",
                   help="run every probe to its fixed-design size (no interim looks)")
    p.add_argument("--allow-unpriced", action="store_true",
                   help="audit an API judge whose prices are not set (no cost estimate, no "
                        "budget guard); refused without this flag")
    p.set_defaults(snakemake_args=[], func=_cmd_audit)
    p = sub.add_parser("check-config", help="validate a config (plus overlays) against the schema")
    p.add_argument("config", type=Path)
    p.add_argument("overlay", nargs="*", type=Path)
    p.add_argument("--show", action="store_true", help="print the config with defaults filled")
    p.set_defaults(func=_cmd_check_config)
    p = sub.add_parser("trace", help="show the rules, inputs and code behind an output")
    p.add_argument("output")
    p.add_argument("--depth", type=int, default=20)
    p.add_argument("--row", help="one row of a table: a row number or col=value[,col=value]")
    p.add_argument("--column", help="the numeric column of the cell to trace")
    p.add_argument("--json", action="store_true", help="cell trace as JSON")
    p.add_argument("--max-trials", type=int, default=50,
                   help="trials listed in the text output (all of them in --json)")
    p.set_defaults(func=_cmd_trace)
    p = sub.add_parser("estimate-cost", help="print the API-judge cost estimate of the "
                       "workflow (builds trial shards only; calls no judge); other arguments "
                       "go to snakemake, e.g. --configfile config.yaml configs/real.yaml")
    p.add_argument("--cores", default="all")
    p.set_defaults(snakemake_args=[])
    p.set_defaults(func=_cmd_estimate_cost)
    p = sub.add_parser("unlock-stale", help="remove Snakemake locks left by a crashed run "
                       "when no live Snakemake process works in the directory")
    p.add_argument("directory", nargs="?", default=".", type=Path)
    p.set_defaults(func=_cmd_unlock_stale)
    p = sub.add_parser("config", help="print the resolved config a provenance record names "
                                      "by its config_sha256 (a unique prefix will do)")
    p.add_argument("hash")
    p.add_argument("--store", type=Path, default=CONFIG_STORE,
                   help=f"folder of resolved configs (default {CONFIG_STORE})")
    p.add_argument("--json", action="store_true", help="print JSON instead of YAML")
    p.set_defaults(func=_cmd_config)
    p = sub.add_parser("export-responses", help="bundle the cached judge responses behind "
                       "results/responses/** with the resolved config, for offline replay")
    p.add_argument("--out", type=Path, required=True, help="bundle folder to write")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="judge cache folder (default: the study config's cache_dir)")
    p.set_defaults(func=_cmd_export)
    p = sub.add_parser("verify", help="re-hash every manifest clip and every output and "
                       "input named by a provenance record, check the judge cache; name what "
                       "changed and the tables resting on it (exit 1 on any problem)")
    p.add_argument("root", nargs="?", default=".", type=Path)
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="judge cache folder (default: the study config's cache_dir)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_verify)
    p = sub.add_parser("spend", help="print the judge cache's spend ledger (per budget "
                       "scope, run and judge: reserved vs billed USD)")
    p.add_argument("--cache-dir", type=Path, default=Path("cache"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_spend)
    p = sub.add_parser("import-responses", help="check a response bundle and merge it into "
                       "the judge cache (then run with judges.replay: true)")
    p.add_argument("bundle", type=Path)
    p.add_argument("--cache-dir", type=Path, default=Path("cache"))
    p.set_defaults(func=_cmd_import)
    p = sub.add_parser("listening-test", help="write a self-contained browser listening test "
                       "over trials the judges get (results/human/listening_<study>_<task>.html)")
    p.add_argument("--study", required=True, choices=["A", "B"])
    p.add_argument("--task", required=True, help="e.g. single (Study B) or emotion (Study A)")
    p.add_argument("--n", type=int, default=40, help="trials on the page")
    p.add_argument("--shard", default=None, help="trial shard (default: B pointwise-none, "
                   "A blueprint)")
    p.add_argument("--condition", default=None,
                   help="only trials of this condition (default: A audio_only)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--root", type=Path, default=Path("."), help="the run directory")
    p.add_argument("--out", type=Path, default=None,
                   help="the page to write: a path ending in .html (no suffix: .html is "
                        "added; any other suffix is refused)")
    p.set_defaults(func=_cmd_listening_test)
    p = sub.add_parser("import-human", help="import downloaded listening-test TSVs into "
                       "results/tables/human_validation.{tsv,md,tex}")
    p.add_argument("answers", nargs="+", type=Path)
    p.add_argument("--root", type=Path, default=Path("."), help="the run directory")
    p.add_argument("--out", type=Path, default=None, help="table base path (no suffix)")
    p.set_defaults(func=_cmd_import_human)
    args, rest = parser.parse_known_args(argv)
    if rest:
        if args.command not in ("estimate-cost", "audit"):
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        args.snakemake_args = rest
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
