"""Study A tables (TSV/MD/TeX). Thin: see judgeaudit.render.study_a."""

import pandas as pd

from judgeaudit import logs
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.render.study_a import all_tables

log = logs.setup(snakemake.log[0])  # noqa: F821
smk = snakemake  # noqa: F821
metrics = pd.read_csv(smk.input.metrics, sep="\t", dtype={"seed": str})
contrasts = pd.read_csv(smk.input.contrasts, sep="\t")
planted = pd.read_csv(smk.input.planted, sep="\t")
all_tables(metrics, contrasts, planted, smk.params.out_dir)
log.info("wrote %d table files", len(smk.output))
record_snakemake_job(smk)
