"""Study B trials of one (task, shard). Thin: see judgeaudit.study_b.protocols."""

from judgeaudit.conditions.corpus import tag_corpus
from judgeaudit.io import write_jsonl_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b.build import trials_for

smk, log = start_job(globals())
templates = {"system": smk.input.system, smk.params.kind: smk.input.template}
cue = smk.input.cue[0] if len(smk.input.cue) else None
trials = trials_for(smk.input.item_file, smk.input.renderings, smk.wildcards.shard, templates, cue,
                    smk.params.trajectory)
trials = tag_corpus(trials, smk.params.corpus)
write_jsonl_atomic(smk.output[0], trials)
log.info("study B %s/%s: %d trials", smk.wildcards.task, smk.wildcards.shard, len(trials))
finish_job(smk, extra={"n_trials": len(trials)})
