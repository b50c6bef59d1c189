"""Rule script: fetch and verify one real corpus (datasets.<name>.source=download)."""

import json

from judgeaudit.datasets.real import prepare_download
from judgeaudit.io import write_json_atomic
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
dl = json.loads(smk.params.download)
name = smk.params.dataset
if smk.input.get("archives"):
    cfg["archives"] = list(smk.input.archives)
receipt = prepare_download(name, cfg, smk.config["cache_dir"], download_cfg=dl,
                           pins=dl.get("pins_file") or None, seed=int(smk.params.seed))
log.info("%s: %d file(s) verified; root %s", name, len(receipt["files"]), receipt["root"])
write_json_atomic(smk.output.receipt, receipt)
finish_job(smk, extra={"files": receipt["files"]})
