"""Regenerate the design summary in docs/power.md from a power table:

    python scripts/power_docs.py [results/tables/power.tsv] [docs/power.md]

(the default run's table; run it after `snakemake` so the doc's counts and powers are
the table's, never typed by hand). tests/test_power_workflow.py checks the block against
the default run's table as copied into tests/data/default_run/ (its README: refresh the
two together)."""

import sys
from pathlib import Path

import pandas as pd

from judgeaudit.render.power import write_docs

root = Path(__file__).resolve().parents[1]
table = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "results/tables/power.tsv"
doc = Path(sys.argv[2]) if len(sys.argv) > 2 else root / "docs/power.md"
if not table.is_file():
    sys.exit(f"power_docs: {table} not found (build it: snakemake results/tables/power.tsv)")
write_docs(pd.read_csv(table, sep="\t"), doc)
print(f"power_docs: {doc} summary regenerated from {table}")
