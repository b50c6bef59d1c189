"""One validation scenario: replicates of the independent simulator, the audit's
estimators on each, and the scenario's population truth."""

import json

from judgeaudit.io import write_json_atomic, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.validation import simulate, study

smk, log = start_job(globals())
cfg = json.loads(smk.params.settings)
sc = simulate.scenario(cfg["scenario"], cfg["overrides"])
log.info("scenario %s (%s): %d replicates, n_boot %d", sc.name, sc.kind, cfg["n_seeds"],
         cfg["n_boot"])
reps = study.run_scenario(sc, cfg["n_seeds"], cfg["n_boot"], cfg["seed"])
truth = simulate.population_truth(sc, cfg["truth_clusters"], cfg["seed"])
write_tsv_atomic(smk.output.reps, reps)
write_json_atomic(smk.output.truth, {"scenario": sc.to_dict(), "truth": truth,
                                      "estimators": study.est.ESTIMATOR_SOURCE[sc.kind]})
finish_job(smk)
