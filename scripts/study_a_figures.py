"""Study A figures (PNG/PDF). Thin: see judgeaudit.study_a.render."""

from pathlib import Path

import pandas as pd

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_a.render import all_figures

smk, log = start_job(globals())
metrics = pd.read_csv(smk.input.metrics, sep="\t", dtype={"seed": str})
all_figures(metrics, str(Path(smk.output[0]).parent))
log.info("wrote %d figure files", len(smk.output))
finish_job(smk)
