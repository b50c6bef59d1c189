"""Rule specialists_predict: one specialist's per-clip predictions on a dataset."""

from judgeaudit.io import write_tsv_atomic
from judgeaudit.logs import setup
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.specialists.workflow import predict


def main(smk):
    log = setup(smk.log[0])
    table = predict(smk.wildcards.kind, smk.input.model, smk.input.manifest,
                    smk.config["cache_dir"], smk.threads, corpus=smk.wildcards.dataset)
    log.info("%s on %s: %d clips", smk.wildcards.kind, smk.wildcards.dataset, len(table))
    write_tsv_atomic(smk.output.table, table)
    record_snakemake_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    main(snakemake)  # noqa: F821
