"""Study B tables (TSV/MD/TeX) and figures (PNG/PDF). Thin: see judgeaudit.study_b.render."""

from pathlib import Path

import pandas as pd

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b import render as R

smk, log = start_job(globals())
wc = smk.wildcards


def read(p):
    return pd.read_csv(p, sep="\t")


def base(path):
    p = Path(path)
    return p.with_name(p.name.rsplit(".", 1)[0])


out = base(smk.output[0])
what = wc.get("table") or wc.get("figure")
if wc.get("table") == "accuracy":
    R.accuracy_table(read(smk.input.accuracy), out)
elif wc.get("table") == "protocol_gap":
    R.gap_table(read(smk.input.gap), out)
elif wc.get("table") == "balance":
    R.balance_table(read(smk.input.balance), out)
elif wc.get("table") == "potemkin":
    R.potemkin_table(read(smk.input.potemkin), out)
elif wc.get("table") == "text_gap":
    R.text_gap_table(read(smk.input.text_gap), out)
elif wc.get("table") == "writer_ablation":
    R.writer_ablation_table(read(smk.input.ablation), out)
elif wc.get("table") == "state_distribution":
    R.states_table(read(smk.input.distribution), read(smk.input.chance), out)
elif wc.get("figure") == "states":
    R.states_figure(read(smk.input.distribution), out, read(smk.input.chance))
elif wc.get("figure") == "heatmap":
    R.heatmap_figure(read(smk.input.potemkin), read(smk.input.gap), read(smk.input.cue), out)
elif wc.get("figure") == "text_gap":
    R.text_gap_figure(read(smk.input.text_gap), out)
elif wc.get("figure") == "probes":
    R.probes_figure(read(smk.input.potemkin), out)
else:
    raise ValueError(f"study_b_outputs: unknown table/figure {dict(wc)!r}")
log.info("study B %s rendered", what)
finish_job(smk)
