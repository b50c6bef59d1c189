"""The power table (TSV/MD/TeX). Thin: see judgeaudit.render.power."""

from pathlib import Path

import pandas as pd

from judgeaudit import logs
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.render.power import power_table

smk = snakemake  # noqa: F821
log = logs.setup(smk.log[0])
out = Path(smk.output[0])
power_table(pd.read_csv(smk.input.report, sep="\t"), out.with_name(out.name.rsplit(".", 1)[0]))
log.info("power table written")
record_snakemake_job(smk)
