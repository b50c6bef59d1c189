"""Study A tables (TSV/MD/TeX). Thin: see judgeaudit.study_a.render."""

from pathlib import Path

import pandas as pd

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_a.render import all_tables

smk, log = start_job(globals())
metrics = pd.read_csv(smk.input.metrics, sep="\t", dtype={"seed": str})
contrasts = pd.read_csv(smk.input.contrasts, sep="\t")
planted = pd.read_csv(smk.input.planted, sep="\t")
all_tables(metrics, contrasts, planted, str(Path(smk.output[0]).parent))
log.info("wrote %d table files", len(smk.output))
finish_job(smk)
