"""Study A metrics and contrasts of one judge. Thin: see judgeaudit.stats.study_a."""

import pandas as pd

from judgeaudit.io import read_jsonl, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats import study_a as sa
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task
from judgeaudit.stats.outcomes import add_outcome_counts

smk, log = start_job(globals())
trials = [t for path in smk.input.trials for t in read_jsonl(path)]
responses = [r for path in smk.input.responses for r in read_jsonl(path)]
df = sa.join(trials, responses, smk.params.judge)
metrics = add_outcome_counts(sa.metrics(df, n_boot=int(smk.params.n_boot)), df)
contrasts = pd.DataFrame(sa.contrast_rows(df), columns=sa.CONTRAST_COLUMNS)
# every row names the corpus its trials came from (facts.corpus)
corpora = corpus_by_task(trials, "study A trials")
metrics = attach_corpus(metrics, corpora, "study A metrics")
contrasts = attach_corpus(contrasts, corpora, "study A contrasts")
write_tsv_atomic(smk.output.metrics, metrics)
write_tsv_atomic(smk.output.contrasts, contrasts)
log.info("judge %s: %d trials, %d invalid, %d metric rows, %d contrasts", smk.params.judge,
         len(df), int((~df["valid"]).sum()) if len(df) else 0, len(metrics), len(contrasts))
finish_job(smk)
