"""Rule script: build a derived real corpus (real_degraded: clean clips of a real
corpus and degraded copies) into data/<name>/, then validate its manifest."""

import json
from pathlib import Path

from judgeaudit.datasets.real.base import validate
from judgeaudit.datasets.real.degraded import DATASET, build
from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
out = Path(smk.output.manifest).parent
tables = build(smk.input.base, cfg, out, seed=int(smk.params.seed),
               degradations=cfg["degradations"])
for name, frame in sorted(tables.items()):
    write_tsv_atomic(out / name, frame)
    log.info("wrote %s (%d rows)", out / name, len(frame))
validate(smk.output.manifest, DATASET)
log.info("%s from %s: %d clips, validated", DATASET, cfg["base"],
         len(tables["manifest.tsv"]))
finish_job(smk)
