"""Score one judge's responses to one Study B trial shard (one row per trial)."""

from judgeaudit.io import read_jsonl, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task
from judgeaudit.stats.study_b import score_trials

smk, log = start_job(globals())
w = smk.wildcards
trials = list(read_jsonl(smk.input.trials))
scored = score_trials(trials, read_jsonl(smk.input.responses), w.judge,
                      w.shard, what=smk.input.responses)
# every row names the corpus its item came from (facts.corpus)
scored = attach_corpus(scored, corpus_by_task(trials, smk.input.trials), smk.input.trials)
write_tsv_atomic(smk.output[0], scored)
log.info("study B %s %s/%s: %d trials, %d valid", w.judge, w.task, w.shard, len(scored),
         int(scored["valid"].sum()))
finish_job(smk)
