"""Rule features_table: eGeMAPSv02 functionals of every clip of one dataset."""

import json

from judgeaudit.blas import fixed_blas_threads
from judgeaudit.features.audio import ScreenConfig
from judgeaudit.features.extract import extract_table
from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.workflow import base_dirs, read_manifest


def main(smk, log):
    cfg = json.loads(smk.params.cfg)
    screen = ScreenConfig(cfg["min_duration_s"], cfg["silence_dbfs"], cfg["saturation_fraction"])
    manifest = read_manifest(smk.input.manifest)
    table = extract_table(manifest, cfg["feature_set"], smk.config["cache_dir"], smk.threads,
                          base_dirs(smk.input.manifest), screen)
    counts = table["status"].value_counts().to_dict()
    log.info("%s: %d clips, status counts %s", smk.wildcards.dataset, len(table), counts)
    write_tsv_atomic(smk.output.table, table)
    finish_job(smk, extra={"status_counts": counts})


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    with fixed_blas_threads():  # the same bytes whatever threads the rule got
        main(*start_job(globals()))
