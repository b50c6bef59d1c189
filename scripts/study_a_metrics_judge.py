"""Study A metrics and contrasts of one judge. Thin: the study's recipe
(judgeaudit.study_a.recipes -> judgeaudit.study_a.compute.judge_metrics)."""

from judgeaudit.io import read_jsonl, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats.corpus import (
    attach_corpus,
    corpus_by_task,
    read_manifests,
    sentences_by_task,
)
from judgeaudit.study_a.recipes import RECIPE

smk, log = start_job(globals())
recipe = RECIPE
params = {"judge": smk.params.judge, "n_boot": int(smk.params.n_boot)}
trials = [t for path in smk.input.trials for t in read_jsonl(path)]
responses = [r for path in smk.input.responses for r in read_jsonl(path)]
# the corpus manifests: each clip's sentence (the two-way interval) and the number of
# sentences a task's speakers read (the captions' population; issue 32)
manifests = read_manifests(smk.input.manifests)
inputs = recipe.load(trials, responses, params, manifests=manifests)
outputs = recipe.compute(inputs, params)
# every row names the corpus its trials came from (facts.corpus)
corpora = corpus_by_task(trials, "study A trials")
sentences = sentences_by_task(trials, manifests)
for name in recipe.outputs:
    out = attach_corpus(outputs[name], corpora, f"study A {name}")
    if name == "metrics" and sentences:
        out["n_sentences"] = out["task"].astype(str).map(sentences)
    write_tsv_atomic(smk.output[name], out)
df = inputs["df"]
log.info("judge %s: %d trials, %d invalid, %d metric rows, %d contrasts, %d two-way rows",
         smk.params.judge, len(df), int((~df["valid"]).sum()) if len(df) else 0,
         len(outputs["metrics"]), len(outputs["contrasts"]), len(outputs["twoway"]))
finish_job(smk)
