"""Summarise every scenario's replicates: bias, RMSE, coverage (Monte Carlo SE);
write results/tables/estimator_validation*.{tsv,md,tex} and the coverage figure."""

import json

import pandas as pd

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.validation import simulate, study

smk, log = start_job(globals())
band = json.loads(smk.params.band)
overrides = json.loads(smk.params.overrides)
parts = []
for reps_path, truth_path in zip(smk.input.reps, smk.input.truth, strict=True):
    meta = json.loads(open(truth_path, encoding="utf-8").read())
    sc = simulate.scenario(meta["scenario"]["name"], overrides.get(meta["scenario"]["name"]))
    reps = pd.read_csv(reps_path, sep="\t")
    parts.append(study.summarise(reps, sc, meta["truth"], band))
summary = pd.concat(parts, ignore_index=True)
study.write_outputs(summary, smk.params.table, smk.params.figure, int(smk.params.n_seeds), band)
log.info("%s", study.closing_note(summary, int(smk.params.n_seeds), band))
finish_job(smk)
