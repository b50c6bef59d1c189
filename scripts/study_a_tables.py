"""Study A tables (TSV/MD/TeX). Thin: every table of the study's outputs registry
through its entry's render function (judgeaudit.study_a.outputs.render_tables)."""

from pathlib import Path

import pandas as pd

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_a import outputs as A

smk, log = start_job(globals())
# the metric rows' seed is a label ("all", "1", ...), never a number
dtypes = {"metrics": {"seed": str}, "twoway": {"seed": str}}
frames = {role: pd.read_csv(smk.input[role], sep="\t", dtype=dtypes.get(role))
          for role in A.table_inputs()}
names = A.render_tables(frames, Path(smk.output[0]).parent)
log.info("wrote %d tables (%d files)", len(names), len(smk.output))
finish_job(smk)
