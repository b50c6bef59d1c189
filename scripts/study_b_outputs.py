"""Study B tables (TSV/MD/TeX) and figures (PNG/PDF). Thin: see judgeaudit.render.study_b."""

from pathlib import Path

import pandas as pd

from judgeaudit import logs
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.render import study_b as R

smk = snakemake  # noqa: F821
log = logs.setup(smk.log[0])
what = smk.params.what


def read(p):
    return pd.read_csv(p, sep="\t")


def base(path):
    p = Path(path)
    return p.with_name(p.name.rsplit(".", 1)[0])


if what == "accuracy":
    R.accuracy_table(read(smk.input.accuracy), base(smk.output[0]))
elif what == "protocol_gap":
    R.gap_table(read(smk.input.gap), base(smk.output[0]))
elif what == "balance":
    R.balance_table(read(smk.input.balance), base(smk.output[0]))
elif what == "potemkin":
    R.potemkin_table(read(smk.input.potemkin), base(smk.output[0]))
elif what == "states_figure":
    R.states_figure(read(smk.input.distribution), base(smk.output[0]), read(smk.input.chance))
elif what == "states_table":
    R.states_table(read(smk.input.distribution), read(smk.input.chance), base(smk.output[0]))
elif what == "heatmap":
    R.heatmap_figure(read(smk.input.potemkin), read(smk.input.gap), read(smk.input.cue),
                     base(smk.output[0]))
else:
    raise ValueError(f"study_b_outputs: unknown output {what!r}")
log.info("study B %s rendered", what)
record_snakemake_job(smk)
