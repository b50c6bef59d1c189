"""Rule script: fetch and verify one real corpus (datasets.<name>.source=download)."""

import json

from judgeaudit import logs
from judgeaudit.datasets.real import prepare_download
from judgeaudit.io import write_json_atomic
from judgeaudit.provenance import record_snakemake_job

snakemake = globals()["snakemake"]
log = logs.setup(snakemake.log[0])
cfg = json.loads(snakemake.params.cfg)
dl = json.loads(snakemake.params.download)
name = snakemake.params.dataset
if snakemake.input.get("archives"):
    cfg["archives"] = list(snakemake.input.archives)
receipt = prepare_download(name, cfg, snakemake.config["cache_dir"], download_cfg=dl,
                           pins=dl.get("pins_file") or None, seed=int(snakemake.params.seed))
log.info("%s: %d file(s) verified; root %s", name, len(receipt["files"]), receipt["root"])
write_json_atomic(snakemake.output.receipt, receipt)
record_snakemake_job(snakemake, extra={"files": receipt["files"]})
