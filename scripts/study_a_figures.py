"""Study A figures (PNG/PDF). Thin: see judgeaudit.render.study_a."""

from pathlib import Path

import pandas as pd

from judgeaudit.render.study_a import all_figures
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
metrics = pd.read_csv(smk.input.metrics, sep="\t", dtype={"seed": str})
all_figures(metrics, str(Path(smk.output[0]).parent))
log.info("wrote %d figure files", len(smk.output))
finish_job(smk)
