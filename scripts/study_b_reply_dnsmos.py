"""DNSMOS of one shard of the Study B reply clips (judgeaudit.study_b.reply_dnsmos)."""

import json

from judgeaudit.io import write_text_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b.reply_dnsmos import read_plan, score_shard

smk, log = start_job(globals())
shard = int(smk.wildcards.clip_shard)
scores = score_shard(read_plan(smk.input.plan), shard)
write_text_atomic(smk.output[0], json.dumps(scores, indent=0, sort_keys=True) + "\n")
log.info("study B reply DNSMOS shard %d: %d clips", shard, len(scores))
finish_job(smk, extra={"clips": len(scores)})
