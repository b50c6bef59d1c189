"""Combine per-judge Study A metrics; Holm within contrast families; planted table."""

import json

import pandas as pd

from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task
from judgeaudit.study_a import metrics as sa

smk, log = start_job(globals())
metrics = pd.concat([pd.read_csv(p, sep="\t", dtype={"seed": str}) for p in smk.input.metrics],
                    ignore_index=True)
twoway = pd.concat([pd.read_csv(p, sep="\t", dtype={"seed": str}) for p in smk.input.twoway],
                   ignore_index=True)
rows = []
for p in smk.input.contrasts:
    c = pd.read_csv(p, sep="\t")
    rows += c.to_dict("records")
controls = json.loads(smk.params.controls)
# the pre-specified panel-level test of capability dependence joins the contrasts
rows.append(sa.capability_test(sa.capability_table(metrics, controls)))
contrasts = sa.contrasts_table(rows, controls=controls)
planted = sa.planted_table(metrics, json.loads(smk.params.planted),
                           json.loads(smk.params.design))
# every row names its corpus (carried from the per-judge metrics)
corpora = corpus_by_task(metrics, "study A metrics")
panel = contrasts["family"] == "capability_dependence"  # spans tasks: names all corpora
contrasts = pd.concat([attach_corpus(contrasts[~panel], corpora, "study A contrasts"),
                       contrasts[panel].assign(corpus=[
                           "+".join(corpora.get(t, "-") for t in str(task).split("+"))
                           for task in contrasts.loc[panel, "task"]])],
                      ignore_index=True)
planted = attach_corpus(planted, corpora, "study A planted")
# the contrasts of a task whose speakers read the same sentences are conditional on them
# too: the count the per-judge metrics carry (stats.corpus.sentences_by_task)
if "n_sentences" in metrics.columns:
    k = metrics.dropna(subset=["n_sentences"]).groupby("task")["n_sentences"].first()
    contrasts["n_sentences"] = contrasts["task"].astype(str).map(k)
write_tsv_atomic(smk.output.metrics, metrics)
write_tsv_atomic(smk.output.contrasts, contrasts)
write_tsv_atomic(smk.output.planted, planted)
write_tsv_atomic(smk.output.twoway, twoway)
if len(planted):
    nz = planted[planted["counted"]]
    log.info("nonzero planted rates inside their 95%% CI: %d / %d (%d planted-0 rows apart)",
             int(nz["inside"].sum()), len(nz), len(planted) - len(nz))
finish_job(smk)
