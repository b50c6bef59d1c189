"""Rule script: ingest one real corpus in its official layout into data/<name>/."""

import json
from pathlib import Path

from judgeaudit.datasets.real import ingest, resolve_root
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
name = smk.params.dataset
cfg = json.loads(smk.params.cfg)
if smk.input.get("local_dir"):
    cfg["local_dir"] = smk.input.local_dir
if smk.input.get("trial_list"):
    cfg["trial_list"] = smk.input.trial_list
root = resolve_root(name, cfg, smk.input.get("receipt"))
log.info("ingesting %s from %s", name, root)
written = ingest(name, root, Path(smk.output.manifest).parent, cfg,
                 seed=int(smk.params.seed), cache_dir=smk.config["cache_dir"],
                 threads=smk.threads)
for label, path in sorted(written.items()):
    log.info("wrote %s (%s)", path, label)
finish_job(smk)
