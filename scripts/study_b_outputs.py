"""Study B tables (TSV/MD/TeX) and figures (PNG/PDF). Thin: the outputs registry
(judgeaudit.study_b.outputs) names each table's and figure's render function
(judgeaudit.study_b.render); its input roles are the function's arguments."""

from pathlib import Path

import pandas as pd

from judgeaudit.registry import dotted
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b import outputs as B

smk, log = start_job(globals())
wc = smk.wildcards
entry = (B.REGISTRY.table(B.PREFIX + wc.table) if wc.get("table")
         else B.REGISTRY.figure(B.PREFIX + wc.figure))
render = entry.render if wc.get("table") else entry.function
out = Path(smk.output[0])
frames = {role: pd.read_csv(smk.input[role], sep="\t") for role in entry.inputs}
render(**frames, base=out.with_name(out.name.rsplit(".", 1)[0]))
log.info("study B %s rendered with %s", entry.name, dotted(render))
finish_job(smk)
