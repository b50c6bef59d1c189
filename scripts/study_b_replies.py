"""Study B reply quality per item x reply (lexical measures, DNSMOS when spoken)."""

from judgeaudit import logs
from judgeaudit.conditions.study_b.build import reply_quality
from judgeaudit.io import write_tsv_atomic
from judgeaudit.provenance import record_snakemake_job

smk = snakemake  # noqa: F821
log = logs.setup(smk.log[0])
frame = reply_quality(smk.input.item_file, bool(smk.params.speak), 16000, int(smk.params.seed))
write_tsv_atomic(smk.output[0], frame)
log.info("study B %s: quality of %d replies", smk.wildcards.task, len(frame))
record_snakemake_job(smk)
