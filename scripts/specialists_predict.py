"""Rule specialists_predict: one specialist's per-clip predictions on a dataset."""

from judgeaudit.blas import fixed_blas_threads
from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.workflow import predict


def main(smk, log):
    table = predict(smk.wildcards.kind, smk.input.model, smk.input.manifest,
                    smk.config["cache_dir"], smk.threads, corpus=smk.wildcards.dataset)
    log.info("%s on %s: %d clips", smk.wildcards.kind, smk.wildcards.dataset, len(table))
    write_tsv_atomic(smk.output.table, table)
    finish_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    with fixed_blas_threads():  # the same bytes whatever threads the rule got
        main(*start_job(globals()))
