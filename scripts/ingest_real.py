"""Rule script: ingest one real corpus in its official layout into data/<name>/."""

import json
from pathlib import Path

from judgeaudit import logs
from judgeaudit.datasets.real import ingest, resolve_root
from judgeaudit.provenance import record_snakemake_job

snakemake = globals()["snakemake"]
log = logs.setup(snakemake.log[0])
name = snakemake.params.dataset
cfg = json.loads(snakemake.params.cfg)
if snakemake.input.get("local_dir"):
    cfg["local_dir"] = snakemake.input.local_dir
if snakemake.input.get("trial_list"):
    cfg["trial_list"] = snakemake.input.trial_list
root = resolve_root(name, cfg, snakemake.input.get("receipt"))
log.info("ingesting %s from %s", name, root)
written = ingest(name, root, Path(snakemake.output.manifest).parent, cfg,
                 seed=int(snakemake.params.seed), cache_dir=snakemake.config["cache_dir"],
                 threads=snakemake.threads)
for label, path in sorted(written.items()):
    log.info("wrote %s (%s)", path, label)
record_snakemake_job(snakemake)
