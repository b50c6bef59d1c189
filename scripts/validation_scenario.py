"""One validation scenario: replicates of the independent simulator, the audit's
estimators on each, and the scenario's population truth."""

import json

from judgeaudit import logs
from judgeaudit.io import write_json_atomic, write_tsv_atomic
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.validation import simulate, study

log = logs.setup(snakemake.log[0])  # noqa: F821
smk = snakemake  # noqa: F821
cfg = json.loads(smk.params.settings)
sc = simulate.scenario(cfg["scenario"], cfg["overrides"])
log.info("scenario %s (%s): %d replicates, n_boot %d", sc.name, sc.kind, cfg["n_seeds"],
         cfg["n_boot"])
reps = study.run_scenario(sc, cfg["n_seeds"], cfg["n_boot"], cfg["seed"])
truth = simulate.population_truth(sc, cfg["truth_clusters"], cfg["seed"])
write_tsv_atomic(smk.output.reps, reps)
write_json_atomic(smk.output.truth, {"scenario": sc.to_dict(), "truth": truth,
                                      "estimators": study.est.ESTIMATOR_SOURCE[sc.kind]})
record_snakemake_job(smk)
