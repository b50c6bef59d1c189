"""Regenerate the README's judge-card numbers from a real card and benchmark run:

    python scripts/card_docs.py --card results/audit/sim-follower/card.json \
        --bench out/audit_stopping_icc0.1.json out/audit_stopping_icc0.3.json ...

(a card.json written by `judgeaudit audit --judge sim-follower` on the default config;
the JSON files of `benchmarks/audit_stopping.py --json`). The inputs are copied to
docs/audit/ (the shipped sources: default-card.json, audit_stopping_icc<ICC>.json)
and the README's generated blocks (judgeaudit.audit.docs markers) are rewritten from
those copies, so the numbers are the run's, never typed. Either option alone
regenerates its block only. tests/test_audit_docs.py re-derives both blocks from the
shipped copies."""

import argparse
import json
import shutil
import sys
from pathlib import Path

from judgeaudit.audit.docs import (
    BENCH_BEGIN,
    BENCH_END,
    CARD_BEGIN,
    CARD_END,
    bench_summary,
    card_summary,
    write_block,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "audit"
CARD_COPY = DOCS / "default-card.json"
BENCH_GLOB = "audit_stopping_icc*.json"

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--card", type=Path, help="a card.json of the default config")
ap.add_argument("--bench", type=Path, nargs="+", default=[],
                help="benchmarks/audit_stopping.py --json outputs (one per ICC)")
ap.add_argument("--readme", type=Path, default=ROOT / "README.md")
ap.add_argument("--docs", type=Path, default=DOCS, help="where the shipped copies go")
args = ap.parse_args()
if args.card is None and not args.bench:
    sys.exit("card_docs: give --card and/or --bench")
DOCS = args.docs
CARD_COPY = DOCS / CARD_COPY.name
DOCS.mkdir(parents=True, exist_ok=True)
if args.card is not None:
    card = json.loads(args.card.read_text())
    if "card_version" not in card or "protocols" not in card:
        sys.exit(f"card_docs: {args.card} is not a judge card (no card_version / protocols)")
    if args.card.resolve() != CARD_COPY.resolve():
        shutil.copyfile(args.card, CARD_COPY)
    write_block(args.readme, CARD_BEGIN, CARD_END, card_summary(json.loads(CARD_COPY.read_text())))
    print(f"card_docs: {args.readme} judge-card block regenerated from {args.card} "
          f"(copied to {CARD_COPY})")
if args.bench:
    for old in DOCS.glob(BENCH_GLOB):
        old.unlink()
    for f in args.bench:
        run = json.loads(f.read_text())
        if run.get("benchmark") != "benchmarks/audit_stopping.py":
            sys.exit(f"card_docs: {f} is not a benchmarks/audit_stopping.py --json output")
        shutil.copyfile(f, DOCS / f"audit_stopping_icc{run['icc']}.json")
    runs = [json.loads(f.read_text()) for f in sorted(DOCS.glob(BENCH_GLOB))]
    write_block(args.readme, BENCH_BEGIN, BENCH_END, bench_summary(runs))
    print(f"card_docs: {args.readme} audit-stopping block regenerated from {len(runs)} runs")
