"""The power table (TSV/MD/TeX): the pre-flight report, or (power.pilot: run) the report
recomputed with this run's own measurements as the pilot. Thin: see
judgeaudit.stats.power and judgeaudit.render.power."""

import json
from pathlib import Path

import pandas as pd

from judgeaudit.io import read_jsonl
from judgeaudit.render.power import power_table
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats import power as PW

smk, log = start_job(globals())
out = Path(smk.output[0])
cfg = json.loads(smk.params.cfg)
own = [*smk.input.run_metrics, *smk.input.run_contrasts, *smk.input.run_scored]
if own:
    trials = [t for path in smk.input.trials for t in read_jsonl(path)]
    sizes = PW.delivered_sizes(trials, json.loads(smk.params.study_a),
                               json.loads(smk.params.study_b))
    pilot = PW.read_run_pilot(list(smk.input.run_metrics) or list(smk.input.pilot),
                              list(smk.input.run_contrasts), list(smk.input.run_scored),
                              json.loads(smk.params.audited_names),
                              source="this run's own metrics (second pass)")
    frame = PW.report(trials, cfg, sizes, json.loads(smk.params.audited), pilot)
    for msg in PW.problems(frame)[1]:
        log.warning("POWER WARNING: %s", msg)
    for msg in PW.fallbacks(frame):
        log.warning("PILOT FALLBACK: %s", msg)
else:
    frame = pd.read_csv(smk.input.report, sep="\t")
power_table(frame, out.with_name(out.name.rsplit(".", 1)[0]))
log.info("power table written (%s)", "second pass, this run as pilot" if own else "pre-flight")
finish_job(smk, extra={"second_pass": bool(own), "n_cells": len(frame),
                       "n_below": int((~frame["meets_target"].astype(bool)).sum())})
