"""Pre-flight power report beside the trials. Thin: see judgeaudit.stats.power."""

import json

from judgeaudit.io import read_jsonl, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats import power as PW

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
trials = [t for path in smk.input.trials for t in read_jsonl(path)]
sizes = PW.delivered_sizes(trials, json.loads(smk.params.study_a), json.loads(smk.params.study_b))
pilot = PW.read_run_pilot(list(smk.input.pilot), source="power.pilot_metrics")
frame = PW.report(trials, cfg, sizes, json.loads(smk.params.audited), pilot)
short, weak = PW.problems(frame)
for msg in weak:
    log.warning("POWER WARNING: %s", msg)
for msg in PW.fallbacks(frame):
    log.warning("PILOT FALLBACK: %s", msg)
for msg in short:
    log.warning("SIZE SHORTFALL: %s", msg)
if short and cfg["shortfall"] == "error":
    raise ValueError("configured sizes the corpus cannot fill (set power.shortfall: warn to "
                     "continue, or lower the sizes / enlarge the corpus):\n  " + "\n  ".join(short))
if weak and cfg["fail_on_mde"]:
    raise ValueError("cells below the configured power (power.fail_on_mde is true):\n  "
                     + "\n  ".join(weak))
for r in PW.headline(frame).itertuples(index=False):
    log.info("guaranteed power at target %s (%s): min %.3f (%s), max %.3f over %d cells",
             r.test, r.target_effect, r.min_power, r.weakest_cell, r.max_power, r.n_cells)
write_tsv_atomic(smk.output[0], frame)
finish_job(smk, extra={"n_cells": len(frame), "n_warnings": len(weak),
                                 "n_shortfalls": len(short)})
