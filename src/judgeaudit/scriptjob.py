"""The preamble and the ending every rule script in scripts/ shares:

    from judgeaudit.scriptjob import finish_job, start_job

    smk, log = start_job(globals())      # the `snakemake` object + the rule's log
    ...                                   # read smk.input/params/output, call the package
    finish_job(smk, extra={...})          # the provenance record of every output

`start_job` takes the script's globals (where Snakemake injects `snakemake`), so
no script names the injected variable itself; the package never imports
Snakemake (the object is duck-typed)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgeaudit import logs
from judgeaudit.provenance import record_snakemake_job


def start_job(namespace: Mapping[str, Any]) -> tuple[Any, logging.Logger]:
    """(the `snakemake` object, the logger writing to the rule's log file and stderr)."""
    smk = namespace.get("snakemake")
    if smk is None:
        raise RuntimeError(f"{namespace.get('__file__', 'this script')} is a rule script: run "
                           "it through Snakemake (`script:`), which injects `snakemake`")
    return smk, logs.setup(smk.log[0] if len(smk.log) else None)


def finish_job(smk: Any, extra: Mapping[str, Any] | None = None,
               **scope: Any) -> list[Path]:
    """Write the provenance record of every output of the job (see
    judgeaudit.provenance.record_snakemake_job); a grouped job passes `outputs`,
    `inputs` and `wildcards` to record one shard of the group at a time."""
    return record_snakemake_job(smk, extra=extra, **scope)
