"""Study B audit items of one task. Thin: see judgeaudit.study_b.build."""

import json

from judgeaudit.io import write_jsonl_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b.build import build_items

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
items = build_items(smk.wildcards.task, cfg, int(smk.params.seed), smk.input.bank,
                    smk.input.table)
write_jsonl_atomic(smk.output[0], items)
log.info("study B %s: %d items", smk.wildcards.task, len(items))
finish_job(smk, extra={"n_items": len(items)})
