"""Study B reply audio: every reply of every task rendered once, each distinct clip
assigned to a DNSMOS shard by its window count (judgeaudit.study_b.reply_dnsmos)."""

import json

from judgeaudit.io import write_text_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b.reply_dnsmos import plan_clips

smk, log = start_job(globals())
items = dict(zip(smk.params.tasks, smk.input.item_files, strict=True))
plan = plan_clips(items, int(smk.params.seed), int(smk.params.n_voices), int(smk.params.n_shards))
write_text_atomic(smk.output[0], json.dumps(plan, indent=0, sort_keys=True) + "\n")
n_rep = sum(len(v) for v in plan["replies"].values())
log.info("study B replies: %d replies, %d distinct clips, %d DNSMOS windows in %d shards",
         n_rep, len(plan["clips"]), sum(c["n_windows"] for c in plan["clips"]), plan["n_shards"])
finish_job(smk, extra={"replies": n_rep, "clips": len(plan["clips"])})
