"""Study B reply quality per item x reply (lexical measures, DNSMOS when spoken)."""

from judgeaudit.conditions.study_b.build import reply_quality
from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
frame = reply_quality(smk.input.item_file, bool(smk.params.speak), 16000, int(smk.params.seed))
write_tsv_atomic(smk.output[0], frame)
log.info("study B %s: quality of %d replies", smk.wildcards.task, len(frame))
finish_job(smk)
