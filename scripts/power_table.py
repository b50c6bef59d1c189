"""The power table (TSV/MD/TeX). Thin: see judgeaudit.render.power."""

from pathlib import Path

import pandas as pd

from judgeaudit.render.power import power_table
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
out = Path(smk.output[0])
power_table(pd.read_csv(smk.input.report, sep="\t"), out.with_name(out.name.rsplit(".", 1)[0]))
log.info("power table written")
finish_job(smk)
