"""Validate manifests: a rule script (snakemake.input.manifest -> a JSON summary
in snakemake.output[0]) or a command line tool:

    python scripts/validate_manifest.py data/*/manifest.tsv
"""

import sys

from judgeaudit.datasets.validate import main, validate_manifest

if "snakemake" in globals():
    from judgeaudit import logs
    from judgeaudit.io import write_json_atomic
    from judgeaudit.provenance import record_snakemake_job

    snakemake = globals()["snakemake"]
    log = logs.setup(snakemake.log[0])
    summary = {}
    for manifest in snakemake.input.manifest if not isinstance(
            snakemake.input.manifest, str) else [snakemake.input.manifest]:
        frame = validate_manifest(manifest)
        summary[str(manifest)] = {"n_clips": len(frame), "status": "ok"}
        log.info("%s: ok (%d clips)", manifest, len(frame))
    write_json_atomic(snakemake.output[0], summary)
    record_snakemake_job(snakemake)
else:
    raise SystemExit(main(sys.argv[1:]))
