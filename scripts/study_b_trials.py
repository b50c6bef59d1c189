"""Study B trials of one (task, shard). Thin: see judgeaudit.conditions.study_b.protocols."""

from judgeaudit import logs
from judgeaudit.conditions.corpus import tag_corpus
from judgeaudit.conditions.study_b.build import trials_for
from judgeaudit.io import write_jsonl_atomic
from judgeaudit.provenance import record_snakemake_job

smk = snakemake  # noqa: F821
log = logs.setup(smk.log[0])
templates = {"system": smk.input.system, smk.params.kind: smk.input.template}
cue = smk.input.cue[0] if len(smk.input.cue) else None
trials = trials_for(smk.input.item_file, smk.input.renderings, smk.wildcards.shard, templates, cue,
                    smk.params.trajectory)
trials = tag_corpus(trials, smk.params.corpus)
write_jsonl_atomic(smk.output[0], trials)
log.info("study B %s/%s: %d trials", smk.wildcards.task, smk.wildcards.shard, len(trials))
record_snakemake_job(smk, extra={"n_trials": len(trials)})
