"""Study A figures (PNG/PDF). Thin: see judgeaudit.render.study_a."""

import pandas as pd

from judgeaudit import logs
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.render.study_a import all_figures

log = logs.setup(snakemake.log[0])  # noqa: F821
smk = snakemake  # noqa: F821
metrics = pd.read_csv(smk.input.metrics, sep="\t", dtype={"seed": str})
all_figures(metrics, smk.params.out_dir)
log.info("wrote %d figure files", len(smk.output))
record_snakemake_job(smk)
