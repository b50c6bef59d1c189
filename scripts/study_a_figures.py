"""Study A figures (PNG/PDF). Thin: every figure of the study's outputs registry
through its entry's function (judgeaudit.study_a.outputs.render_figures)."""

from pathlib import Path

import pandas as pd

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_a import outputs as A

smk, log = start_job(globals())
frames = {role: pd.read_csv(smk.input[role], sep="\t", dtype={"seed": str})
          for role in A.figure_inputs()}
names = A.render_figures(frames, Path(smk.output[0]).parent)
log.info("wrote %d figures (%d files)", len(names), len(smk.output))
finish_job(smk)
