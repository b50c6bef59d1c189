"""Validate manifests: a rule script (snakemake.input.manifest -> a JSON summary
in snakemake.output[0]) or a command line tool:

    python scripts/validate_manifest.py data/*/manifest.tsv
"""

import sys

from judgeaudit.datasets.validate import main, validate_manifest

if "snakemake" in globals():
    from judgeaudit.io import write_json_atomic
    from judgeaudit.scriptjob import finish_job, start_job

    smk, log = start_job(globals())
    summary = {}
    for manifest in smk.input.manifest if not isinstance(
            smk.input.manifest, str) else [smk.input.manifest]:
        frame = validate_manifest(manifest)
        summary[str(manifest)] = {"n_clips": len(frame), "status": "ok"}
        log.info("%s: ok (%d clips)", manifest, len(frame))
    write_json_atomic(smk.output[0], summary)
    finish_job(smk)
else:
    raise SystemExit(main(sys.argv[1:]))
